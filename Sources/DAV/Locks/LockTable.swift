import Foundation

/// WebDAV write locks (RFC 4918 §6, §9.10) held in memory: they guard against lost updates
/// between cooperating clients and vanish on restart, which RFC 4918 permits (a client
/// whose token is gone sees 412 and re-locks).
actor LockTable {
    enum Scope: String, Sendable { case exclusive, shared }

    struct ActiveLock: Sendable {
        var token: String
        var user: String
        /// Resource key of the lock root: the user and path components joined by `/`.
        var root: String
        var rootHref: String
        var scope: Scope
        var infinite: Bool
        /// The `DAV:owner` element's content, verbatim.
        var ownerXML: String
        var timeout: Int
        var expires: Date

        /// Whether the lock applies to the resource at `key`.
        func covers(_ key: String) -> Bool {
            key == root || (infinite && key.hasPrefix(root + "/"))
        }
    }

    private var locks: [String: ActiveLock] = [:]
    /// Counter-based tokens (`urn:uuid:00000000-0000-4000-8000-000000000001`, …) instead of
    /// random ones, for deterministic test servers.
    private let sequentialTokens: Bool
    private var tokensIssued = 0

    init(sequentialTokens: Bool = false) { self.sequentialTokens = sequentialTokens }

    private func nextToken() -> String {
        guard sequentialTokens else { return "urn:uuid:\(UUID().uuidString.lowercased())" }
        tokensIssued += 1
        let counter = String(tokensIssued, radix: 16)
        return "urn:uuid:00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - counter.count)) + counter
    }
    /// Locks one user may hold at once: the table lives in memory and must stay small.
    static let maxLocksPerUser = 1024

    /// Locks that apply to `key`, and with `descendants` also locks on resources below it.
    func locks(covering key: String, descendants: Bool = false) -> [ActiveLock] {
        purgeExpired()
        return locks.values.filter { $0.covers(key) || (descendants && $0.root.hasPrefix(key + "/")) }
            .sorted { $0.token < $1.token }
    }

    enum Refusal: Error { case conflict, tooManyLocks }

    /// Grants a lock unless an exclusive lock (or any lock, for an exclusive request)
    /// conflicts with it, or the user already holds `maxLocksPerUser`.
    func lock(user: String, key: String, href: String, scope: Scope, infinite: Bool, ownerXML: String,
              timeout: Int) -> Result<ActiveLock, Refusal> {
        let conflicting = locks(covering: key, descendants: infinite)
        if conflicting.contains(where: { $0.scope == .exclusive || scope == .exclusive }) { return .failure(.conflict) }
        if locks.values.count(where: { $0.user == user }) >= Self.maxLocksPerUser { return .failure(.tooManyLocks) }
        let lock = ActiveLock(token: nextToken(), user: user, root: key, rootHref: href,
                              scope: scope, infinite: infinite, ownerXML: ownerXML, timeout: timeout,
                              expires: Date().addingTimeInterval(TimeInterval(timeout)))
        locks[lock.token] = lock
        return .success(lock)
    }

    /// Extends a lock that applies to `key`; nil when no such lock exists.
    func refresh(token: String, key: String, timeout: Int) -> ActiveLock? {
        purgeExpired()
        guard var lock = locks[token], lock.covers(key) else { return nil }
        lock.timeout = timeout
        lock.expires = Date().addingTimeInterval(TimeInterval(timeout))
        locks[token] = lock
        return lock
    }

    /// Removes a lock that applies to `key`; false when there is none.
    func unlock(token: String, key: String) -> Bool {
        purgeExpired()
        guard let lock = locks[token], lock.covers(key) else { return false }
        locks[token] = nil
        return true
    }

    /// Drops the locks rooted at or below `key` (the resource was deleted or moved away).
    func release(under key: String) {
        locks = locks.filter { !($0.value.root == key || $0.value.root.hasPrefix(key + "/")) }
    }

    /// Drops every lock (a test-control reset erases the resources they guarded) and
    /// restarts sequential tokens, so a deterministic server issues the same ones again.
    func releaseAll() {
        locks.removeAll()
        tokensIssued = 0
    }

    private func purgeExpired() {
        let now = Date()
        if locks.values.contains(where: { $0.expires < now }) { locks = locks.filter { $0.value.expires >= now } }
    }
}

extension DAVService {
    /// Releases every lock this engine granted: the test-control reset calls it after
    /// erasing the store, so no stale lock outlives the resources it guarded.
    public func releaseAllLocks() async {
        await locks.releaseAll()
    }
}
