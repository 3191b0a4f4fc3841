import Authorization
import Foundation
import RoloStore

/// The books themselves, not their cards: a person creates, renames and deletes their own,
/// and leaves one shared with them. Each write asks `Access` as DAV's MKCOL, PROPPATCH and
/// DELETE would: a new or deleted book is a bind or unbind in the user's home, a rename
/// writes the book's properties, leaving is the account action `removeShare`.
extension WebApp {
    /// A display name as a person types it: trimmed, 1-200 characters, no control character.
    static func bookDisplayName(_ text: String?) -> String? {
        let name = (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 200,
              !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return name
    }

    static let bookNameProblem = "Give the book a name of 1 to 200 characters, on one line."

    /// Refuses unless the user may add (`.bind`) or remove (`.unbind`) books in their home.
    func requireHome(_ context: PageContext, _ needed: Privileges) throws {
        guard let held = Access.privileges(on: .home(owner: context.user), for: context.credential), held.isSuperset(of: needed) else {
            throw WebError.forbidden("You cannot change the address books of this account.")
        }
    }

    // MARK: New book

    /// `GET|POST /web/books/new` (`name`).
    func newBookRoute(_ context: PageContext, rest: [String], method: String) async throws -> WebResponse {
        guard rest == ["new"] else { throw WebError.notFound }
        try requireHome(context, .bind)
        if method == "GET" { return try await newBookPage(context) }
        guard let name = Self.bookDisplayName(context.form["name"]) else {
            return try await newBookPage(context, name: context.form["name"] ?? "", error: Self.bookNameProblem, status: 400)
        }
        let slug = try await freeBookSlug(for: name, user: context.user)
        do {
            try await store.createCollection(owner: context.user, path: [slug], kind: .addressBook, displayName: name, description: nil)
        } catch StoreError.invalidName(let reason), StoreError.invalid(let reason) {
            return try await newBookPage(context, name: name, error: "Not created: \(reason).", status: 400)
        }
        return .redirect(URLs.book(base, slug, query: [("done", "book-created")]))
    }

    func newBookPage(_ context: PageContext, name: String = "", error: String? = nil, status: Int = 200) async throws -> WebResponse {
        var model = try await pageModel(context, title: "New address book")
        model["newBook"] = ["name": name, "error": error ?? false] as [String: Any]
        return .html(renderer.render("page", model), status: status)
    }

    /// The name in the URL for a new book: its display name in lower-case ASCII letters and
    /// digits joined by `-` (`Family & Friends` is `family-friends`), `book` when nothing is
    /// left, with `-2`, `-3`… while the user has a collection of that name.
    func freeBookSlug(for displayName: String, user: String) async throws -> String {
        let folded = displayName.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).lowercased()
        var slug = ""
        for character in folded {
            if character.isASCII, character.isLetter || character.isNumber {
                slug.append(character)
            } else if !slug.isEmpty, slug.last != "-" {
                slug.append("-")
            }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        slug = String(slug.prefix(40))
        if slug.isEmpty { slug = "book" }
        var candidate = slug, number = 1
        while try await store.collection(owner: user, path: [candidate]) != nil {
            number += 1
            candidate = slug + "-\(number)"
        }
        return candidate
    }

    // MARK: A book's settings

    /// `GET|POST /web/b/{book}/settings`, `POST …/settings/delete`, `POST …/settings/leave`.
    func bookSettingsRoute(_ context: PageContext, rest: [String], method: String) async throws -> WebResponse {
        let book = try context.currentBook
        switch (method, rest.count > 1 ? rest[1] : nil) {
        case ("GET", nil):
            return try await bookSettingsPage(context)
        case ("POST", nil):
            return try await renameBook(context, book)
        case ("POST", "delete"):
            return try await deleteBook(context, book)
        case ("POST", "leave"):
            return try await leaveBook(context, book)
        default:
            throw WebError.notFound
        }
    }

    func bookSettingsPage(_ context: PageContext, name: String? = nil, error: String? = nil,
                          status: Int = 200) async throws -> WebResponse {
        let book = try context.currentBook
        let settingsURL = URLs.bookPage(base, book.slug, "settings")
        var settings: [String: Any] = [
            "name": name ?? book.displayName, "title": book.displayName, "error": error ?? false,
            "bookURL": URLs.book(base, book.slug), "settingsURL": settingsURL, "own": false, "shared": false,
        ]
        if let owner = book.sharedBy {
            settings["shared"] = ["owner": owner, "readOnly": book.access == .readOnly] as [String: Any]
        } else {
            let count = try await store.cardCount(collectionID: book.id, filter: .contacts, search: [], cap: 1_000_000)
            let sharees = try await store.shares(bookID: book.id).map(\.sharee).sorted()
            let deletable = try await isDeletable(context, book)
            settings["own"] = [
                "canRename": book.privileges.contains(.writeProperties),
                "canDelete": deletable,
                "count": Formatting.count(count, cap: 1_000_000),
                "sharees": sharees.isEmpty ? false : sharees.joined(separator: ", "),
            ] as [String: Any]
        }
        var model = try await pageModel(context, title: "Settings of " + book.displayName)
        model["bookSettings"] = settings
        return .html(renderer.render("page", model), status: status)
    }

    /// Whether the user may delete `book`: their own, with the unbind privilege in their home
    /// and on the book, and not their only book (a device syncing the account, and the web
    /// UI's New contact, always have somewhere to put a card).
    func isDeletable(_ context: PageContext, _ book: BookContext) async throws -> Bool {
        guard book.sharedBy == nil, book.privileges.contains(.unbind),
              Access.privileges(on: .home(owner: context.user), for: context.credential)?.contains(.unbind) == true else { return false }
        return try await books(user: context.user).contains { $0.sharedBy == nil && $0.id != book.id }
    }

    /// `POST …/settings` (`name`): the book's display name; its URL stays.
    func renameBook(_ context: PageContext, _ book: BookContext) async throws -> WebResponse {
        guard book.sharedBy == nil else {
            throw WebError.forbidden("This book belongs to \(book.sharedBy ?? "another user"): only they can rename it.")
        }
        try book.require(.writeProperties)
        guard let name = Self.bookDisplayName(context.form["name"]) else {
            return try await bookSettingsPage(context, name: context.form["name"] ?? "", error: Self.bookNameProblem, status: 400)
        }
        try await store.updateCollection(id: book.id, displayName: .some(name), description: nil)
        return .redirect(URLs.book(base, book.slug, query: [("done", "book-renamed")]))
    }

    /// `POST …/settings/delete` (`confirm=yes`): the book and every card in it, for good.
    func deleteBook(_ context: PageContext, _ book: BookContext) async throws -> WebResponse {
        guard book.sharedBy == nil else {
            throw WebError.forbidden("This book belongs to \(book.sharedBy ?? "another user"): leave it instead.")
        }
        guard try await isDeletable(context, book) else {
            return try await bookSettingsPage(context, error: "This is your only address book: create another before you delete it.",
                                              status: 400)
        }
        guard context.form["confirm"] == "yes" else {
            return try await bookSettingsPage(context, error: "Tick the box to confirm: nothing was deleted.", status: 400)
        }
        try await store.deleteCollection(id: book.id)
        return .redirect(base + "/?done=book-deleted")
    }

    /// `POST …/settings/leave`: the sharee ends a share; the owner keeps the book.
    func leaveBook(_ context: PageContext, _ book: BookContext) async throws -> WebResponse {
        guard let owner = book.sharedBy, let ownersBook = book.info.path.last else {
            throw WebError.badRequest("This book is yours: there is no share to leave.")
        }
        try context.require(.removeShare(owner: owner, sharee: context.user))
        try await store.removeShare(owner: owner, book: ownersBook, sharee: context.user)
        return .redirect(base + "/?done=left")
    }
}
