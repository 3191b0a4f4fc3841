import Foundation

// What several Rolo processes serving one database share beyond the data itself (issue
// 20): WebDAV write locks, the right to send a push message, and the right to run a
// periodic housekeeping job. Each lives in the database, so that a load balancer may send
// any request to any process; SQLite (one process) implements the same contract, so that
// the DAV engine, the notifier and the upkeep have one code path.

/// `exclusive` or `shared` (RFC 4918 §6.1).
public enum WriteLockScope: String, Sendable, Hashable {
    case exclusive, shared
}

/// A WebDAV write lock as the store keeps it.
public struct WriteLock: Sendable, Hashable {
    public var token: String
    /// Who took it (counts against that user's `maxPerUser`).
    public var user: String
    /// Resource key of the lock root: the home's owner and path components joined by `/`.
    public var root: String
    public var rootHref: String
    public var scope: WriteLockScope
    public var infinite: Bool
    /// The `DAV:owner` element's content, verbatim.
    public var ownerXML: String
    public var timeout: Int
    public var expires: Date

    public init(token: String, user: String, root: String, rootHref: String, scope: WriteLockScope, infinite: Bool,
                ownerXML: String, timeout: Int, expires: Date) {
        self.token = token; self.user = user; self.root = root; self.rootHref = rootHref; self.scope = scope
        self.infinite = infinite; self.ownerXML = ownerXML; self.timeout = timeout; self.expires = expires
    }

    /// Whether the lock applies to the resource at `key`.
    public func covers(_ key: String) -> Bool {
        root == key || (infinite && key.hasPrefix(root + "/"))
    }

    /// Whether it applies to `key`, or with `descendants` lies below it.
    public func applies(to key: String, descendants: Bool) -> Bool {
        covers(key) || (descendants && root.hasPrefix(key + "/"))
    }

    /// The first component of a key: every lock that can conflict with one at `key` has
    /// the same, so a store reads only those (column `home`).
    public static func home(of key: String) -> String {
        String(key.prefix { $0 != "/" })
    }

    /// Why `request` cannot be granted given the unexpired locks of its home and the number
    /// `held` its user already holds: an exclusive lock (or any lock, for an exclusive
    /// request) in its way, or the per-user cap. Nil: grant it. Every store decides with
    /// this, inside the transaction that inserts the lock.
    public static func refusal(for request: WriteLock, among existing: [WriteLock], held: Int,
                               maxPerUser: Int) -> WriteLockRefusal? {
        let conflicting = existing.filter { $0.applies(to: request.root, descendants: request.infinite) }
        if conflicting.contains(where: { $0.scope == .exclusive || request.scope == .exclusive }) { return .conflict }
        if held >= maxPerUser { return .tooManyLocks }
        return nil
    }
}

/// Why a lock was not granted.
public enum WriteLockRefusal: Error, Sendable, Hashable {
    case conflict, tooManyLocks
}

/// Coordination of processes on one database. Every `RoloStore` has it.
public protocol StoreCoordination: Sendable {
    // MARK: WebDAV locks
    /// Unexpired locks that apply to `key` (with `descendants`, also those rooted below it),
    /// in token order.
    func writeLocks(covering key: String, descendants: Bool, now: Date) async throws -> [WriteLock]
    /// Inserts `lock` unless `WriteLock.refusal` says no, decided atomically: two processes
    /// never both grant conflicting locks. Expired locks are dropped first.
    func grantWriteLock(_ lock: WriteLock, maxPerUser: Int, now: Date) async throws -> WriteLockRefusal?
    /// Extends the unexpired lock `token` if it applies to `key`; nil when there is none.
    func refreshWriteLock(token: String, key: String, timeout: Int, now: Date) async throws -> WriteLock?
    /// Removes the unexpired lock `token` if it applies to `key`; false when there is none.
    func removeWriteLock(token: String, key: String, now: Date) async throws -> Bool
    /// Drops the locks rooted at or below `key` (the resource was deleted or moved away).
    func removeWriteLocks(under key: String) async throws
    /// Drops every lock (a test-control reset).
    func removeAllWriteLocks() async throws

    // MARK: Push
    /// Claims the delivery of `registrationID`'s message for the book at `seq`: true for
    /// exactly one caller across every process (the first to claim a seq above the last
    /// claimed one), which then sends; the others skip it.
    func claimPushDelivery(registrationID: String, seq: Int64) async throws -> Bool
    /// Runs until cancelled, publishing into `bookChanges` the book changes that other
    /// processes (another `rolo serve`, the CLI) commit. Returns at once where no other
    /// process can write (SQLite).
    func followBookChanges() async

    // MARK: Failed logins
    /// Counts a failed login against the client's subnet key and against the account tried,
    /// each starting afresh when its last failure is more than `window` seconds before `now`,
    /// and returns both counts with this one. Every process adds to the same counts, so N
    /// processes behind a balancer do not give a guesser N times the attempts.
    func recordLoginFailure(subnet: String, account: String, window: TimeInterval, now: Date) async throws -> LoginFailureCounts
    /// Forgets the subnet's failures (a login from it succeeded).
    func forgetLoginFailures(subnet: String) async throws

    // MARK: Housekeeping
    /// Runs `body` unless another process holds the lease `name`, holding it meanwhile;
    /// false when it did not run. Periodic jobs take one, so that they run in one process
    /// at a time.
    func withMaintenanceLease(_ name: String, _ body: @escaping @Sendable () async throws -> Void) async throws -> Bool
}

/// Failed logins within the window, as every process counted them.
public struct LoginFailureCounts: Sendable, Hashable {
    public var subnet: Int
    public var account: Int
    public init(subnet: Int, account: Int) { self.subnet = subnet; self.account = account }
}
