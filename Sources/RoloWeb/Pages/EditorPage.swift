import CardIndexing
import Contacts
import Foundation
import RoloStore
import VCard

/// The labeled kinds the editor shows, with the labels it offers for each.
struct ValueKind: Sendable {
    var key: String
    var legend: String
    var noun: String
    var valueLabel: String
    var inputType: String
    var labels: [Label]

    static let phone = ValueKind(key: "tel", legend: "Phone numbers", noun: "phone number", valueLabel: "Number", inputType: "tel",
                                 labels: [.mobile, .iPhone, .home, .work, .main, .homeFax, .workFax, .otherFax, .pager, .other])
    static let email = ValueKind(key: "email", legend: "E-mail addresses", noun: "e-mail address", valueLabel: "Address",
                                 inputType: "email", labels: [.home, .work, .other])
    static let url = ValueKind(key: "url", legend: "Web addresses", noun: "web address", valueLabel: "Address", inputType: "url",
                               labels: [.homePage, .home, .work, .other])
    static let address = ValueKind(key: "adr", legend: "Addresses", noun: "address", valueLabel: "Address", inputType: "text",
                                   labels: [.home, .work, .other])
}

/// What the editor form posts, read back into a `CardEdit` (field names in Docs/web-ui.md).
struct EditorForm: Sendable {
    var edit: CardEdit
    var errors: [String]
    /// `add=tel|email|url|adr`: show one more empty row instead of saving.
    var addRow: String?

    init(_ form: FormData) {
        var edit = CardEdit()
        var errors: [String] = []
        func text(_ name: String) -> String { form[name] ?? "" }
        edit.formattedName = text("fn")
        edit.namePrefix = text("prefix"); edit.givenName = text("given"); edit.middleName = text("middle")
        edit.familyName = text("family"); edit.nameSuffix = text("suffix"); edit.nickname = text("nickname")
        edit.organization = text("org"); edit.department = text("department"); edit.jobTitle = text("title")
        edit.note = text("note").replacingOccurrences(of: "\r\n", with: "\n")
        edit.categories = text("categories").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let day = text("bday-day").trimmingCharacters(in: .whitespaces)
        let month = text("bday-month").trimmingCharacters(in: .whitespaces)
        let year = text("bday-year").trimmingCharacters(in: .whitespaces)
        if !(day.isEmpty && month.isEmpty && year.isEmpty) {
            if let d = Int(day), let m = Int(month), (1...31).contains(d), (1...12).contains(m),
               year.isEmpty || (Int(year).map { (1...9999).contains($0) } ?? false) {
                edit.birthday = ContactDate(year: year.isEmpty ? nil : Int(year), month: m, day: d)
            } else {
                errors.append("Birthday: give a day (1–31) and a month (1–12); the year may be left out.")
            }
        }
        func rows(_ kind: String) -> [(ref: Int?, label: Label?, removed: Bool, index: Int)] {
            let refs = form.values(kind + "-ref"), labels = form.values(kind + "-label"), customs = form.values(kind + "-custom")
            let removed = Set(form.values(kind + "-remove").compactMap(Int.init))
            return refs.indices.map { index in
                let code = index < labels.count ? labels[index] : ""
                let custom = (index < customs.count ? customs[index] : "").trimmingCharacters(in: .whitespaces)
                return (Int(refs[index]), EditorForm.label(code: code, custom: custom), removed.contains(index), index)
            }
        }
        for (kind, path) in [("tel", \CardEdit.phones), ("email", \CardEdit.emails), ("url", \CardEdit.urls)] {
            let values = form.values(kind + "-value")
            edit[keyPath: path] = rows(kind).compactMap { row in
                guard !row.removed else { return nil }
                let value = row.index < values.count ? values[row.index] : ""
                guard row.ref != nil || !value.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
                return CardEdit.Value(ref: row.ref, label: row.label, value: value)
            }
        }
        let parts = ["pobox", "extended", "street", "city", "region", "code", "country"].map { form.values("adr-" + $0) }
        edit.addresses = rows("adr").compactMap { row in
            guard !row.removed else { return nil }
            func part(_ number: Int) -> String { row.index < parts[number].count ? parts[number][row.index] : "" }
            let address = PostalAddress(poBox: part(0), extended: part(1), street: part(2).replacingOccurrences(of: "\r\n", with: "\n"),
                                        locality: part(3), region: part(4), postalCode: part(5), country: part(6))
            guard row.ref != nil || address.components.contains(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) else { return nil }
            return CardEdit.Address(ref: row.ref, label: row.label, value: address)
        }
        self.edit = edit
        self.errors = errors
        self.addRow = form["add"].flatMap { ["tel", "email", "url", "adr"].contains($0) ? $0 : nil }
    }

