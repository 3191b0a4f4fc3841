import Foundation
import RoloStore

/// GET/HEAD of a card or file: its stored bytes with ETag, Content-Type, Content-Length and
/// Last-Modified; `If-None-Match` answers 304. Collections have no GET body (405).
extension DAVService {
    func get(_ request: DAVRequest, includeBody: Bool) async throws -> DAVResponse {
        let node = try await existingNode(request)
        guard case .object(let collection, let info, _) = node else {
            return DAVResponse(status: 405, headers: [("Allow", Self.allowedMethods), ("Content-Length", "0")])
        }
        guard let stored = try await store.resource(collectionID: collection.id, name: info.name) else {
            throw DAVError.notFound
        }
        let current = stored.info
        var headers = [("ETag", current.etag), ("Last-Modified", HTTPDate.rfc1123(current.modified))]
        if let ifNoneMatch = request.headers["if-none-match"] {
            let tags = Preconditions.entityTags(ifNoneMatch)
            if tags.contains("*") || tags.contains(current.etag) { return DAVResponse(status: 304, headers: headers) }
        }
        if let ifMatch = request.headers["if-match"], !Preconditions.holds(Preconditions.write(["if-match": ifMatch]), etag: current.etag) {
            throw DAVError.preconditionFailed
        }
        headers.append(("Content-Type", collection.kind == .addressBook ? Put.cardContentType : current.contentType))
        headers.append(("Content-Length", String(stored.data.count)))
        return DAVResponse(status: 200, headers: headers, body: includeBody ? stored.data : Data())
    }
}
