import Foundation
import RoloStore

/// Which part of a book's list a page shows, from its query string: `q` (search), `group`
/// (a group card's name), `category`, `letter`, and a cursor `after` or `before`.
struct ListState: Sendable {
    var q = ""
    var group: String?
    var category: String?
    var letter: String?
    var after: ListingCursor?
    var before: ListingCursor?

    static let pageSize = 50
    static let countCap = 1000

    init(_ request: WebRequest) {
        q = String((request.query("q") ?? "").prefix(200))
        group = request.query("group").flatMap { $0.isEmpty ? nil : $0 }
        category = request.query("category").flatMap { $0.isEmpty ? nil : $0 }
        letter = request.query("letter").flatMap { value in
            value.count == 1 ? value.lowercased() : nil
        }
        after = ListCursorCoding.decode(request.query("after"))
        before = after == nil ? ListCursorCoding.decode(request.query("before")) : nil
    }

    var filter: ListingFilter {
        if let group { return .groupMembers(name: group) }
        if let category { return .category(category) }
        return .contacts
    }

    var position: ListingPosition {
        if let after { return .after(after) }
        if let before { return .before(before) }
        if let letter { return .after(ListingCursor(sortKey: letter == "#" ? "" : letter, name: "")) }
        return .first
    }

    /// The parameters that choose the filter and search (not the position).
    var filterParameters: [(String, String)] {
        [("q", q), ("group", group ?? ""), ("category", category ?? "")]
    }

    /// The parameters that reproduce this page (a contact link carries them, so the list
    /// beside the contact stays where it was).
    var pageParameters: [(String, String)] {
        filterParameters + [("letter", after == nil && before == nil ? letter ?? "" : ""),
                            ("after", after.map(ListCursorCoding.encode) ?? ""),
                            ("before", before.map(ListCursorCoding.encode) ?? "")]
    }
}

extension WebApp {
    static let letters = ["#"] + "abcdefghijklmnopqrstuvwxyz".map { String($0) }

    /// The list beside a book's pages: one page of rows from the store's listing index
    /// (never a card parsed), its count capped at 1 000, Prev/Next cursors, letters.
    func listModel(_ context: PageContext, state: ListState, selected: String? = nil) async throws -> [String: Any] {
        let book = try context.currentBook
        let search = CardListingFields.searchWords(state.q)
        async let page = store.cardListings(collectionID: book.id, filter: state.filter, search: search,
                                            from: state.position, limit: ListState.pageSize)
        async let count = store.cardCount(collectionID: book.id, filter: state.filter, search: search, cap: ListState.countCap)
        let (rows, total) = try await (page, count)
        context.tally.read(rows.rows.count)
        let pageQuery = state.pageParameters
        var title = "All contacts"
        if let group = state.group {
            title = try await store.cardListings(collectionID: book.id, names: [group]).first?.fields.displayName ?? "Group"
        } else if let category = state.category {
            title = category
        }
        if !state.q.isEmpty { title = "Search: " + state.q }
        let rowModels = rows.rows.enumerated().map { index, row -> [String: Any] in
            let fields = row.fields
            let secondary = fields.organization ?? fields.email ?? fields.phone
            return [
                "id": index, "name": row.name, "displayName": fields.displayName.isEmpty ? "(no name)" : fields.displayName,
                "href": URLs.card(base, book.slug, row.name, query: pageQuery),
                "initials": Formatting.initials(fields.displayName),
                "secondary": secondary ?? false,
                "photoURL": fields.hasPhoto ? photoURL(book: book, name: row.name, etag: row.etag) : false,
                "current": row.name == selected,
            ]
        }
        let letters = Self.letters.map { letter -> [String: Any] in
            ["label": letter == "#" ? "#" : letter.uppercased(),
             "href": URLs.book(base, book.slug, query: state.filterParameters + [("letter", letter)]),
             "current": state.letter == letter && state.after == nil && state.before == nil]
        }
        var emptyText = "No contacts yet."
        if !state.q.isEmpty { emptyText = "No contact matches “\(state.q)”." }
        else if state.group != nil || state.category != nil { emptyText = "Nobody in this group." }
        else if state.letter != nil { emptyText = "No contacts from this letter on." }
        return [
            "title": title,
            "countText": Formatting.count(total, cap: ListState.countCap),
            "rows": rowModels,
            "hasRows": !rowModels.isEmpty,
            "emptyText": emptyText,
            "letters": letters,
            "previousURL": rows.previous.map { URLs.book(base, book.slug, query: state.filterParameters + [("before", ListCursorCoding.encode($0))]) } ?? false,
            "nextURL": rows.next.map { URLs.book(base, book.slug, query: state.filterParameters + [("after", ListCursorCoding.encode($0))]) } ?? false,
        ]
    }