    /// A label from the select (`mobile`, `custom`, empty for none) and the custom text;
    /// custom text wins whenever it is given.
    static func label(code: String, custom: String) -> Label? {
        if !custom.isEmpty { return Label(builtInNamed: custom) ?? builtInByDisplayName(custom) ?? .custom(custom) }
        if code.isEmpty || code == "custom" { return nil }
        return Label(builtInNamed: code)
    }

    /// "Home" typed as a custom label is the built-in home label.
    static func builtInByDisplayName(_ text: String) -> Label? {
        Label.builtIns.first { Formatting.label($0, default: "").lowercased() == text.lowercased() }
    }
}

extension WebApp {
    static let vCardType = "text/vcard; charset=utf-8"

    /// `GET …/c/{name}/edit`.
    func editPage(_ context: PageContext, name: String) async throws -> WebResponse {
        let book = try context.currentBook
        let loaded = try await loadCard(book, name: name)
        let edit = CardEdit(card: loaded.card)
        let list = ListState(context.request).pageParameters
        return try await editorResponse(context, title: "Edit " + Self.displayName(loaded.contact), heading: "Edit contact",
                                        action: URLs.card(base, book.slug, name, "edit", query: list), selected: name, edit: edit,
                                        etag: loaded.etag, baseCard: loaded, cancelURL: URLs.card(base, book.slug, name, query: list))
    }

    /// `GET …/new`.
    func newContactPage(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        var edit = CardEdit()
        edit.phones = [CardEdit.Value(label: .mobile, value: "")]
        edit.emails = [CardEdit.Value(label: .home, value: "")]
        let list = ListState(context.request).pageParameters
        return try await editorResponse(context, title: "New contact", heading: "New contact",
                                        action: URLs.bookPage(base, book.slug, "new", query: list), selected: nil, edit: edit, etag: "",
                                        baseCard: nil, cancelURL: URLs.book(base, book.slug, query: list))
    }

    func editorResponse(_ context: PageContext, title: String, heading: String, action: String, selected: String?,
                        edit: CardEdit, etag: String, baseCard: LoadedCard?, cancelURL: String, errors: [String] = [],
                        conflict: [String: Any]? = nil, status: Int = 200) async throws -> WebResponse {
        let state = ListState(context.request)
        var model = try await bookPageModel(context, state: state, selected: selected, title: title)
        model["hasDetail"] = true
        model["bodyClass"] = "editing"
        var editor = editorModel(edit: edit, heading: heading, action: action, etag: etag, baseCard: baseCard,
                                 cancelURL: cancelURL, errors: errors, conflict: conflict)
        // A round trip (Add phone number, an error) keeps the box as the person left it.
        editor["photoRemove"] = context.form["photo-remove"] == "1"
        model["editor"] = editor
        return .html(renderer.render("book", model), status: status)
    }

