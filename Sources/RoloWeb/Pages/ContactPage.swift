import Contacts
import Foundation
import RoloStore
import VCard

/// A stored card read for a page.
struct LoadedCard: Sendable {
    var name: String
    var etag: String
    var data: Data
    var card: VCard

    var contact: Contact { Contact(vCard: card) }
}

extension WebApp {
    func loadCard(_ book: BookContext, name: String) async throws -> LoadedCard {
        guard let resource = try await store.resource(collectionID: book.id, name: name) else { throw WebError.notFound }
        let bytes = [UInt8](resource.data)
        let cards = (try? VCardParser.parse(bytes)) ?? (try? VCardParser.parse(bytes, mode: .lenient)) ?? []
        guard let card = cards.first else {
            throw WebError.badRequest("This card cannot be read as a vCard.")
        }
        return LoadedCard(name: name, etag: resource.info.etag, data: resource.data, card: card)
    }

    /// `GET /web/b/{book}/c/{name}`: the list with the contact beside it.
    func contactPage(_ context: PageContext, name: String) async throws -> WebResponse {
        let book = try context.currentBook
        let state = ListState(context.request)
        let loaded = try await loadCard(book, name: name)
        context.tally.read(1)
        let contactModel = try await self.contactModel(context, loaded: loaded)
        var model = try await bookPageModel(context, state: state, selected: name,
                                            title: contactModel["displayName"] as? String ?? "Contact",
                                            flash: flash(context.request))
        model["hasDetail"] = true
        model["contact"] = contactModel
        return .html(renderer.render("book", model))
    }

    func contactModel(_ context: PageContext, loaded: LoadedCard) async throws -> [String: Any] {
        let book = try context.currentBook
        let contact = loaded.contact
        let displayName = Self.displayName(contact)
        let hasPhoto = contact.image.map { ImageSniffer.mediaType(of: $0.data) != nil } ?? false
        let hasRemotePhoto = contact.image == nil && loaded.card.first("PHOTO") != nil
        // Groups: the group cards that list this card, and its categories.
        var groups: [[String: Any]] = []
        if let uid = contact.identifier {
            let groupNames = try await store.groups(collectionID: book.id, containingUID: uid)
            let listings = try await store.cardListings(collectionID: book.id, names: groupNames)
            groups = listings.map { ["name": $0.fields.displayName, "href": URLs.book(base, book.slug, query: [("group", $0.name)])] }
        }
        groups += contact.categories.map { ["name": $0, "href": URLs.book(base, book.slug, query: [("category", $0)])] }
        var members: [[String: Any]] = []
        if contact.kind == .group {
            let page = try await store.cardListings(collectionID: book.id, filter: .groupMembers(name: loaded.name), search: [],
                                                    from: .first, limit: 100)
            members = page.rows.map { ["name": $0.fields.displayName, "href": URLs.card(base, book.slug, $0.name)] }
        }
        let fields = Self.fields(contact, card: loaded.card)
        let history = try await historyModel(context, name: loaded.name)
        var subtitle = [contact.jobTitle, contact.departmentName, contact.organizationName].filter { !$0.isEmpty }
        if contact.kind == .organization { subtitle.removeAll { $0 == contact.organizationName } }
        return [
            "name": loaded.name, "etag": loaded.etag, "displayName": displayName,
            "initials": Formatting.initials(displayName),
            "photoURL": hasPhoto ? photoURL(book: book, name: loaded.name, etag: loaded.etag) : false,
            "hasRemotePhoto": hasRemotePhoto,
            "subtitle": subtitle.isEmpty ? false : subtitle.joined(separator: ", "),
            "isGroup": contact.kind == .group,
            "actions": book.canWrite ? [
                "editURL": URLs.card(base, book.slug, loaded.name, "edit", query: ListState(context.request).pageParameters),
                "groupsURL": URLs.card(base, book.slug, loaded.name, "groups"),
                "deleteURL": URLs.card(base, book.slug, loaded.name, "delete"),
                "exportURL": URLs.bookPage(base, book.slug, "export", query: [("c", loaded.name)]),
            ] as [String: Any] : false,
            "readOnly": book.canWrite ? false : "shared by \(book.sharedBy ?? "another user")",
            "fields": fields, "hasFields": !fields.isEmpty,
            "groups": groups, "hasGroups": !groups.isEmpty,
            "members": members, "hasMembers": !members.isEmpty,
            "history": history ?? false,
        ]
    }

    static func displayName(_ contact: Contact) -> String {
        let name = (contact.formattedName ?? "").trimmingCharacters(in: .whitespaces)
        if !name.isEmpty { return name }
        let derived = contact.displayName
        if !derived.isEmpty { return derived }
        return contact.emailAddresses.first?.value ?? contact.phoneNumbers.first?.value ?? "(no name)"
    }

