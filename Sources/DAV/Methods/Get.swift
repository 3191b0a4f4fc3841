import Foundation
import RoloStore

/// GET/HEAD of a card or file: its stored bytes with ETag, Content-Type, Content-Length and
/// Last-Modified; `If-None-Match` answers 304. Collections have no GET body (405).
extension DAVService {
    func get(_ request: DAVRequest, includeBody: Bool) async throws -> DAVResponse {
        let (collection, stored) = try await storedObject(at: try path(of: request), for: request.credential)
        guard let collection, let stored else {
            return DAVResponse(status: 405, headers: [("Allow", Self.allowedMethods), ("Content-Length", "0")])
        }
        request.tally?.read(includeBody ? 1 : 0, book: collection.id)
        return try Self.getResponse(request, collection: collection, stored: stored, includeBody: includeBody)
    }

    /// GET or HEAD of a stored card or file answered on the calling thread, when the store
    /// reads it without waiting (`ImmediateResourceReads`): the server then answers it on
    /// the event loop that read the request, with no task. The answer is the one `handle`
    /// gives. Nil when this cannot answer at once and the request must go through `handle`:
    /// another method, a store without immediate reads, a path that is not a stored
    /// resource (collections, 404s), or a store error (`handle` reports it).
    public func immediateResponse(to request: DAVRequest) -> DAVResponse? {
        let includeBody: Bool
        switch request.method {
        case "GET": includeBody = true
        case "HEAD": includeBody = false
        default: return nil
        }
        guard let immediateReads,
              case .member(let user, let components)? = try? path(of: request), components.count >= 2,
              let found = try? immediateReads.resourceImmediately(owner: user, collectionPath: Array(components.dropLast()),
                                                                  name: components[components.count - 1]),
              // A book outside an app password's scope: `handle` answers 404.
              Access.privileges(on: found.collection, for: request.credential) != nil
        else { return nil }
        request.tally?.read(includeBody ? 1 : 0, book: found.collection.id)
        do {
            return try Self.getResponse(request, collection: found.collection, stored: found.resource, includeBody: includeBody)
        } catch {
            return error.response
        }
    }

    /// The answer to a GET or HEAD of `stored`, by the request's conditional headers.
    private static func getResponse(_ request: DAVRequest, collection: CollectionInfo, stored: StoredResource,
                                    includeBody: Bool) throws(DAVError) -> DAVResponse {
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

    /// The card or file at `path` with its body, read in one store call since GET is the
    /// hottest path; (nil, nil) when the path is a collection or above the stored tree;
    /// 404 when nothing is there.
    private func storedObject(at path: ResourcePath, for credential: Credential) async throws -> (CollectionInfo?, StoredResource?) {
        if case .member(let user, let components) = path, components.count >= 2,
           let found = try await store.resource(owner: user, collectionPath: Array(components.dropLast()),
                                                name: components[components.count - 1]) {
            guard Access.privileges(on: found.collection, for: credential) != nil else { throw DAVError.notFound }
            return (found.collection, found.resource)
        }
        guard case .found(let node) = try await resolve(path, for: credential) else { throw DAVError.notFound }
        guard case .object(let collection, let info, _) = node,
              let stored = try await store.resource(collectionID: collection.id, name: info.name) else {
            if case .object = node { throw DAVError.notFound }
            return (nil, nil)
        }
        return (collection, stored)
    }
}