    func editorModel(edit: CardEdit, heading: String, action: String, etag: String, baseCard: LoadedCard?,
                     cancelURL: String, errors: [String], conflict: [String: Any]?) -> [String: Any] {
        func rows(_ kind: ValueKind, _ values: [(ref: Int?, label: Label?, fields: [String: Any])]) -> [String: Any] {
            var list = values
            if list.isEmpty { list.append((nil, kind.labels.first, [:])) }
            return [
                "kind": kind.key, "legend": kind.legend, "noun": kind.noun,
                "rows": list.enumerated().map { index, row -> [String: Any] in
                    var model: [String: Any] = [
                        "index": index, "ref": row.ref.map(String.init) ?? "", "kind": kind.key,
                        "valueLabel": kind.valueLabel, "inputType": kind.inputType, "isAddress": kind.key == "adr",
                        "custom": row.label.map { $0.isBuiltIn ? "" : $0.name } ?? "",
                        "options": labelOptions(kind, selected: row.label),
                    ]
                    for (key, value) in row.fields { model[key] = value }
                    return model
                },
            ]
        }
        let kinds: [[String: Any]] = [
            rows(.phone, edit.phones.map { ($0.ref, $0.label, ["value": $0.value]) }),
            rows(.email, edit.emails.map { ($0.ref, $0.label, ["value": $0.value]) }),
            rows(.url, edit.urls.map { ($0.ref, $0.label, ["value": $0.value]) }),
            rows(.address, edit.addresses.map { address in
                let value = address.value
                return (address.ref, address.label, ["pobox": value.poBox, "extended": value.extended, "street": value.street,
                                                     "city": value.locality, "region": value.region, "code": value.postalCode,
                                                     "country": value.country, "value": ""])
            }),
        ]
        let fields: [String: Any] = [
            "formattedName": edit.formattedName, "namePrefix": edit.namePrefix, "givenName": edit.givenName,
            "middleName": edit.middleName, "familyName": edit.familyName, "nameSuffix": edit.nameSuffix,
            "nickname": edit.nickname, "organization": edit.organization, "department": edit.department,
            "jobTitle": edit.jobTitle, "note": edit.note, "categories": edit.categories.joined(separator: ", "),
            "bdayDay": edit.birthday.map { String($0.day) } ?? "", "bdayMonth": edit.birthday.map { String($0.month) } ?? "",
            "bdayYear": edit.birthday?.year.map(String.init) ?? "",
        ]
        return [
            "heading": heading, "action": action, "etag": etag, "cancelURL": cancelURL,
            "base64": baseCard.map { Self.baseField($0.card, data: $0.data) } ?? "",
            // Any PHOTO line: the `base` field keeps the line with its value emptied, so a
            // form shown again after Add phone number still offers to remove the photo.
            "hasPhoto": baseCard.map { $0.card.first("PHOTO") != nil } ?? false,
            "f": fields, "kinds": kinds, "errors": errors, "conflict": conflict ?? false,
        ]
    }

    func labelOptions(_ kind: ValueKind, selected: Label?) -> [[String: Any]] {
        var options: [[String: Any]] = [["value": "", "text": "No label", "selected": selected == nil]]
        for label in kind.labels {
            options.append(["value": label.name, "text": Formatting.label(label, default: label.name), "selected": selected == label])
        }
        let isCustom = selected.map { !kind.labels.contains($0) } ?? false
        if let selected, isCustom, selected.isBuiltIn {
            options.append(["value": selected.name, "text": Formatting.label(selected, default: selected.name), "selected": true])
        }
        options.append(["value": "custom", "text": "Custom…", "selected": isCustom && !(selected?.isBuiltIn ?? false)])
        return options
    }

    /// The editor's `base` field: the card as the form was made from it, photos left out
    /// (their lines kept, values emptied, so property positions stay), for a conflict.
    static func baseField(_ card: VCard, data: Data) -> String {
        var light = card
        for index in light.properties.indices where ["PHOTO", "LOGO", "SOUND", "KEY"].contains(light.properties[index].name) {
            light.properties[index].rawValue = ""
            light.properties[index].parameters = []
        }
        return Tokens.base64URL(Data(VCardWriter.write(light).utf8))
    }

    // MARK: Saving

