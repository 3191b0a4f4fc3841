import Foundation
import Logging
import PostgresNIO
import RoloStore

/// `StoreCoordination` on PostgreSQL, for several processes on one database: locks in the
/// `locks` table (each grant serialised by a transaction-scoped advisory lock, so two
/// processes never grant conflicting ones), push claims as one conditional `UPDATE`, book
/// changes heard through `LISTEN rolo_book_changes` (the `collections_notify_change`
/// trigger), and maintenance leases as session-level advisory locks.
extension PostgresStore {
    /// Key of the advisory lock every lock grant takes ("rololock"): grants are rare, and one
    /// key for all of them makes the conflict check and the per-user cap atomic together.
    static let writeLockGrantKey: Int64 = 0x726F_6C6F_6C6F_636B
    static let lockColumns = "token, \"user\", root, root_href, scope, infinite, owner_xml, timeout, expires"
    static let bookChangesChannel = "rolo_book_changes"

    /// A row of `lockColumns`.
    static func writeLock(from row: Columns) throws -> WriteLock {
        var columns = row
        let token = try columns.next(String.self), user = try columns.next(String.self), root = try columns.next(String.self)
        let href = try columns.next(String.self), scope = try columns.next(String.self), infinite = try columns.next(Bool.self)
        let owner = try columns.next(String.self), timeout = try columns.next(Int64.self), expires = try columns.next(Double.self)
        return WriteLock(token: token, user: user, root: root, rootHref: href, scope: WriteLockScope(rawValue: scope) ?? .exclusive,
                         infinite: infinite, ownerXML: owner, timeout: Int(timeout), expires: Date(timeIntervalSince1970: expires))
    }

    /// The locks of `key`'s home, in the transaction of a lock's grant.
    private static func homeLocks(_ connection: Connection, key: String, now: Date) async throws -> [WriteLock] {
        try await connection.rows(HomeLocksSQL.self, WriteLock.home(of: key), now.timeIntervalSince1970).map { try writeLock(from: Columns($0)) }
    }

    /// Every write asks it (are there locks in this home?), from any process: on the
    /// request's event loop's own connection when there is one (`rowsOnLoop`), else through
    /// the pool.
    private func homeLocks(key: String, now: Date) async throws -> [WriteLock] {
        let home = WriteLock.home(of: key)
        // None there when the request was signed in (`LookupAhead`, read with the stamp).
        if LookupAhead.current?.homeHeldNoLocks(home) == true { return [] }
        if let rows = await rowsOnLoop(HomeLocksSQL.self, [PostgresData(string: home),
                                                           PostgresData(double: now.timeIntervalSince1970)]) {
            return try rows.map { try Self.writeLock(from: Columns(legacyPrepared: $0)) }
        }
        return try await autocommit { try await Self.homeLocks($0, key: key, now: now) }
    }

    enum HomeLocksSQL: PreparedSQL {
        static let sql = "SELECT \(lockColumns) FROM locks WHERE home = $1 AND expires >= $2"
    }

    private static func binds(_ values: any PostgresDynamicTypeEncodable...) -> PostgresBindings {
        var binds = PostgresBindings()
        for value in values { binds.append(value) }
        return binds
    }

    public func writeLocks(covering key: String, descendants: Bool, now: Date) async throws -> [WriteLock] {
        try await homeLocks(key: key, now: now).filter { $0.applies(to: key, descendants: descendants) }.sorted { $0.token < $1.token }
    }

