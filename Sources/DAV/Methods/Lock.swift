import DAVXML
import Foundation
import RoloStore

/// LOCK and UNLOCK (RFC 4918 §9.10, §9.11): exclusive and shared write locks, Depth 0 or
/// infinity, refresh with an empty body, and lock-null creation of an empty file. Writes
/// to locked resources need the token in the `If` header (else 423).
extension DAVService {
    static let defaultLockTimeout = 3600
    static let maxLockTimeout = 86_400

    func lock(_ request: DAVRequest) async throws -> DAVResponse {
        let path = try path(of: request)
        guard case .member = path, let key = lockKey(path) else { throw DAVError(403, message: "This collection cannot be locked.") }
        let timeout = Self.lockTimeout(request.headers["timeout"])
        guard let body = try xmlBody(request) else { return try await refreshLock(request, key: key, timeout: timeout) }
        guard body.namespace == Namespace.dav, body.name == "lockinfo" else { throw DAVError.badRequest("Expected DAV:lockinfo.") }
        let scope: LockTable.Scope = body.child(Namespace.dav, "lockscope")?.child(Namespace.dav, "shared") != nil ? .shared : .exclusive
        guard body.child(Namespace.dav, "locktype")?.child(Namespace.dav, "write") != nil else {
            throw DAVError.badRequest("Only write locks exist.")
        }
        let depth = try Depth(request.headers["depth"], default: .infinity)
        guard depth != .one else { throw DAVError.badRequest("LOCK Depth must be 0 or infinity.") }

        var created = false
        switch try await resolve(path, for: request.credential) {
        case .found(let node):
            // A lock is a promise to write: not for who may only read.
            try require(.writeContent, on: node, request)
        case .missing(let parent, _, let name):
            // Locking an unmapped URL creates an empty file (RFC 4918 §7.3).
            guard let parent else { throw DAVError.conflict }
            try require(.bind, on: .collection(parent), request)
            guard parent.kind == .plain else { throw DAVError(409, message: "An address book holds only vCards.") }
            try await checkLocks(request, path: path, descendants: false)
            _ = try await store.putResource(collectionID: parent.id, name: name, data: Data(), contentType: "application/octet-stream",
                                            card: nil, precondition: .ifNoneMatchAny)
            created = true
        }
        let granted = try await locks.lock(user: request.user, key: key, href: hrefFor(path), scope: scope,
                                       infinite: depth == .infinity,
                                       ownerXML: body.child(Namespace.dav, "owner")?.innerXML ?? "", timeout: timeout)
        switch granted {
        case .success(let lock):
            return lockResponse(lock, status: created ? 201 : 200, newToken: true)
        case .failure(WriteLockRefusal.conflict):
            throw DAVError.precondition(423, .dav("no-conflicting-lock"), message: "The resource is locked.")
        case .failure(WriteLockRefusal.tooManyLocks):
            throw DAVError(403, message: "Too many locks held; unlock some first.")
        }
    }

    private func refreshLock(_ request: DAVRequest, key: String, timeout: Int) async throws -> DAVResponse {
        for token in Preconditions.stateTokens(request.headers["if"]) {
            if let lock = try await locks.refresh(token: token, key: key, timeout: timeout) {
                return lockResponse(lock, status: 200, newToken: false)
            }
        }
        throw DAVError.precondition(412, .dav("lock-token-matches-request-uri"), message: "No lock to refresh.")
    }

    func unlock(_ request: DAVRequest) async throws -> DAVResponse {
        let path = try path(of: request)
        guard let key = lockKey(path), let header = request.headers["lock-token"] else {
            throw DAVError.badRequest("UNLOCK needs a Lock-Token header.")
        }
        let token = header.trimmingCharacters(in: CharacterSet(charactersIn: "<> "))
        guard try await locks.unlock(token: token, key: key) else {
            throw DAVError.precondition(409, .dav("lock-token-matches-request-uri"))
        }
        return DAVResponse(status: 204)
    }

