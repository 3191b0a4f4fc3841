import Authorization
import Foundation
import RoloStore

/// A book as the signed-in user reaches it: one of their own, or a share mounted in their
/// home (`<book>~<owner>`), with what they may do there (`Access` decides).
struct BookContext: Sendable {
    var info: CollectionInfo
    /// The book's name in the user's home, as URLs carry it.
    var slug: String
    var displayName: String
    /// What the signed-in user may do in the book: what its pages check and offer.
    var privileges: Privileges
    /// Owner and access, for a shared book.
    var sharedBy: String?
    var access: ShareAccess?

    var id: Int64 { info.id }
    /// Whether the pages offer changes (new, edit, import, trash, merge).
    var canWrite: Bool { privileges.contains(.writeContent) }

    /// Nil when `credential` may not see the book.
    init?(_ info: CollectionInfo, for credential: Credential) {
        guard info.kind == .addressBook, let privileges = Access.privileges(on: info, for: credential) else { return nil }
        self.info = info
        self.privileges = privileges
        if let mount = info.mount {
            slug = mount.name; displayName = mount.displayName; sharedBy = info.owner; access = mount.access
        } else {
            slug = info.path.last ?? ""; displayName = info.displayName ?? slug
        }
    }

    /// Refuses a page that needs more than the user holds here.
    func require(_ needed: Privileges) throws {
        guard privileges.isSuperset(of: needed) else { throw WebError.forbidden("This address book is shared with you read-only.") }
    }
}

extension WebApp {
    func book(slug: String, user: String) async throws -> BookContext? {
        let credential = Credential.accountPassword(user)
        if !slug.contains("~"), let own = try await store.collection(owner: user, path: [slug]), own.kind == .addressBook {
            return BookContext(own, for: credential)
        }
        guard let mounted = try await store.mount(sharee: user, name: slug) else { return nil }
        return BookContext(mounted, for: credential)
    }

    /// The user's own address books, then the shares they accepted, each by the name a
    /// person reads (the display name, folded), not by the name in the URL.
    func books(user: String) async throws -> [BookContext] {
        let credential = Credential.accountPassword(user)
        let own = try await store.childCollections(owner: user, parentPath: []).compactMap { BookContext($0, for: credential) }
        let mounted = try await store.mounts(sharee: user).compactMap { BookContext($0, for: credential) }
        return Self.byDisplayName(own) + Self.byDisplayName(mounted)
    }

    static func byDisplayName(_ books: [BookContext]) -> [BookContext] {
        books.map { (CaseFolding.search($0.displayName), $0) }
            .sorted { ($0.0, $0.1.slug) < ($1.0, $1.1.slug) }
            .map(\.1)
    }

    /// `/web/`: the book to land on (`landingBook`), with a notice a redirect carried here.
    func home(_ context: PageContext) async throws -> WebResponse {
        let books = try await books(user: context.user)
        guard !books.isEmpty else {
            var model = try await pageModel(context, title: "No address book")
            model["noBook"] = true
            return .html(renderer.render("page", model))
        }
        let lastUsed = Cookies.parse(context.request.header("cookie"))[Cookies.lastBookName(secure: context.request.isSecure)]
        let book = try await landingBook(books, lastUsed: lastUsed.map { FormData.decodeComponent(Substring($0)) })
        let done = context.request.query("done") ?? ""
        return .redirect(URLs.book(base, book.slug, query: [("done", Self.homeNotices.contains(done) ? done : "")]))
    }

    /// Notices a page that leaves a book behind (deleted, left) sends to `/web/`.
    static let homeNotices: Set<String> = ["book-deleted", "left"]

    /// Where `/web/` (and so a sign-in) lands: the book this browser last listed, else the
    /// default book when it holds cards, else the first book that does, else the default or
    /// first book. A person whose cards are all in another book never lands on an empty list.
    func landingBook(_ books: [BookContext], lastUsed: String?) async throws -> BookContext {
        if let lastUsed, let book = books.first(where: { $0.slug == lastUsed }) { return book }
        let isDefault = { (book: BookContext) in book.slug == "default" && book.sharedBy == nil }
        let ordered = books.filter(isDefault) + books.filter { !isDefault($0) }
        for book in ordered {
            if try await store.cardCount(collectionID: book.id, filter: .contacts, search: [], cap: 1) > 0 { return book }
        }
        return ordered[0]
    }

    /// The side bar: books, and the current book's groups and tools.
    func navModel(_ context: PageContext, group: String? = nil, category: String? = nil) async throws -> [String: Any] {
        let books = try await books(user: context.user)
        let current = context.book
        var model: [String: Any] = [
            "books": books.map { book -> [String: Any] in
                [
                    "href": URLs.book(base, book.slug), "name": book.displayName, "slug": book.slug,
                    "current": book.slug == current?.slug,
                    "shared": book.sharedBy.map { owner -> [String: Any] in
                        ["owner": owner, "access": book.access == .readOnly ? "read only" : "read and write"]
                    } ?? false,
                ]
            },
            "book": false,
        ]
        if let current {
            async let groupPage = store.cardListings(collectionID: current.id, filter: .groups, search: [], from: .first, limit: 100)
            async let categoryNames = store.categories(collectionID: current.id, limit: 100)
            let groups = try await groupPage
            var categories = try await categoryNames
            if let category, !categories.contains(where: { CaseFolding.search($0) == CaseFolding.search(category) }) {
                categories.append(category)
            }
            model["book"] = [
                "href": URLs.book(base, current.slug), "canWrite": current.canWrite, "slug": current.slug,
                "shared": current.sharedBy != nil,
                "name": current.displayName, "allCurrent": group == nil && category == nil,
                "groups": groups.rows.map { row -> [String: Any] in
                    ["name": row.fields.displayName, "href": URLs.book(base, current.slug, query: [("group", row.name)]),
                     "current": row.name == group]
                },
                "categories": categories.map { name -> [String: Any] in
                    ["name": name, "href": URLs.book(base, current.slug, query: [("category", name)]),
                     "current": category.map { CaseFolding.search($0) == CaseFolding.search(name) } ?? false]
                },
            ] as [String: Any]
        }
        return model
    }
}
