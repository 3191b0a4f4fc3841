import Authorization
import CardIndexing
import Foundation
import RoloStore

/// COPY and MOVE (RFC 4918 §9.8, §9.9) of cards, files and collections within the user's
/// home. Cards landing in an address book are checked like a PUT (valid vCard, size, UID
/// unique there); collections copy recursively (Depth infinity) or alone (COPY Depth 0).
extension DAVService {
    func copyOrMove(_ request: DAVRequest, move: Bool) async throws -> DAVResponse {
        let sourcePath = try path(of: request)
        guard case .found(let source) = try await resolve(sourcePath, for: request.credential) else { throw DAVError.notFound }
        // The root, principals and homes are the server's, not the user's: refused before the
        // Destination is looked at, so no destination (another server's: 502) changes that.
        guard source.kind != .root, source.kind != .principal, source.kind != .home else {
            throw DAVError(403, message: "The root, principals and address book homes cannot be copied or moved.")
        }
        guard let destinationHeader = request.headers["destination"] else {
            throw DAVError.badRequest("Destination header missing.")
        }
        let destination = try destinationPath(destinationHeader, request: request)
        guard case .member(let user, let destinationComponents) = destination else {
            throw DAVError(403, message: "Cannot replace this collection.")
        }
        let overwrite = request.headers["overwrite"]?.trimmingCharacters(in: .whitespaces).uppercased() != "F"
        let depth = try Depth(request.headers["depth"], default: .infinity)
        if move && depth != .infinity && source.isCollection { throw DAVError.badRequest("MOVE of a collection needs Depth: infinity.") }
        guard try await ifHeaderHolds(request, path: sourcePath, etag: sourceETag(source)) else { throw DAVError.preconditionFailed }
        if move { try await checkLocks(request, path: sourcePath, descendants: true) }
        try await checkLocks(request, path: destination, descendants: true)

        // Paths as the user sees them: a card in a mount is at the mount's name.
        let sourceComponents: [String]
        switch source {
        case .collection(let info) where info.mount != nil:
            throw DAVError(403, message: "A shared address book cannot be copied or moved; copy its cards instead.")
        case .collection(let info):
            if move { try require(.unbind, on: info.path.count == 1 ? .home(request.user) : .collection(info), request) }
            sourceComponents = info.path
        case .object(let collection, let info, _):
            if move { try require(.unbind, on: .collection(collection), request) }
            sourceComponents = (collection.mount.map { [$0.name] } ?? collection.path) + [info.name]
        default: throw DAVError(403, message: "This collection cannot be copied or moved.")
        }
        if destinationComponents == sourceComponents {
            throw DAVError(403, message: "Source and destination are the same.")
        }
        if source.isCollection, destinationComponents.starts(with: sourceComponents) {
            throw DAVError(403, message: "Cannot copy a collection into itself.")
        }

        // A copy of a collection adds its cards to the user's bytes (a move adds nothing):
        // checked before anything at the destination is replaced.
        if !move, depth == .infinity, case .collection(let info) = source, configuration.quotaBytes != nil {
            try await checkQuota(user: info.owner, adding: try await storedBytes(in: info))
        }

        // Where the copy lands, and what it replaces.
        let destinationParent: CollectionInfo?
        var replaced = false
        switch try await resolve(destination, for: request.credential) {
        case .found(let existing):
            guard overwrite else { throw DAVError.preconditionFailed }
            switch existing {
            case .object(let collection, let info, _):
                try require(.writeContent, on: existing, request)
                destinationParent = collection
                // A card or file replaces the object in the same transaction that writes it
                // (transferResource), so a refused copy leaves the destination as it was.
                if source.isCollection {
                    try await store.deleteResource(collectionID: collection.id, name: info.name, precondition: .none)
                }
            case .collection(let info) where info.mount != nil:
                throw DAVError(403, message: "A shared address book cannot be replaced.")
            case .collection(let info):
                try require(.unbind, on: info.path.count == 1 ? .home(user) : .collection(info), request)
                destinationParent = try await parentCollection(owner: user, of: info.path)
                try await store.deleteCollection(id: info.id)
            default:
                throw DAVError(403, message: "Cannot replace this collection.")
            }
            replaced = true
        case .missing(let parent, let parentIsHome, _):
            guard parent != nil || parentIsHome else { throw DAVError.conflict }
            try require(.bind, on: parent.map(Node.collection) ?? .home(user), request)
            destinationParent = parent
        }

        switch source {
        case .object(let collection, let info, _):
            guard let parent = destinationParent else { throw DAVError(403, message: "Files must be stored inside a collection.") }
            try await copyObject(from: collection, name: info.name, to: parent, name: destinationComponents.last!, move: move)
            request.tally?.wrote(book: parent.id)
        case .collection(let info):
            if destinationParent?.kind == .addressBook {
                throw DAVError.precondition(403, .cardDAV("addressbook-collection-location-ok"),
                                            message: "Address books cannot contain collections.")
            }
            try await copyCollection(info, to: destinationComponents, recursive: depth == .infinity)
            if move { try await store.deleteCollection(id: info.id) }
        default:
            break
        }
        if move, let key = lockKey(sourcePath) { try await locks.release(under: key) }
        return DAVResponse(status: replaced ? 204 : 201, headers: [("Content-Length", "0")])
    }

