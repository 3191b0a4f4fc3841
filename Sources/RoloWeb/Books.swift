import Foundation
import RoloStore

/// A book as the signed-in user reaches it: one of their own, or a share mounted in their
/// home (`<book>~<owner>`), with what they may do there.
struct BookContext: Sendable {
    var info: CollectionInfo
    /// The book's name in the user's home, as URLs carry it.
    var slug: String
    var displayName: String
    var canWrite: Bool
    /// Owner and access, for a shared book.
    var sharedBy: String?
    var access: ShareAccess?

    var id: Int64 { info.id }
}

extension WebApp {
    func book(slug: String, user: String) async throws -> BookContext? {
        if !slug.contains("~"), let own = try await store.collection(owner: user, path: [slug]), own.kind == .addressBook {
            return BookContext(info: own, slug: slug, displayName: own.displayName ?? slug, canWrite: true)
        }
        guard let mounted = try await store.mount(sharee: user, name: slug), let mount = mounted.mount else { return nil }
        return BookContext(info: mounted, slug: slug, displayName: mount.displayName, canWrite: mount.access == .readWrite,
                           sharedBy: mounted.owner, access: mount.access)
    }

    /// The user's own address books, then the shares they accepted.
    func books(user: String) async throws -> [BookContext] {
        let own = try await store.childCollections(owner: user, parentPath: [])
            .filter { $0.kind == .addressBook }
            .sorted { ($0.path.last ?? "") < ($1.path.last ?? "") }
            .map { BookContext(info: $0, slug: $0.path.last ?? "", displayName: $0.displayName ?? ($0.path.last ?? ""), canWrite: true) }
        let mounted = try await store.mounts(sharee: user).compactMap { info -> BookContext? in
            guard let mount = info.mount else { return nil }
            return BookContext(info: info, slug: mount.name, displayName: mount.displayName, canWrite: mount.access == .readWrite,
                               sharedBy: info.owner, access: mount.access)
        }
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

    /// A write on a shared read-only book: refused whatever the page showed.
    func requireWrite(_ context: PageContext) throws -> BookContext {
        let book = try context.currentBook
        guard book.canWrite else { throw WebError.forbidden("This address book is shared with you read-only.") }
        return book
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