    /// Every field of the card as rows of label, value and (for safe schemes only) a link.
    static func fields(_ contact: Contact, card: VCard) -> [[String: Any]] {
        var rows: [[String: Any]] = []
        func add(_ label: String, _ value: String, href: String? = nil, preferred: Bool = false) {
            guard !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return }
            rows.append(["label": label, "value": value, "href": href ?? false, "preferred": preferred])
        }
        if !contact.nickname.isEmpty { add("Nickname", contact.nickname) }
        let phonetic = [contact.phoneticGivenName, contact.phoneticMiddleName, contact.phoneticFamilyName].filter { !$0.isEmpty }
        if !phonetic.isEmpty { add("Pronunciation", phonetic.joined(separator: " ")) }
        for phone in contact.phoneNumbers {
            add(Formatting.label(phone.label, default: "Phone"), phone.value.hasPrefix("tel:") ? String(phone.value.dropFirst(4)) : phone.value,
                href: SafeLink.tel(phone.value), preferred: phone.isPreferred)
        }
        for email in contact.emailAddresses {
            add(Formatting.label(email.label, default: "E-mail"), email.value, href: SafeLink.mailto(email.value), preferred: email.isPreferred)
        }
        for url in contact.urlAddresses {
            add(Formatting.label(url.label, default: "Web"), url.value, href: SafeLink.web(url.value), preferred: url.isPreferred)
        }
        for address in contact.postalAddresses {
            let value = address.value
            let cityLine = [value.postalCode, value.locality].filter { !$0.isEmpty }.joined(separator: " ")
            let lines = [value.poBox, value.extended, value.street, cityLine, value.region, value.country].filter { !$0.isEmpty }
            add(Formatting.label(address.label, default: "Address"), lines.joined(separator: "\n"), preferred: address.isPreferred)
        }
        if let birthday = contact.birthday { add("Birthday", Formatting.date(birthday)) }
        for date in contact.dates { add(Formatting.label(date.label, default: "Date"), Formatting.date(date.value)) }
        for related in contact.relatedNames { add(Formatting.label(related.label, default: "Related"), related.value) }
        for message in contact.instantMessageAddresses {
            let service = message.value.service.isEmpty ? "Messaging" : message.value.service.capitalized
            add(message.label.map { Formatting.label($0, default: service) + " (\(service))" } ?? service, message.value.uri,
                href: SafeLink.href(message.value.uri))
        }
        for profile in contact.socialProfiles {
            let service = profile.value.service?.capitalized ?? "Profile"
            let shown = profile.value.username ?? profile.value.urlString
            add(service, shown, href: SafeLink.href(profile.value.urlString))
        }
        if let note = contact.note { add("Note", note) }
        for property in contact.unmappedProperties where !Self.hiddenProperties.contains(property.name) {
            guard property.parameter("ENCODING") == nil, !property.rawValue.lowercased().hasPrefix("data:") else { continue }
            if property.name == "X-ABLABEL" || property.name == "X-ABADR" { continue }
            add(Self.propertyLabel(property.name), property.text)
        }
        return rows
    }

    /// Properties that say nothing a person reads (identifiers, versions, client bookkeeping).
    static let hiddenProperties: Set<String> = [
        "VERSION", "PRODID", "REV", "UID", "CLIENTPIDMAP", "KIND", "X-ADDRESSBOOKSERVER-KIND", "X-ABSHOWAS", "X-ABUID",
        "SOURCE", "N", "FN", "PHOTO", "LOGO", "SOUND", "KEY", "MEMBER", "X-ADDRESSBOOKSERVER-MEMBER", "CATEGORIES",
        "X-IMAGETYPE", "X-IMAGEHASH", "X-SHAREDPHOTODISPLAYPREF", "X-EVOLUTION-FILE-AS",
    ]

    static func propertyLabel(_ name: String) -> String {
        let known = ["GENDER": "Gender", "LANG": "Language", "TZ": "Time zone", "GEO": "Location", "ROLE": "Role",
                     "TITLE": "Job title", "ORG": "Organisation", "CALURI": "Calendar", "FBURL": "Free/busy",
                     "X-MAIDENNAME": "Maiden name", "SORT-STRING": "Sort as", "MAILER": "Mailer", "LABEL": "Address label"]
        if let label = known[name] { return label }
        let stripped = name.hasPrefix("X-") ? String(name.dropFirst(2)) : name
        return stripped.replacingOccurrences(of: "-", with: " ").capitalized
    }

    // MARK: Photo

    /// `GET …/c/{name}/photo?v={etag}`: the card's inline photo, only when its bytes are a
    /// JPEG, PNG, GIF or WebP (never SVG, never a remote URI fetched).
    func photo(_ context: PageContext, name: String) async throws -> WebResponse {
        let book = try context.currentBook
        let loaded = try await loadCard(book, name: name)
        guard let image = Contact(vCard: loaded.card).image, let type = ImageSniffer.mediaType(of: image.data) else {
            throw WebError.notFound
        }
        let etag = "\"photo-" + loaded.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) + "\""
        if context.request.header("if-none-match") == etag {
            return WebResponse(status: 304, headers: [("ETag", etag), ("Cache-Control", "private, max-age=86400")])
        }
        return WebResponse(status: 200, headers: [
            ("Content-Type", type), ("ETag", etag), ("Content-Disposition", "inline"),
            ("Cache-Control", "private, max-age=86400"),
        ], body: .bytes(Data(image.data)))
    }

    // MARK: Delete

    /// `POST …/c/{name}/delete`: into the trash (a delete to every phone), with the ETag the
    /// page showed; the list then offers to undo it.
    func deleteContact(_ context: PageContext, name: String) async throws -> WebResponse {
        let book = try context.currentBook
        guard let etag = context.form["etag"], !etag.isEmpty else { throw WebError.badRequest("The form has no ETag.") }
        do {
            let result = try await writeCards(context, book, [.trash(name: name, precondition: .ifMatch([etag]), reason: .deleted)])
            return .redirect(URLs.book(base, book.slug, query: [("done", "deleted"), ("batch", result.batch)]))
        } catch StoreError.preconditionFailed {
            throw WebError.badRequest("This contact was changed on another device since you opened it; it was not deleted. Open it again to see the change.")
        } catch StoreError.notFound {
            throw WebError.notFound
        }
    }
}