    /// `POST …/c/{name}/edit`: patches the stored card with what changed, with the ETag
    /// the form carried; a card changed meanwhile gets the conflict page.
    func saveContact(_ context: PageContext, name: String) async throws -> WebResponse {
        let book = try context.currentBook
        let form = context.form
        let posted = EditorForm(form)
        let etag = form["etag"] ?? ""
        let loaded = try await loadCard(book, name: name)
        // The list beside the editor stays as the edit link left it (search, page), through
        // Add phone number and after the save.
        let list = ListState(context.request).pageParameters
        let action = URLs.card(base, book.slug, name, "edit", query: list)
        let cancel = URLs.card(base, book.slug, name, query: list)
        if let add = posted.addRow {
            return try await editorResponse(context, title: "Edit contact", heading: "Edit contact", action: action, selected: name,
                                            edit: Self.addingRow(add, to: posted.edit), etag: etag,
                                            baseCard: Self.baseCard(form) ?? loaded, cancelURL: cancel)
        }
        if !posted.errors.isEmpty {
            return try await editorResponse(context, title: "Edit contact", heading: "Edit contact", action: action, selected: name,
                                            edit: posted.edit, etag: etag, baseCard: Self.baseCard(form) ?? loaded,
                                            cancelURL: cancel, errors: posted.errors, status: 400)
        }
        if etag != loaded.etag {
            return try await conflictResponse(context, name: name, posted: posted.edit, current: loaded, form: form)
        }
        var patch: CardPatch
        do {
            patch = try CardPatch(data: loaded.data)
        } catch {
            throw WebError.badRequest("This card cannot be edited here: \(error.description).")
        }
        patch.apply(posted.edit)
        if let problem = try applyPhoto(form, to: &patch) {
            return try await editorResponse(context, title: "Edit contact", heading: "Edit contact", action: action, selected: name,
                                            edit: posted.edit, etag: etag, baseCard: loaded, cancelURL: cancel,
                                            errors: [problem], status: 400)
        }
        patch.touchRevision(at: store.clock.now)
        guard patch.hasChanges else { return .redirect(cancel) }
        let (data, metadata) = try prepare(patch)
        do {
            try await putCard(context, book, name: name, data: data, card: metadata, precondition: .ifMatch([etag]))
        } catch StoreError.preconditionFailed {
            let current = try await loadCard(book, name: name)
            return try await conflictResponse(context, name: name, posted: posted.edit, current: current, form: form)
        } catch StoreError.uidConflict {
            throw WebError.badRequest("Another card of this book has the same UID.")
        }
        return .redirect(URLs.card(base, book.slug, name, query: list + [("done", "saved")]))
    }

    /// The patched bytes, checked as a PUT would check them, with their index metadata.
    func prepare(_ patch: CardPatch) throws -> (Data, CardMetadata) {
        let bytes = patch.bytes
        guard bytes.count <= configuration.maxCardSize else { throw WebError.tooLarge("The card would be larger than the server takes.") }
        guard let card = try? VCardParser.parse(bytes).first else {
            throw WebError.badRequest("The edited card could not be written as a valid vCard.")
        }
        do {
            try VCardValidator.validate(card, requireUID: false)
        } catch {
            throw WebError.badRequest("The edited card is not valid: \(error.description).")
        }
        return (Data(bytes), CardMetadata(card: card))
    }

    /// Sets or removes the photo as the form asks; returns a problem to show, if any.
    func applyPhoto(_ form: FormData, to patch: inout CardPatch) throws -> String? {
        if form["photo-remove"] == "1" { patch.removePhoto() }
        guard let file = form.file("photo") else { return nil }
        guard let type = ImageSniffer.mediaType(of: file.data) else {
            return "The photo must be a JPEG, PNG, GIF or WebP picture."
        }
        guard file.data.count <= configuration.maxStoredPhotoSize else {
            return "The photo is larger than \(configuration.maxStoredPhotoSize / 1024) KB. Choose a smaller picture (with JavaScript on, the browser makes it smaller)."
        }
        patch.setPhoto(ContactImage(mediaType: type, data: [UInt8](file.data)))
        return nil
    }

    static func addingRow(_ kind: String, to edit: CardEdit) -> CardEdit {
        var edit = edit
        switch kind {
        case "tel": edit.phones.append(CardEdit.Value(label: .mobile, value: ""))
        case "email": edit.emails.append(CardEdit.Value(label: .home, value: ""))
        case "url": edit.urls.append(CardEdit.Value(label: .homePage, value: ""))
        default: edit.addresses.append(CardEdit.Address(label: .home, value: PostalAddress()))
        }
        return edit
    }

    static func baseCard(_ form: FormData) -> LoadedCard? {
        guard let text = form["base"], let data = Tokens.fromBase64URL(text),
              let card = try? VCardParser.parse([UInt8](data)).first else { return nil }
        return LoadedCard(name: "", etag: "", data: data, card: card)
    }

