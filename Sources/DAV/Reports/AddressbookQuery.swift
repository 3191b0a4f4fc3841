import DAVXML
import Foundation
import RoloStore
import VCard

/// addressbook-query (RFC 6352 §8.6): the cards of a book matching a filter, answered from
/// the store's index when the filter translates to an `IndexPredicate`, else by parsing
/// each card and matching it. `limit/nresults` truncates with a 507 response for the book
/// carrying `DAV:number-of-matches-within-limits`.
extension DAVService {
    func addressbookQuery(_ request: DAVRequest, body: XMLElement, node: Node) async throws -> DAVResponse {
        let book = try addressBook(node, report: "addressbook-query")
        let properties = PropertyRequest(report: body)
        let filter = try Self.filter(body.child(Namespace.cardDAV, "filter"))
        let limit = try resultLimit(body.child(Namespace.cardDAV, "limit"))

        var cards: [StoredResource]
        if let predicate = filter.indexPredicate(indexedProperties: CardMetadata.indexedProperties) {
            let names = try await store.query(collectionID: book.id, predicate: predicate, limit: limit.map { $0 + 1 })
            cards = try await store.resources(collectionID: book.id, names: names).sorted { $0.info.name < $1.info.name }
        } else {
            cards = try await store.allResources(collectionID: book.id).filter { stored in
                guard let card = try? VCardParser.parse([UInt8](stored.data)).first else { return false }
                return filter.matches(card)
            }
        }
        let truncated = limit.map { cards.count > $0 } ?? false
        if let limit, truncated { cards = Array(cards.prefix(limit)) }

        var multistatus = Multistatus()
        try await addCards(cards, in: book, request: request, properties: properties, to: &multistatus)
        if truncated {
            multistatus.add(href: hrefs.href(for: node), status: 507,
                            error: .precondition(507, .dav("number-of-matches-within-limits")))
        }
        return multistatusResponse(multistatus.finish())
    }

    /// The request's filter; a missing one matches every card. Unsupported collations and
    /// filters answer 403 with their CardDAV precondition, malformed ones 400.
    static func filter(_ element: XMLElement?) throws(DAVError) -> AddressbookFilter {
        guard let element else { return AddressbookFilter() }
        do {
            return try AddressbookFilter(xml: element)
        } catch {
            if let condition = error.precondition {
                throw DAVError.precondition(403, .cardDAV(condition), message: error.description)
            }
            throw DAVError.badRequest("Invalid filter: \(error.description)")
        }
    }
}
