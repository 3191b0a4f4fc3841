import Foundation
import DAVXML
import RoloStore

/// addressbook-multiget (RFC 6352 §8.7): the listed cards in one store query per address
/// book; hrefs that name nothing (or someone else's data) answer 404 in the multistatus.
extension DAVService {
    func addressbookMultiget(_ request: DAVRequest, body: XMLElement, node: Node) async throws -> DAVResponse {
        let properties = PropertyRequest(report: body)
        var multistatus = Multistatus()
        var missing: [String] = []
        // Hrefs grouped by the address book they point into, keeping first-seen order.
        var groups: [(book: [String], names: [String])] = []
        var groupIndex: [[String]: Int] = [:]
        var requested: [(href: String, book: [String], name: String)] = []

        for hrefElement in body.children(Namespace.dav, "href") {
            let href = hrefElement.text.trimmingXMLWhitespace
            guard let target = resourceTarget(href: href, user: request.user) else { missing.append(href); continue }
            requested.append((href, target.book, target.name))
            if let index = groupIndex[target.book] {
                groups[index].names.append(target.name)
            } else {
                groupIndex[target.book] = groups.count
                groups.append((target.book, [target.name]))
            }
        }
        var found: [[String]: (CollectionInfo, [String: StoredResource])] = [:]
        for group in groups {
            guard let book = try await store.collection(owner: request.user, path: group.book), book.kind == .addressBook else { continue }
            let cards = try await store.resources(collectionID: book.id, names: group.names)
            found[group.book] = (book, Dictionary(cards.map { ($0.info.name, $0) }, uniquingKeysWith: { first, _ in first }))
        }
        multistatus.reserve(responses: requested.count + missing.count,
                            bodyBytes: found.values.reduce(0) { $0 + $1.1.values.reduce(0) { $0 + $1.data.count } })
        let rows = CardResponseWriter(properties, withBodies: true)
        for item in requested {
            guard let (book, cards) = found[item.book], let card = cards[item.name] else { missing.append(item.href); continue }
            try await addCard(card.info, body: card.data, in: book, href: item.href, rows: rows,
                              properties: properties, user: request.user, to: &multistatus)
        }
        for href in missing { multistatus.add(href: href, status: 404) }
        return multistatusResponse(multistatus.finish())
    }

    /// The (address book path, card name) an href names when it is in the user's tree.
    func resourceTarget(href: String, user: String) -> (book: [String], name: String)? {
        guard let decoded = PercentEncoding.decode(Self.pathOfURI(href)),
              case .member(let owner, let components) = ResourcePath(path: decoded, configuration: configuration),
              owner == user, components.count >= 2 else { return nil }
        return (Array(components.dropLast()), components[components.count - 1])
    }

    /// The path part of an absolute URI (`https://host/dav/x` -> `/dav/x`), or the input.
    static func pathOfURI(_ uri: String) -> String {
        if uri.utf8.first == 0x2F { return uri } // already a path, as clients almost always send
        guard let scheme = uri.range(of: "://") else { return uri }
        let afterAuthority = uri[scheme.upperBound...]
        guard let slash = afterAuthority.firstIndex(of: "/") else { return "/" }
        var path = afterAuthority[slash...]
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<query] }
        return String(path)
    }
}
