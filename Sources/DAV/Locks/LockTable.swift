import Foundation
import RoloStore

/// WebDAV write locks (RFC 4918 §6, §9.10): they guard against lost updates between
/// cooperating clients. The store keeps them (`StoreCoordination`), so that behind a load
/// balancer a LOCK answered by one process and a PUT with its token sent to another agree,
/// and so that two processes never grant conflicting locks. This engine only makes tokens
/// and asks.
struct LockTable: Sendable {
    typealias Scope = WriteLockScope
    typealias ActiveLock = WriteLock

    let store: any StoreCoordination
    private let tokens: TokenSource

    init(store: any StoreCoordination, sequentialTokens: Bool = false) {
        self.store = store
        self.tokens = TokenSource(sequential: sequentialTokens)
    }

    /// Locks one user may hold at once: a client cannot fill the table.
    static let maxLocksPerUser = 1024

    /// Locks that apply to `key`, and with `descendants` also locks on resources below it.
    func locks(covering key: String, descendants: Bool = false) async throws -> [ActiveLock] {
        try await store.writeLocks(covering: key, descendants: descendants, now: Date())
    }

    /// Grants a lock unless an exclusive lock (or any lock, for an exclusive request)
    /// conflicts with it, or the user already holds `maxLocksPerUser`.
    func lock(user: String, key: String, href: String, scope: Scope, infinite: Bool, ownerXML: String,
              timeout: Int) async throws -> Result<ActiveLock, WriteLockRefusal> {
        let now = Date()
        let lock = ActiveLock(token: tokens.next(), user: user, root: key, rootHref: href, scope: scope, infinite: infinite,
                              ownerXML: ownerXML, timeout: timeout, expires: now.addingTimeInterval(TimeInterval(timeout)))
        if let refusal = try await store.grantWriteLock(lock, maxPerUser: Self.maxLocksPerUser, now: now) {
            return .failure(refusal)
        }
        return .success(lock)
    }

    /// Extends a lock that applies to `key`; nil when no such lock exists.
    func refresh(token: String, key: String, timeout: Int) async throws -> ActiveLock? {
        try await store.refreshWriteLock(token: token, key: key, timeout: timeout, now: Date())
    }

    /// Removes a lock that applies to `key`; false when there is none.
    func unlock(token: String, key: String) async throws -> Bool {
        try await store.removeWriteLock(token: token, key: key, now: Date())
    }

    /// Drops the locks rooted at or below `key` (the resource was deleted or moved away).
    func release(under key: String) async throws {
        try await store.removeWriteLocks(under: key)
    }

    /// Drops every lock (a test-control reset erases the resources they guarded) and
    /// restarts sequential tokens, so a deterministic server issues the same ones again.
    func releaseAll() async throws {
        tokens.reset()
        try await store.removeAllWriteLocks()
    }
}

/// Lock tokens: random, or counter-based (`urn:uuid:00000000-0000-4000-8000-000000000001`, …)
/// for deterministic test servers (one process, so one counter).
private final class TokenSource: @unchecked Sendable {
    private let sequential: Bool
    private let lock = NSLock()
    private var issued = 0

    init(sequential: Bool) { self.sequential = sequential }

    func next() -> String {
        guard sequential else { return "urn:uuid:\(UUID().uuidString.lowercased())" }
        let counter = String(lock.withLock { issued += 1; return issued }, radix: 16)
        return "urn:uuid:00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - counter.count)) + counter
    }

    func reset() { lock.withLock { issued = 0 } }
}

extension DAVService {
    /// Releases every lock: the test-control reset calls it after erasing the store, so no
    /// stale lock outlives the resources it guarded.
    public func releaseAllLocks() async {
        try? await locks.releaseAll()
    }
}