    /// The card changed on another device: the page says so, shows both versions, and
    /// offers the editor again on the saved version with this person's changes made again.
    func conflictResponse(_ context: PageContext, name: String, posted: CardEdit, current: LoadedCard,
                          form: FormData) async throws -> WebResponse {
        let book = try context.currentBook
        let baseCard = Self.baseCard(form)
        let baseEdit = baseCard.map { CardEdit(card: $0.card) } ?? CardEdit(card: current.card)
        let currentEdit = CardEdit(card: current.card)
        let rebased = posted.rebased(from: baseEdit, onto: currentEdit)
        var yours: [[String: Any]] = []
        if let baseCard, var patch = try? CardPatch(data: baseCard.data) {
            patch.apply(posted)
            yours = Self.versionFields(Contact(vCard: patch.card), card: patch.card)
        }
        let saved = Self.versionFields(current.contact, card: current.card)
        let conflict: [String: Any] = [
            "yours": yours, "saved": saved, "discardURL": URLs.card(base, book.slug, name),
            "photoLost": form.file("photo") != nil,
        ]
        let list = ListState(context.request).pageParameters
        return try await editorResponse(context, title: "Changed elsewhere", heading: "Edit contact",
                                        action: URLs.card(base, book.slug, name, "edit", query: list), selected: name, edit: rebased,
                                        etag: current.etag, baseCard: current, cancelURL: URLs.card(base, book.slug, name, query: list),
                                        conflict: conflict, status: 409)
    }

    /// A version of a card as the conflict and merge pages list it: the name, organisation,
    /// department and job title (which the contact view shows in its header, not among the
    /// fields), then every field.
    static func versionFields(_ contact: Contact, card: VCard) -> [[String: Any]] {
        var rows: [[String: Any]] = [["label": "Name", "value": displayName(contact)]]
        for (label, value) in [("Organisation", contact.organizationName), ("Department", contact.departmentName),
                               ("Job title", contact.jobTitle)] where !value.isEmpty {
            rows.append(["label": label, "value": value])
        }
        return rows + fields(contact, card: card)
    }

    // MARK: New contact

    /// `POST …/new`: a new vCard 3.0 card (the version every client reads) made by
    /// patching an empty one, under a new UID.
    func createContact(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        let posted = EditorForm(context.form)
        let list = ListState(context.request).pageParameters
        let action = URLs.bookPage(base, book.slug, "new", query: list)
        let cancel = URLs.book(base, book.slug, query: list)
        if let add = posted.addRow {
            return try await editorResponse(context, title: "New contact", heading: "New contact", action: action, selected: nil,
                                            edit: Self.addingRow(add, to: posted.edit), etag: "", baseCard: nil, cancelURL: cancel)
        }
        var errors = posted.errors
        if posted.edit.derivedFormattedName.isEmpty, posted.edit.formattedName.trimmingCharacters(in: .whitespaces).isEmpty {
            errors.append("Give the contact a name or an organisation.")
        }
        if !errors.isEmpty {
            return try await editorResponse(context, title: "New contact", heading: "New contact", action: action, selected: nil,
                                            edit: posted.edit, etag: "", baseCard: nil, cancelURL: cancel, errors: errors,
                                            status: 400)
        }
        let uid = UUID().uuidString.lowercased()
        let empty = "BEGIN:VCARD\r\nVERSION:3.0\r\nPRODID:-//Rolo//Web//EN\r\nN:;;;;\r\nFN:\r\nUID:\(uid)\r\nEND:VCARD\r\n"
        var patch = try CardPatch(bytes: Array(empty.utf8))
        patch.apply(posted.edit)
        if let problem = try applyPhoto(context.form, to: &patch) {
            return try await editorResponse(context, title: "New contact", heading: "New contact", action: action, selected: nil,
                                            edit: posted.edit, etag: "", baseCard: nil, cancelURL: cancel, errors: [problem],
                                            status: 400)
        }
        patch.touchRevision(at: store.clock.now)
        let (data, metadata) = try prepare(patch)
        let name = uid + ".vcf"
        try await putCard(context, book, name: name, data: data, card: metadata, precondition: .ifNoneMatchAny)
        return .redirect(URLs.card(base, book.slug, name, query: list + [("done", "created")]))
    }
}
