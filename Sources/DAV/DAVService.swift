import Authorization
import DAVXML
import Foundation
import RoloStore

/// The store roles the protocol engine uses: cards and their change log, accounts (principal
/// properties and searches), sharing (mounted books), push topics, and coordination (locks).
/// Web sessions, the trash and maintenance are not DAV's business.
public typealias DAVStore = CardStore & AccountStore & SharingStore & PushStore & StoreCoordination

/// The WebDAV/CardDAV protocol engine: turns a `DAVRequest` from an authenticated user into
/// a `DAVResponse` over any `DAVStore`. It knows no HTTP framework and no SQL, so the
/// server target only moves bytes and the whole protocol is testable in memory.
public struct DAVService: Sendable {
    public let store: any DAVStore
    public let configuration: DAVConfiguration
    let hrefs: HrefBuilder
    /// Write locks, kept by the store.
    let locks: LockTable
    /// The store's read for the inline GET, when it has one (`inlineResponse(to:done:)`).
    let inlineReads: (any InlineResourceReads)?

    public init(store: any DAVStore, configuration: DAVConfiguration = DAVConfiguration()) {
        self.store = store
        self.inlineReads = store as? any InlineResourceReads
        self.configuration = configuration
        self.hrefs = HrefBuilder(configuration: configuration)
        self.locks = LockTable(store: store, sequentialTokens: configuration.sequentialLockTokens)
    }

    /// Methods this engine answers, for `Allow`.
    static let allowedMethods = "OPTIONS, GET, HEAD, POST, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, REPORT, LOCK, UNLOCK"

    public func handle(_ request: DAVRequest) async -> DAVResponse {
        // Every write of this request records who made it (the change log's author), and
        // the registrations its `Push-Dont-Notify` spares (read when the store publishes).
        await ChangeAuthor.$current.withValue(request.credential.author) {
            if let header = request.headers["push-dont-notify"],
               let exclusion = PushDontNotify.exclusion(header, user: request.user, configuration: configuration) {
                return await PushExclusion.$current.withValue(exclusion) { await dispatch(request) }
            }
            return await dispatch(request)
        }
    }

    private func dispatch(_ request: DAVRequest) async -> DAVResponse {
        do {
            if configuration.directoryGatewayOnly, request.method.uppercased() != "REPORT", isGatewayPath(request) {
                throw DAVError.gatewayOnly
            }
            switch request.method.uppercased() {
            case "OPTIONS": return await options(request)
            case "PROPFIND": return try await propfind(request)
            case "PROPPATCH": return try await proppatch(request)
            case "MKCOL": return try await mkcol(request)
            case "GET": return try await get(request, includeBody: true)
            case "HEAD": return try await get(request, includeBody: false)
            case "POST": return try await post(request)
            case "PUT": return try await put(request)
            case "DELETE": return try await delete(request)
            case "COPY": return try await copyOrMove(request, move: false)
            case "MOVE": return try await copyOrMove(request, move: true)
            case "REPORT": return try await report(request)
            case "LOCK": return try await lock(request)
            case "UNLOCK": return try await unlock(request)
            default:
                return DAVResponse(status: 501, headers: [("Allow", Self.allowedMethods)])
            }
        } catch let error as DAVError {
            return error.response
        } catch let error as StoreError {
            return DAVError(error).response
        } catch {
            return DAVError(500, message: "Internal error: \(error)").response
        }
    }
}

// MARK: - Shared request plumbing

extension DAVService {
    /// The path of the request, refusing paths outside the tree and other users' paths.
    func path(of request: DAVRequest) throws(DAVError) -> ResourcePath {
        try path(request.path, user: request.user)
    }

    func path(_ raw: String, user: String) throws(DAVError) -> ResourcePath {
        guard let path = ResourcePath(path: raw, configuration: configuration) else { throw .notFound }
        if let owner = path.user, owner != user { throw .notFound }
        return path
    }

    /// Looks a path up in the store, as `credential` sees it: a node it may not see (a book
    /// outside an app password's scope) is 404, found or not.
    func resolve(_ path: ResourcePath, for credential: Credential) async throws -> Resolution {
        let resolution = try await resolve(path)
        switch resolution {
        case .found(let node):
            if Access.privileges(on: node, for: credential) == nil { throw DAVError.notFound }
        case .missing(let parent?, _, _):
            if Access.privileges(on: parent, for: credential) == nil { throw DAVError.notFound }
        case .missing:
            break
        }
        return resolution
    }

