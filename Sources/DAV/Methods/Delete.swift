import RoloStore

/// DELETE of a card, file or stored collection (RFC 4918 §9.6); `If-Match` and `If` are
/// honoured. Deleting a card leaves a tombstone in the change log (the store does it).
extension DAVService {
    func delete(_ request: DAVRequest) async throws -> DAVResponse {
        let node = try await existingNode(request)
        switch node {
        case .object(let collection, let info, _):
            guard Preconditions.ifHeaderHolds(request.headers["if"], etag: info.etag) else { throw DAVError.preconditionFailed }
            try await store.deleteResource(collectionID: collection.id, name: info.name,
                                           precondition: Preconditions.write(request.headers))
        case .collection(let info):
            // A collection exists but has no entity tag: only `If-Match: *` style conditions hold.
            guard Preconditions.ifHeaderHolds(request.headers["if"], etag: nil),
                  Preconditions.holds(Preconditions.write(request.headers), etag: "") else {
                throw DAVError.preconditionFailed
            }
            try await store.deleteCollection(id: info.id)
        default:
            throw DAVError(403, message: "This collection cannot be deleted.")
        }
        return DAVResponse(status: 204)
    }
}