    private func lockResponse(_ lock: LockTable.ActiveLock, status: Int, newToken: Bool) -> DAVResponse {
        var xml = XMLWriter()
        xml.element(Namespace.dav, "prop") { $0.element(Namespace.dav, "lockdiscovery") { Self.writeActiveLock(lock, into: &$0) } }
        xml.raw("\n")
        var headers = [("Content-Type", "application/xml; charset=utf-8")]
        if newToken { headers.append(("Lock-Token", "<\(lock.token)>")) }
        return DAVResponse(status: status, headers: headers, body: Data(xml.bytes))
    }

    /// `<d:activelock>` describing one lock (LOCK answers and `DAV:lockdiscovery`).
    static func writeActiveLock(_ lock: LockTable.ActiveLock, into xml: inout XMLWriter) {
        let dav = Namespace.dav
        xml.element(dav, "activelock") { xml in
            xml.element(dav, "locktype") { $0.empty(dav, "write") }
            xml.element(dav, "lockscope") { $0.empty(dav, lock.scope.rawValue) }
            xml.element(dav, "depth", text: lock.infinite ? "infinity" : "0")
            if !lock.ownerXML.isEmpty { xml.property(.dav("owner"), .innerXML(lock.ownerXML)) }
            xml.element(dav, "timeout", text: "Second-\(lock.timeout)")
            xml.property(.dav("locktoken"), .href(lock.token))
            xml.property(.dav("lockroot"), .href(lock.rootHref))
        }
    }

    /// `Second-600` or `Infinite` (first acceptable value), capped.
    static func lockTimeout(_ header: String?) -> Int {
        for part in (header ?? "").split(separator: ",") {
            let value = part.trimmingCharacters(in: .whitespaces)
            if value.lowercased() == "infinite" { return maxLockTimeout }
            if value.lowercased().hasPrefix("second-"), let seconds = Int(value.dropFirst(7)), seconds > 0 {
                return min(seconds, maxLockTimeout)
            }
        }
        return defaultLockTimeout
    }
}

// MARK: - Lock checks used by the write methods

extension DAVService {
    /// The lock-table key of a path in a home (`user/comp/comp`); nil above homes.
    func lockKey(_ path: ResourcePath) -> String? {
        guard case .member(let user, let components) = path else { return nil }
        return ([user] + components).joined(separator: "/")
    }

    func hrefFor(_ path: ResourcePath) -> String {
        guard case .member(let user, let components) = path else { return hrefs.root }
        return hrefs.resource(owner: user, collectionPath: Array(components.dropLast()), name: components.last ?? "")
    }

    /// 423 with `DAV:lock-token-submitted` unless the `If` header names the token of every
    /// lock on the resource (and, with `descendants`, on anything below it).
    func checkLocks(_ request: DAVRequest, path: ResourcePath, descendants: Bool) async throws {
        guard let key = lockKey(path) else { return }
        let held = try await locks.locks(covering: key, descendants: descendants)
        guard !held.isEmpty else { return }
        let submitted = Set(Preconditions.stateTokens(request.headers["if"]))
        if let missing = held.first(where: { !submitted.contains($0.token) }) {
            throw DAVError(423, condition: .dav("lock-token-submitted"), conditionHref: missing.rootHref,
                           message: "The resource is locked; send its lock token in an If header.")
        }
    }

    /// The `If` header against the resource's ETag and the locks that apply to it.
    func ifHeaderHolds(_ request: DAVRequest, path: ResourcePath, etag: String?) async throws -> Bool {
        guard let header = request.headers["if"] else { return true }
        var tokens = Set<String>()
        if let key = lockKey(path) { tokens = Set(try await locks.locks(covering: key).map(\.token)) }
        return Preconditions.ifHeaderHolds(header, etag: etag, activeTokens: tokens)
    }
}