    func photoURL(book: BookContext, name: String, etag: String) -> String {
        URLs.card(base, book.slug, name, "photo", query: [("v", etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")))])
    }

    /// The model of a book page: layout, side bar, list, search box.
    func bookPageModel(_ context: PageContext, state: ListState, selected: String?, title: String,
                       flash: [String: Any]? = nil) async throws -> [String: Any] {
        let book = try context.currentBook
        async let nav = navModel(context, group: state.group, category: state.category)
        async let list = listModel(context, state: state, selected: selected)
        var model = context.layout(title: title, flash: flash)
        for (key, value) in try await nav { model[key] = value }
        model["list"] = try await list
        model["search"] = [
            "action": URLs.book(base, book.slug), "q": state.q,
            "group": state.group ?? false, "category": state.category ?? false,
        ] as [String: Any]
        model["listURL"] = URLs.book(base, book.slug, query: state.pageParameters)
        model["contact"] = false
        model["editor"] = false
        model["membership"] = false
        return model
    }

    /// `GET /web/b/{book}/`: the list; with `X-Requested-With`, the list pane alone.
    func listPage(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        let state = ListState(context.request)
        let model = try await bookPageModel(context, state: state, selected: nil, title: book.displayName,
                                            flash: flash(context.request))
        if context.request.wantsFragment {
            return .html(renderer.render("list", model))
        }
        var response = WebResponse.html(renderer.render("book", model))
        let secure = context.request.isSecure
        response.headers.append(("Set-Cookie", Cookies.setCookie(name: Cookies.lastBookName(secure: secure), value: URLs.segment(book.slug),
                                                                  secure: secure, maxAge: 365 * 86_400)))
        return response
    }

    /// A notice carried in the query string after a redirect (`?done=saved`), with an undo
    /// button for a delete or a merge (`&batch=…`).
    func flash(_ request: WebRequest) -> [String: Any]? {
        guard let done = request.query("done") else { return nil }
        let texts = [
            "saved": "Saved.", "created": "Contact created.", "deleted": "Contact deleted: it is in the trash for 30 days.",
            "merged": "Contacts merged.", "restored": "Restored.",
            "version-restored": "This version was restored as a new change: your devices get it at their next sync.",
            "changes-undone": "Undone: the cards are back as they were; your devices get them at their next sync.", "undone": "Undone.", "groups": "Groups saved.",
            "token-revoked": "App password revoked.", "shared": "Shared.", "share-removed": "Share removed.",
            "accepted": "Share accepted: the book is now in your list.", "user-created": "User created.",
            "password-set": "Password set; the user's sessions were ended.", "disabled": "User disabled.",
            "enabled": "User enabled.", "user-deleted": "User deleted.",
            "password-changed": "Password changed: other browsers signed in as you were signed out.",
            "directory-saved": "Your directory card is saved; colleagues' devices get it at their next sync.",
            "book-created": "Address book created.", "book-renamed": "Address book renamed.",
            "book-deleted": "Address book deleted.", "left": "You left the shared book; its owner keeps it.",
        ]
        guard let text = texts[done] else { return nil }
        var model: [String: Any] = ["text": text, "kind": "ok", "undo": false]
        if let batch = request.query("batch"), (done == "deleted" || done == "merged"), let slug = context(of: request) {
            model["undo"] = ["action": URLs.bookPage(base, slug, "undo"), "batch": batch]
        }
        return model
    }

    /// The book slug of a `/web/b/{slug}/…` path.
    private func context(of request: WebRequest) -> String? {
        let parts = request.path.split(separator: "/").map(String.init)
        guard parts.count >= 3, parts[1] == "b" else { return nil }
        return parts[2]
    }
}
