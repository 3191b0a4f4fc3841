import Authorization
import RoloStore

/// DELETE of a card, file or stored collection (RFC 4918 §9.6); `If-Match` and `If` are
/// honoured. Deleting a card leaves a tombstone in the change log (the store does it).
extension DAVService {
    func delete(_ request: DAVRequest) async throws -> DAVResponse {
        let path = try path(of: request)
        if case .pushRegistration(let id) = path { return try await deletePushRegistration(id: id, request) }
        guard case .found(let node) = try await resolve(path, for: request.credential) else { throw DAVError.notFound }
        try await checkLocks(request, path: path, descendants: true)
        switch node {
        case .object(let collection, let info, _):
            try require(.unbind, on: .collection(collection), request)
            guard try await ifHeaderHolds(request, path: path, etag: info.etag) else { throw DAVError.preconditionFailed }
            try await store.deleteResource(collectionID: collection.id, name: info.name,
                                           precondition: Preconditions.write(request.headers))
            request.tally?.deleted(book: collection.id)
        case .collection(let info) where info.mount != nil:
            // A sharee's DELETE of a mount leaves the share; the owner's cards stay. Leaving
            // is an account action (app passwords never take one). DAV grants no admin powers.
            let home = Node.home(request.user)
            let leave = AccountAction.removeShare(owner: info.owner, sharee: request.user)
            if case .denied = Access.decide(leave, by: .user(request.credential, admin: false)) {
                throw DAVError.needPrivileges(href: hrefs.href(for: home), privilege: .unbind)
            }
            try require(.unbind, on: home, request)
            try await store.removeShare(owner: info.owner, book: info.path.joined(separator: "/"), sharee: request.user)
        case .collection(let info):
            try require(.unbind, on: info.path.count == 1 ? .home(request.user) : .collection(info), request)
            // A collection exists but has no entity tag: only `If-Match: *` style conditions hold.
            guard try await ifHeaderHolds(request, path: path, etag: nil),
                  Preconditions.write(request.headers).holds(currentETag: "") else {
                throw DAVError.preconditionFailed
            }
            try await store.deleteCollection(id: info.id)
        default:
            throw DAVError(403, message: "This collection cannot be deleted.")
        }
        if let key = lockKey(path) { try await locks.release(under: key) }
        return DAVResponse(status: 204)
    }
}