    public func grantWriteLock(_ lock: WriteLock, maxPerUser: Int, now: Date) async throws -> WriteLockRefusal? {
        // Writes that go unread, skipping the look-up of locks (`CardCache.writeTarget`) stop
        // before the grant, and no read racing it keeps a home without locks.
        cardCache.forgetWriteTargets()
        defer { cardCache.forgetWriteTargets() }
        return try await transaction { connection in
            try await connection.execute("SELECT pg_advisory_xact_lock(\(Self.writeLockGrantKey))")
            try await connection.execute("DELETE FROM locks WHERE expires < \(now.timeIntervalSince1970)")
            let held = try await connection.first("SELECT count(*) FROM locks WHERE \"user\" = \(lock.user)")?.decode(Int64.self) ?? 0
            if let refusal = WriteLock.refusal(for: lock, among: try await Self.homeLocks(connection, key: lock.root, now: now),
                                               held: Int(held), maxPerUser: maxPerUser) {
                return refusal
            }
            try await connection.execute("""
                INSERT INTO locks (home, token, "user", root, root_href, scope, infinite, owner_xml, timeout, expires)
                VALUES (\(WriteLock.home(of: lock.root)), \(lock.token), \(lock.user), \(lock.root), \(lock.rootHref),
                        \(lock.scope.rawValue), \(lock.infinite), \(lock.ownerXML), \(Int64(lock.timeout)),
                        \(lock.expires.timeIntervalSince1970))
                """)
            return nil
        }
    }

    public func refreshWriteLock(token: String, key: String, timeout: Int, now: Date) async throws -> WriteLock? {
        try await transaction { connection in
            guard let row = try await connection.first(PostgresQuery(
                    unsafeSQL: "SELECT \(Self.lockColumns) FROM locks WHERE token = $1 AND expires >= $2 FOR UPDATE",
                    binds: Self.binds(token, now.timeIntervalSince1970))),
                  case var lock = try Self.writeLock(from: Columns(row)), lock.covers(key) else { return nil }
            lock.timeout = timeout
            lock.expires = now.addingTimeInterval(TimeInterval(timeout))
            try await connection.execute("""
                UPDATE locks SET timeout = \(Int64(timeout)), expires = \(lock.expires.timeIntervalSince1970) WHERE token = \(token)
                """)
            return lock
        }
    }

    public func removeWriteLock(token: String, key: String, now: Date) async throws -> Bool {
        try await transaction { connection in
            guard let row = try await connection.first(PostgresQuery(
                    unsafeSQL: "SELECT \(Self.lockColumns) FROM locks WHERE token = $1 AND expires >= $2 FOR UPDATE",
                    binds: Self.binds(token, now.timeIntervalSince1970))),
                  try Self.writeLock(from: Columns(row)).covers(key) else { return false }
            try await connection.execute("DELETE FROM locks WHERE token = \(token)")
            return true
        }
    }

    public func removeWriteLocks(under key: String) async throws {
        let below = key + "/"
        try await autocommit { connection in
            try await connection.execute("""
                DELETE FROM locks WHERE home = \(WriteLock.home(of: key))
                    AND (root = \(key) OR starts_with(root, \(below)))
                """)
        }
    }

    public func removeAllWriteLocks() async throws {
        try await autocommit { connection in try await connection.execute("DELETE FROM locks") }
    }

    // MARK: Push

    public func claimPushDelivery(registrationID: String, seq: Int64) async throws -> Bool {
        try await autocommit { connection in
            try await connection.first("""
                UPDATE push_registrations SET last_sent_seq = \(seq) WHERE id = \(registrationID) AND last_sent_seq < \(seq)
                RETURNING id
                """) != nil
        }
    }