    /// Looks a path up in the store. A book of the user's home is found first; failing that,
    /// the accepted share mounted under that name (`RoloStore.mount`), so the owners' own
    /// paths, the hot ones, cost no extra lookup.
    private func resolve(_ path: ResourcePath) async throws -> Resolution {
        switch path {
        case .root: return .found(.root)
        case .principals: return .found(.principals)
        case .homes: return .found(.homes)
        case .principal(let user): return .found(.principal(user))
        case .home(let user): return .found(.home(user))
        case .pushRegistration: throw DAVError.notFound
        case .member(let user, let components):
            let parentPath = Array(components.dropLast())
            let name = components[components.count - 1]
            let parent: CollectionInfo?
            if parentPath.isEmpty {
                parent = nil
            } else {
                // The parent and the member in one lookup: every PUT and DELETE resolves here.
                if let member = try await store.collectionMember(owner: user, path: parentPath, name: name) {
                    if let info = member.resource { return .found(.object(member.collection, info, nil)) }
                    parent = member.collection
                } else if parentPath.count == 1, let mounted = try await store.mount(sharee: user, name: parentPath[0]) {
                    if let info = try await store.resourceInfo(collectionID: mounted.id, name: name) {
                        return .found(.object(mounted, info, nil))
                    }
                    return .missing(parent: mounted, parentIsHome: false, name: name)
                } else if parentPath.count == 1, parentPath[0].contains("~") {
                    // A mount's path once the share is gone (or never was): 404 for every
                    // method, not 409, so clients drop the book rather than retry.
                    throw DAVError.notFound
                } else {
                    return .missing(parent: nil, parentIsHome: false, name: name)
                }
            }
            if parent?.kind != .addressBook, let collection = try await store.collection(owner: user, path: components) {
                return .found(.collection(collection))
            }
            if parentPath.isEmpty, let mounted = try await store.mount(sharee: user, name: name) {
                return .found(.collection(mounted))
            }
            if configuration.directoryGatewayOnly, components == [DirectoryRules.mountName],
               let book = try await store.collection(owner: DirectoryRules.owner, path: [DirectoryRules.book]) {
                return .found(.collection(DirectoryRules.gatewayView(of: book, for: user)))
            }
            return .missing(parent: parent, parentIsHome: parentPath.isEmpty, name: name)
        }
    }

    /// The store lookup `resolve` makes first for a request on `path`, named before the
    /// request is signed in (`LookupAhead`): the collection for a path of one component below
    /// a home, the parent collection and the member for a deeper one. Nil elsewhere.
    /// `header` gives the request's header of a lower-cased name: a PUT its store may judge
    /// with nothing of the card read says so (`LookupAhead.writesUnread`, `Put`).
    public func lookupAhead(forPath path: String, method: String = "GET",
                            header: (String) -> String? = { _ in nil }) -> LookupAhead? {
        guard case .member(let user, let components)? = ResourcePath(path: path, configuration: configuration) else { return nil }
        if components.count == 1 { return LookupAhead(owner: user, path: components, name: nil) }
        return LookupAhead(owner: user, path: Array(components.dropLast()), name: components[components.count - 1],
                           writesUnread: method == "PUT" && mayWriteUnread(header))
    }

    /// With `directory = gateway`: whether the request is for the directory's search path in
    /// the user's home (`directory~rolo`) or below it.
    func isGatewayPath(_ request: DAVRequest) -> Bool {
        guard case .member(_, let components)? = try? path(of: request) else { return false }
        return components.first == DirectoryRules.mountName
    }

    /// Throws 403 `need-privileges` unless the request's credential holds `privilege` on
    /// `node` (see `Access`, the one place that decides).
    func require(_ privilege: Privileges, on node: Node, _ request: DAVRequest) throws(DAVError) {
        try Access.require(privilege, on: node, href: hrefs.href(for: node), for: request.credential)
    }

    /// The node at the request path, or 404.
    func existingNode(_ request: DAVRequest) async throws -> Node {
        guard case .found(let node) = try await resolve(try path(of: request), for: request.credential) else {
            throw DAVError.notFound
        }
        switch node {
        case .collection(let info), .object(let info, _, _): request.tally?.book(info.id)
        default: break
        }
        return node
    }

    /// The parsed XML body, nil when the body is empty.
    func xmlBody(_ request: DAVRequest) throws(DAVError) -> XMLElement? {
        if request.body.count > configuration.maxXMLBodySize {
            throw DAVError(413, message: "Request body larger than \(configuration.maxXMLBodySize) bytes.")
        }
        if request.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return nil }
        do {
            return try XMLDocumentParser.parse([UInt8](request.body))
        } catch where error.isDoctype {
            // A DOCTYPE is where external entities are declared: refused with the RFC 4918
            // §16 precondition for them, whether or not this one declared any.
            throw .precondition(403, .dav("no-external-entities"), message: "A DOCTYPE is not accepted: \(error.description)")
        } catch {
            throw .badRequest("Malformed XML: \(error.description)")
        }
    }

    static let multistatusContentType = "application/xml; charset=utf-8"

    func multistatusResponse(_ body: Data) -> DAVResponse {
        DAVResponse(status: 207, headers: [("Content-Type", Self.multistatusContentType)], body: body)
    }
}

/// The `Depth` header values.
enum Depth: Sendable, Equatable {
    case zero, one, infinity

    /// Parses the header; `defaultValue` when absent; 400 for anything else.
    init(_ header: String?, default defaultValue: Depth) throws(DAVError) {
        switch header?.trimmingCharacters(in: .whitespaces).lowercased() {
        case nil: self = defaultValue
        case "0": self = .zero
        case "1": self = .one
        case "infinity": self = .infinity
        default: throw .badRequest("Invalid Depth header.")
        }
    }
}
