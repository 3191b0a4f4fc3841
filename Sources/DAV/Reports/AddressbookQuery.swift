import DAVXML
import Foundation
import RoloStore

/// addressbook-query (RFC 6352 §8.6): the cards of a book matching a filter.
extension DAVService {
    func addressbookQuery(_ request: DAVRequest, body: XMLElement, node: Node) async throws -> DAVResponse {
        _ = try addressBook(node, report: "addressbook-query")
        throw DAVError(501, message: "addressbook-query is not implemented yet.")
    }
}