    /// Until cancelled, the notices connection (`followCacheNotices`, which every store
    /// keeps from its opening) publishes each book change it hears into `bookChanges`: one
    /// connection listens for the cache and for push, with one heartbeat. Its own writes
    /// are heard too (the feed keeps one entry per book, and the delivery claim sends each
    /// message once). Books with a registration owed a message are published as changed
    /// now and after every reconnection: whatever was committed while nobody listened (or
    /// before push followed) is still announced.
    public func followBookChanges() async {
        bookChangeFollowers.withLock { $0 += 1 }
        defer { bookChangeFollowers.withLock { $0 -= 1 } }
        var attempt = 0
        while !Task.isCancelled {
            do {
                try await publishOwedBooks()
                break
            } catch {
                attempt += 1
                if attempt == 1 || attempt % 60 == 0 {
                    logger.warning("push: reading the books owed a message failed; retrying",
                                   metadata: ["error": "\(Self.describe(error))"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
    }

    func publishOwedBooks() async throws {
        let owed = try await autocommit { connection in
            try await connection.rows("""
                SELECT c.id, c.sync_seq FROM collections c
                WHERE EXISTS (SELECT 1 FROM push_registrations p WHERE p.collection_id = c.id AND p.last_sent_seq < c.sync_seq)
                """).map { try $0.decode((Int64, Int64).self) }
        }
        for (id, seq) in owed { bookChanges.publish(BookChange(collectionID: id, seq: seq)) }
    }

    /// `{"c": collection id, "s": seq, "x": exclusion or null}`, as the trigger writes it.
    static func bookChange(fromPayload payload: String) -> BookChange? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
              let id = (object["c"] as? NSNumber)?.int64Value, let seq = (object["s"] as? NSNumber)?.int64Value
        else { return nil }
        let exclusion = (object["x"] as? String).flatMap(PushExclusion.init(encoded:)) ?? .nobody
        return BookChange(collectionID: id, seq: seq, exclusion: exclusion)
    }

    /// Makes the transaction's writes carry the current request's `Push-Dont-Notify` into
    /// the trigger's notification (only requests with the header pay the round trip).
    static func announceExclusion(_ connection: Connection) async throws {
        guard let exclusion = PushExclusion.current, exclusion != .nobody else { return }
        try await connection.execute("SELECT set_config('rolo.push_exclusion', \(exclusion.encoded), true)")
    }

    // MARK: Failed logins

    public func recordLoginFailure(subnet: String, account: String, window: TimeInterval, now: Date) async throws -> LoginFailureCounts {
        let now = now.timeIntervalSince1970, cutoff = now - window
        return try await transaction { connection in
            try await connection.execute("DELETE FROM login_failures WHERE last_failure < \(cutoff)")
            // One statement per key: the row lock of ON CONFLICT makes concurrent counts add up.
            func count(_ kind: String, _ key: String) async throws -> Int {
                let failures = try await connection.first("""
                    INSERT INTO login_failures (kind, key, failures, last_failure) VALUES (\(kind), \(key), 1, \(now))
                    ON CONFLICT (kind, key) DO UPDATE SET failures = login_failures.failures + 1, last_failure = EXCLUDED.last_failure
                    RETURNING failures
                    """)?.decode(Int64.self) ?? 1
                return Int(failures)
            }
            return LoginFailureCounts(subnet: try await count("subnet", subnet), account: try await count("account", account))
        }
    }

    public func forgetLoginFailures(subnet: String) async throws {
        try await autocommit { connection in
            try await connection.execute("DELETE FROM login_failures WHERE kind = 'subnet' AND key = \(subnet)")
        }
    }

    // MARK: Housekeeping

    public func withMaintenanceLease(_ name: String, _ body: @escaping @Sendable () async throws -> Void) async throws -> Bool {
        let key = Self.leaseKey(name)
        return try await leased { connection in
            guard try await connection.first("SELECT pg_try_advisory_lock(\(key))")?.decode(Bool.self) == true else {
                return false
            }
            do {
                try await body()
            } catch {
                _ = try? await connection.execute("SELECT pg_advisory_unlock(\(key))")
                throw error
            }
            try await connection.execute("SELECT pg_advisory_unlock(\(key))")
            return true
        }
    }

    /// A stable 64-bit key for a lease name (FNV-1a of "rolo-lease:" + name): the same in
    /// every process, unlike `hashValue`.
    static func leaseKey(_ name: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in ("rolo-lease:" + name).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }
}

extension PushExclusion {
    /// As JSON text: `{"all":true}` or `{"user":…,"ids":[…]}`.
    var encoded: String {
        let object: [String: Any] = switch self {
        case .everyone: ["all": true]
        case .registrations(let user, let ids): ["user": user, "ids": ids.sorted()]
        }
        return String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8),
                      as: UTF8.self)
    }

    init?(encoded: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(encoded.utf8)) as? [String: Any] else { return nil }
        if object["all"] as? Bool == true {
            self = .everyone
        } else if let user = object["user"] as? String, let ids = object["ids"] as? [String] {
            self = .registrations(user: user, ids: Set(ids))
        } else {
            return nil
        }
    }
}
