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
        if depth == .one, case .collection(let book) = node, book.kind == .addressBook,
           let rows = CardResponseWriter(properties, withBodies: false) {
            return try await listAddressBook(book, href: targetHref, rows: rows, user: request.user, request: properties)
        }
        var targets = [(node: node, href: targetHref)]
        if depth == .one {
            targets += try await children(of: node, user: request.user).map { child in
                // A card's href is its collection's plus its name: no need to rebuild the prefix.
                guard case .object(_, let info, _) = child else { return (child, hrefs.href(for: child)) }
                return (child, hrefs.member(info.name, ofCollectionHref: targetHref))
            }
        }

        var multistatus = Multistatus()
        multistatus.reserve(responses: targets.count, bodyBytes: 0)
        for (node, href) in targets {
            multistatus.add(href: href, propstats: try await propstats(of: node, href: href, user: request.user, request: properties))
        }
        return multistatusResponse(multistatus.finish())
    }

    /// Depth 1 of an address book when every asked property is in the cards' rows: the
    /// book's own response, then each card's written straight from its row.
    private func listAddressBook(_ book: CollectionInfo, href bookHref: String, rows: CardResponseWriter,
                                 user: String, request properties: PropertyRequest) async throws -> DAVResponse {
        var multistatus = Multistatus()
        multistatus.add(href: bookHref, propstats: try await propstats(of: .collection(book), href: bookHref, user: user, request: properties))
        try await addRows(of: book, href: bookHref, rows: rows, to: &multistatus)
        return multistatusResponse(multistatus.finish())
    }

    /// The cards' rows live only while their responses are written, not while the
    /// finished body is copied out (at 100 000 cards each is some 30 MB).
    private func addRows(of book: CollectionInfo, href bookHref: String, rows: CardResponseWriter,
                         to multistatus: inout Multistatus) async throws {
        let cards = try await store.listResources(collectionID: book.id)
        multistatus.reserve(responses: cards.count, bodyBytes: 0)
        for card in cards {
            multistatus.add(card: card, body: Data(), href: hrefs.member(card.name, ofCollectionHref: bookHref), writer: rows)
        }
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

    /// Direct members of a collection node, as nodes.
    func children(of node: Node, user: String) async throws -> [Node] {
        switch node {
        case .root, .principal, .object: return []
        case .principals: return [.principal(user)]
        case .homes: return [.home(user)]
        case .home(let owner):
            return try await store.childCollections(owner: owner, parentPath: []).map(Node.collection)
        case .collection(let info):
            var nodes: [Node] = []
            if info.kind == .plain {
                nodes += try await store.childCollections(owner: info.owner, parentPath: info.path).map(Node.collection)
            }
            nodes += try await store.listResources(collectionID: info.id).map { Node.object(info, $0, nil) }
            return nodes
        }
    }
}
