import CardIndexing
import Contacts
import Foundation
import RoloStore
import VCard

extension WebApp {
    /// `GET …/c/{name}/groups`: the book's group cards (checked where this card is a
    /// member) and the card's categories, the two ways clients keep groups.
    func membershipPage(_ context: PageContext, name: String, error: String? = nil) async throws -> WebResponse {
        let book = try context.currentBook
        let loaded = try await loadCard(book, name: name)
        let contact = loaded.contact
        let uid = contact.identifier ?? ""
        let memberOf = Set(uid.isEmpty ? [] : try await store.groups(collectionID: book.id, containingUID: uid))
        let groups = try await store.cardListings(collectionID: book.id, filter: .groups, search: [], from: .first, limit: 100)
        let state = ListState(context.request)
        var model = try await bookPageModel(context, state: state, selected: name, title: "Groups")
        model["hasDetail"] = true
        model["membership"] = [
            "displayName": Self.displayName(contact), "etag": loaded.etag, "error": error ?? false,
            "action": URLs.card(base, book.slug, name, "groups"), "cancelURL": URLs.card(base, book.slug, name),
            "groupCards": groups.rows.filter { $0.name != name }.map { row -> [String: Any] in
                ["name": row.name, "displayName": row.fields.displayName, "etag": row.etag, "checked": memberOf.contains(row.name)]
            },
            "hasGroupCards": !groups.rows.isEmpty,
            "categories": contact.categories.map { ["name": $0, "checked": true] as [String: Any] },
            "hasCategories": !contact.categories.isEmpty,
        ] as [String: Any]
        return .html(renderer.render("book", model), status: error == nil ? 200 : 409)
    }

    /// `POST …/c/{name}/groups`: group cards that gain or lose the card are each patched
    /// (their MEMBER lines, in the card's own style), the card's CATEGORIES too; all in
    /// one batch with every card's ETag, so nothing is half done.
    func saveMembership(_ context: PageContext, name: String) async throws -> WebResponse {
        let book = try context.currentBook
        let form = context.form
        let loaded = try await loadCard(book, name: name)
        guard form["etag"] == loaded.etag else {
            return try await membershipPage(context, name: name, error: "This contact was changed on another device meanwhile. Check the groups again.")
        }
        guard let uid = loaded.contact.identifier, !uid.isEmpty else { throw WebError.badRequest("This card has no UID.") }
        var writes: [CardBatchWrite] = []
        // Group cards: the etags the page showed, by name.
        var shownETags: [String: String] = [:]
        for value in form.values("group-etag") {
            let parts = value.split(separator: " ", maxSplits: 1).map(String.init)
            if parts.count == 2 { shownETags[parts[0]] = parts[1] }
        }
        let wanted = Set(form.values("group"))
        let current = Set(try await store.groups(collectionID: book.id, containingUID: uid))
        for group in shownETags.keys.sorted() where wanted.contains(group) != current.contains(group) {
            let card = try await loadCard(book, name: group)
            guard card.etag == shownETags[group] else {
                return try await membershipPage(context, name: name, error: "A group was changed on another device meanwhile. Check again.")
            }
            var patch = try CardPatch(data: card.data)
            if wanted.contains(group) { patch.addMember(uid) } else { patch.removeMember(uid) }
            patch.touchRevision(at: store.clock.now)
            let (data, metadata) = try prepare(patch)
            writes.append(.put(name: group, data: data, contentType: Self.vCardType, card: metadata,
                               precondition: .ifMatch([card.etag]), keepPrevious: false))
        }
        // A new group card, in the style the book's group cards use (vCard 4 KIND, else Apple's).
        let newGroup = (form["new-group"] ?? "").trimmingCharacters(in: .whitespaces)
        if !newGroup.isEmpty {
            let groupUID = UUID().uuidString.lowercased()
            let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nPRODID:-//Rolo//Web//EN\r\nX-ADDRESSBOOKSERVER-KIND:group\r\nN:\(Self.escape(newGroup));;;;\r\n"
                + "FN:\(Self.escape(newGroup))\r\nUID:\(groupUID)\r\nX-ADDRESSBOOKSERVER-MEMBER:urn:uuid:\(uid)\r\nEND:VCARD\r\n"
            let patch = try CardPatch(bytes: Array(text.utf8))
            let (data, metadata) = try prepare(patch)
            writes.append(.put(name: groupUID + ".vcf", data: data, contentType: Self.vCardType, card: metadata,
                               precondition: .ifNoneMatchAny, keepPrevious: false))
        }
        // Categories: the ones left checked, plus a new one.
        var categories = form.values("category")
        let added = (form["new-category"] ?? "").trimmingCharacters(in: .whitespaces)
        if !added.isEmpty { categories.append(added) }
        var patch = try CardPatch(data: loaded.data)
        let before = patch.categories
        if Set(before.map { $0.lowercased() }) != Set(categories.map { $0.lowercased() }) {
            patch.setCategories(before.filter { old in categories.contains { $0.lowercased() == old.lowercased() } }
                                + categories.filter { new in !before.contains { $0.lowercased() == new.lowercased() } })
            patch.touchRevision(at: store.clock.now)
            let (data, metadata) = try prepare(patch)
            writes.append(.put(name: name, data: data, contentType: Self.vCardType, card: metadata,
                               precondition: .ifMatch([loaded.etag]), keepPrevious: false))
        }
        if !writes.isEmpty {
            do {
                _ = try await writeCards(context, book, writes)
            } catch StoreError.preconditionFailed {
                return try await membershipPage(context, name: name, error: "A card was changed on another device meanwhile. Check again.")
            }
        }
        return .redirect(URLs.card(base, book.slug, name, query: [("done", "groups")]))
    }

    /// vCard TEXT escaping for a value written into a new card.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case ",": out += "\\,"
            case ";": out += "\\;"
            case "\n", "\r": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