    /// The Destination header as a path in the user's tree; 502 for another server's URL
    /// (an absolute URI whose authority is neither the request's Host nor the public URL's).
    func destinationPath(_ header: String, request: DAVRequest) throws(DAVError) -> ResourcePath {
        let uri = header.trimmingCharacters(in: .whitespaces)
        if let authority = Self.authorityOfURI(uri) {
            var known = Set<String>()
            if let host = request.headers["host"] { known.insert(host.lowercased()) }
            if let url = configuration.publicBaseURL, let host = url.host {
                known.insert((url.port.map { "\(host):\($0)" } ?? host).lowercased())
            }
            if !known.isEmpty, !known.contains(authority.lowercased()) {
                throw DAVError(502, message: "The destination is not on this server.")
            }
        }
        guard let decoded = PercentEncoding.decode(Self.pathOfURI(uri)) else { throw DAVError.badRequest("Malformed Destination.") }
        guard let path = ResourcePath(path: decoded, configuration: configuration) else {
            throw DAVError(502, message: "The destination is not on this server.")
        }
        if let owner = path.user, owner != request.user { throw DAVError(403, message: "The destination belongs to another user.") }
        return path
    }

    /// `host:port` of an absolute URI, nil for a path.
    static func authorityOfURI(_ uri: String) -> String? {
        guard let scheme = uri.range(of: "://") else { return nil }
        let rest = uri[scheme.upperBound...]
        let authority = rest[..<(rest.firstIndex(of: "/") ?? rest.endIndex)]
        return String(authority.split(separator: "@").last ?? authority)
    }

    private func sourceETag(_ node: Node) -> String? {
        if case .object(_, let info, _) = node { return info.etag }
        return nil
    }

    private func parentCollection(owner: String, of path: [String]) async throws -> CollectionInfo? {
        guard path.count > 1 else { return nil }
        return try await store.collection(owner: owner, path: Array(path.dropLast()))
    }

    /// Copies or moves one card or file (checked as a card when it lands in an address book)
    /// with its dead properties, in one store transaction: a refused or interrupted move
    /// never leaves the card in neither place, nor a half-replaced destination.
    private func copyObject(from source: CollectionInfo, name: String, to target: CollectionInfo,
                            name targetName: String, move: Bool) async throws {
        guard let stored = try await store.resource(collectionID: source.id, name: name) else { throw DAVError.notFound }
        var card: CardMetadata?
        var contentType = stored.info.contentType
        if target.kind == .addressBook {
            if stored.data.count > configuration.maxResourceSize {
                throw DAVError.precondition(403, .cardDAV("max-resource-size"))
            }
            card = CardMetadata(card: try Put.validatedCard(stored.data))
            contentType = Put.cardContentType
        }
        // A move within one owner's books adds nothing; a copy, or a move into another
        // owner's book (a share), adds the body to the target's owner, less what it replaces.
        if configuration.quotaBytes != nil, !move || source.owner != target.owner {
            let replaced = try await store.resourceInfo(collectionID: target.id, name: targetName)?.size ?? 0
            try await checkQuota(user: target.owner, adding: stored.data.count - replaced)
        }
        do {
            _ = try await store.transferResource(collectionID: source.id, name: name, sourceETag: stored.info.etag,
                                                 to: target.id, name: targetName, data: stored.data,
                                                 contentType: contentType, card: card, move: move)
        } catch StoreError.uidConflict(let existingName) {
            let href = hrefs.resource(in: target, name: existingName)
            throw DAVError(403, condition: .cardDAV("no-uid-conflict"), conditionHref: href,
                           message: "The destination address book has a card with the same UID.")
        }
    }

    /// The bytes of a collection's members and its sub-collections' members.
    private func storedBytes(in collection: CollectionInfo) async throws -> Int {
        var total = try await store.listResources(collectionID: collection.id).reduce(0) { $0 + $1.size }
        for child in try await store.childCollections(owner: collection.owner, parentPath: collection.path) {
            total += try await storedBytes(in: child)
        }
        return total
    }

    /// Creates a copy of a collection at `path` with its properties, and (recursive) its
    /// members and sub-collections.
    private func copyCollection(_ source: CollectionInfo, to path: [String], recursive: Bool) async throws {
        let copy = try await store.createCollection(owner: source.owner, path: path, kind: source.kind,
                                                    displayName: source.displayName, description: source.description)
        let dead = try await store.deadProperties(collectionID: source.id, resource: nil)
        if !dead.isEmpty { try await store.updateDeadProperties(collectionID: copy.id, resource: nil, set: dead, remove: []) }
        guard recursive else { return }
        for resource in try await store.allResources(collectionID: source.id) {
            let card = source.kind == .addressBook ? (try? CardMetadata(card: Put.validatedCard(resource.data))) : nil
            _ = try await store.putResource(collectionID: copy.id, name: resource.info.name, data: resource.data,
                                        contentType: resource.info.contentType, card: card, precondition: .none)
            let resourceDead = try await store.deadProperties(collectionID: source.id, resource: resource.info.name)
            if !resourceDead.isEmpty {
                try await store.updateDeadProperties(collectionID: copy.id, resource: resource.info.name, set: resourceDead, remove: [])
            }
        }
        for child in try await store.childCollections(owner: source.owner, parentPath: source.path) {
            try await copyCollection(child, to: path + [child.path.last!], recursive: true)
        }
    }
}
