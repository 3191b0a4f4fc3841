import DAVXML
import RoloStore

/// REPORT dispatch: each report is registered under the Clark name of its body's root
/// element; an unknown one answers 403 `DAV:supported-report`.
extension DAVService {
    typealias ReportHandler = @Sendable (DAVService, DAVRequest, XMLElement, Node) async throws -> DAVResponse

    static let reports: [String: ReportHandler] = [
        "{\(Namespace.cardDAV)}addressbook-multiget": { try await $0.addressbookMultiget($1, body: $2, node: $3) },
        "{\(Namespace.cardDAV)}addressbook-query": { try await $0.addressbookQuery($1, body: $2, node: $3) },
        "{\(Namespace.dav)}sync-collection": { try await $0.syncCollection($1, body: $2, node: $3) },
        "{\(Namespace.dav)}expand-property": { try await $0.expandProperty($1, body: $2, node: $3) },
        "{\(Namespace.dav)}principal-property-search": { try await $0.principalPropertySearch($1, body: $2, node: $3) },
        "{\(Namespace.dav)}principal-search-property-set": { try await $0.principalSearchPropertySet($1, body: $2, node: $3) },
        "{\(Namespace.dav)}principal-match": { try await $0.principalMatch($1, body: $2, node: $3) },
        "{\(Namespace.dav)}acl-principal-prop-set": { try await $0.aclPrincipalPropSet($1, body: $2, node: $3) },
    ]

    func report(_ request: DAVRequest) async throws -> DAVResponse {
        guard let body = try xmlBody(request) else { throw DAVError.badRequest("REPORT needs a body.") }
        guard let handler = Self.reports[body.clarkName] else {
            throw DAVError.precondition(403, .dav("supported-report"), message: "Unsupported report \(body.clarkName).")
        }
        if configuration.directoryGatewayOnly, body.clarkName != "{\(Namespace.cardDAV)}addressbook-query", isGatewayPath(request) {
            throw DAVError.gatewayOnly
        }
        let properties = try PropertyRequest(report: body)
        if let element = properties.addressDataElement { _ = try AddressDataRequest(element: element) }
        let node = try await existingNode(request)
        return try await handler(self, request, body, node)
    }

    /// The address book a card report runs on, or 403 `supported-report` elsewhere.
    func addressBook(_ node: Node, report: String) throws(DAVError) -> CollectionInfo {
        guard case .collection(let info) = node, info.kind == .addressBook else {
            throw DAVError.precondition(403, .dav("supported-report"), message: "\(report) runs on an address book.")
        }
        return info
    }
}
