import Authorization
import Foundation
import RoloStore

/// PROPFIND (RFC 4918 §9.1): Depth 0 or 1; infinity on a collection is refused with
/// `DAV:propfind-finite-depth` (on a card or file it means the resource alone).
extension DAVService {
    func propfind(_ request: DAVRequest) async throws -> DAVResponse {
        let depth = try Depth(request.headers["depth"], default: .infinity)
        let properties = try PropertyRequest(propfind: try xmlBody(request))
        if let element = properties.addressDataElement { _ = try AddressDataRequest(element: element) }
        let node = try await existingNode(request)
        // Infinity only matters where there is something below.
        if depth == .infinity && node.isCollection {
            throw DAVError.precondition(403, .dav("propfind-finite-depth"), message: "Depth: infinity is not supported.")
        }
        let targetHref = href(for: node, request: request)
        if depth == .one, case .collection(let collection) = node {
            // Depth 1 with address-data hands the client every card of the book.
            let reads = collection.kind == .addressBook ? CardReads(request, book: collection.id, withBodies: properties.wantsBodies) : nil
            if reads != nil { request.tally?.fullDownload(book: collection.id) }
            return try await listCollection(collection, href: targetHref, credential: request.credential, request: properties,
                                            reads: reads)
        }
        var targets = [(node: node, href: targetHref)]
        if depth == .one {
            targets += try await children(of: node, user: request.user, credential: request.credential).map { ($0, hrefs.href(for: $0)) }
        }

        var multistatus = Multistatus()
        multistatus.reserve(responses: targets.count)
        for (node, href) in targets {
            multistatus.add(href: href, propstats: try await propstats(of: node, href: href, credential: request.credential, request: properties))
        }
        return multistatusResponse(multistatus.finish())
    }

    /// Depth 1 of a collection: its own response, its child collections' (a plain collection
    /// may have some), then its resources a page at a time, streamed when there is more
    /// than a page (`pagedMultistatus`). A card's response is written straight from its
    /// row when every asked property is in it (`CardResponseWriter`), else generically.
    private func listCollection(_ collection: CollectionInfo, href collectionHref: String, credential: Credential,
                                request properties: PropertyRequest, reads: CardReads?) async throws -> DAVResponse {
        var multistatus = Multistatus()
        let own = Node.collection(collection)
        multistatus.add(href: collectionHref, propstats: try await propstats(of: own, href: collectionHref, credential: credential, request: properties))
        if collection.kind == .plain {
            for child in try await store.childCollections(owner: collection.owner, parentPath: collection.path) {
                let node = Node.collection(child)
                let href = hrefs.href(for: node)
                multistatus.add(href: href, propstats: try await propstats(of: node, href: href, credential: credential, request: properties))
            }
        }
        // The row writer knows cards only (their content type is fixed).
        let rows = collection.kind == .addressBook ? CardResponseWriter(properties, withBodies: false) : nil
        let pages = BookPages(store: store, collectionID: collection.id, withBodies: false, pageSize: configuration.listingPageSize,
                              bodyLimit: configuration.pageBodyLimit)
        // A member's href is its collection's plus its name: the prefix is escaped once.
        let memberPrefix = EscapedHref(collectionHref)
        let writer: ItemWriter<StoredResource>
        if let rows {
            writer = .rows { resource, multistatus in
                multistatus.add(card: resource.info, body: Data(), memberOf: memberPrefix, writer: rows)
            }
        } else {
            writer = .generic { [self] resource, multistatus in
                try await addMember(resource.info, body: nil, in: collection, collectionHref: memberPrefix,
                                    rows: nil, properties: properties, credential: credential, to: &multistatus)
            }
        }
        return try await pagedMultistatus(multistatus, pages: pages, writer: writer, reads: reads)
    }

    /// The root answers under the path it was asked at (`/` or `/dav/`).
    func href(for node: Node, request: DAVRequest) -> String {
        if case .root = node {
            var path = Substring(request.path)
            let prefix = configuration.proxyPrefix
            if !prefix.isEmpty, path.hasPrefix(prefix) { path = path.dropFirst(prefix.count) }
            return DAVConfiguration.normalized(String(path)).isEmpty ? prefix + "/" : hrefs.root
        }
        return hrefs.href(for: node)
    }

    /// Direct members of a node above the collections (root, principals, homes), as nodes;
    /// a collection's members are listed page by page by `listCollection`.
    func children(of node: Node, user: String, credential: Credential) async throws -> [Node] {
        switch node {
        case .root, .principal, .object, .collection: return []
        case .principals: return [.principal(user)]
        case .homes: return [.home(user)]
        case .home(let owner):
            // The default book first (macOS Contacts uses the first book it lists), then the
            // user's other collections, then the shared books mounted here; each as this
            // credential may see it.
            let own = try await store.childCollections(owner: owner, parentPath: [])
                .sorted { ($0.path == ["default"] ? 0 : 1, $0.path.joined()) < ($1.path == ["default"] ? 0 : 1, $1.path.joined()) }
            let mounted = try await store.mounts(sharee: owner)
            return (own + mounted).map(Node.collection).filter { Access.privileges(on: $0, for: credential) != nil }
        }
    }
}
