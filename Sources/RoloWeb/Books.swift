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

    /// The user's own address books, then the shares they accepted.
    func books(user: String) async throws -> [BookContext] {
        let credential = Credential.accountPassword(user)
        let own = try await store.childCollections(owner: user, parentPath: [])
            .sorted { ($0.path.last ?? "") < ($1.path.last ?? "") }
            .compactMap { BookContext($0, for: credential) }
        let mounted = try await store.mounts(sharee: user).compactMap { BookContext($0, for: credential) }
        return own + mounted
    }

    /// `/web/`: the first book's list.
    func home(_ context: PageContext) async throws -> WebResponse {
        let books = try await books(user: context.user)
        guard let first = books.first(where: { $0.slug == "default" }) ?? books.first else {
            return .html(renderer.render("page", context.layout(title: "No address book")
                .merging(["hasSidebar": false] as [String: Any]) { $1 }))
        }
        return .redirect(URLs.book(base, first.slug))
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
