import Foundation
import RoloStore
import GRDB
import Synchronization

/// `StoreCoordination` for the one process an SQLite file has: the same tables and rules as
/// on PostgreSQL (SQLite's single writer makes each grant atomic), no other process to hear
/// from, and leases that are always granted.
extension SQLiteStore {
    static let lockColumns = "token, user, root, root_href, scope, infinite, owner_xml, timeout, expires"

    static func writeLock(from row: Row) -> WriteLock {
        WriteLock(token: row[0], user: row[1], root: row[2], rootHref: row[3],
                  scope: WriteLockScope(rawValue: row[4]) ?? .exclusive, infinite: row[5], ownerXML: row[6],
                  timeout: row[7], expires: Date(timeIntervalSince1970: row[8]))
    }

    private static func homeLocks(_ db: Database, key: String, now: Date) throws -> [WriteLock] {
        try Row.fetchAll(db, sql: "SELECT \(lockColumns) FROM locks WHERE home = ? AND expires >= ?",
                         arguments: [WriteLock.home(of: key), now.timeIntervalSince1970]).map(writeLock(from:))
    }

    /// Sets `lockRows` to the table's count; called at the end of each write of the table
    /// (writes are serialised, so the last one sets it).
    private func countLocks(_ db: Database) throws {
        lockRows.set(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM locks") ?? 0)
    }

    /// Whether the table may hold a lock; false is certain.
    private func mayHoldLocks() async throws -> Bool {
        if let rows = lockRows.value { return rows > 0 }
        try await pool.write { db in try self.countLocks(db) }
        return lockRows.value != 0
    }

    public func writeLocks(covering key: String, descendants: Bool, now: Date) async throws -> [WriteLock] {
        guard try await mayHoldLocks() else { return [] }
        return try await pool.read { db in
            try Self.homeLocks(db, key: key, now: now).filter { $0.applies(to: key, descendants: descendants) }
                .sorted { $0.token < $1.token }
        }
    }

    public func grantWriteLock(_ lock: WriteLock, maxPerUser: Int, now: Date) async throws -> WriteLockRefusal? {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM locks WHERE expires < ?", arguments: [now.timeIntervalSince1970])
            let held = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM locks WHERE user = ?", arguments: [lock.user]) ?? 0
            if let refusal = WriteLock.refusal(for: lock, among: try Self.homeLocks(db, key: lock.root, now: now),
                                               held: held, maxPerUser: maxPerUser) {
                return refusal
            }
            try db.execute(sql: "INSERT INTO locks (home, \(Self.lockColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           arguments: [WriteLock.home(of: lock.root), lock.token, lock.user, lock.root, lock.rootHref,
                                       lock.scope.rawValue, lock.infinite, lock.ownerXML, lock.timeout,
                                       lock.expires.timeIntervalSince1970])
            try self.countLocks(db)
            return nil
        }
    }

    public func refreshWriteLock(token: String, key: String, timeout: Int, now: Date) async throws -> WriteLock? {
        try await pool.write { db in
            guard var lock = try Row.fetchOne(db, sql: "SELECT \(Self.lockColumns) FROM locks WHERE token = ? AND expires >= ?",
                                              arguments: [token, now.timeIntervalSince1970]).map(Self.writeLock(from:)),
                  lock.covers(key) else { return nil }
            lock.timeout = timeout
            lock.expires = now.addingTimeInterval(TimeInterval(timeout))
            try db.execute(sql: "UPDATE locks SET timeout = ?, expires = ? WHERE token = ?",
                           arguments: [timeout, lock.expires.timeIntervalSince1970, token])
            return lock
        }
    }

    public func removeWriteLock(token: String, key: String, now: Date) async throws -> Bool {
        try await pool.write { db in
            guard let lock = try Row.fetchOne(db, sql: "SELECT \(Self.lockColumns) FROM locks WHERE token = ? AND expires >= ?",
                                              arguments: [token, now.timeIntervalSince1970]).map(Self.writeLock(from:)),
                  lock.covers(key) else { return false }
            try db.execute(sql: "DELETE FROM locks WHERE token = ?", arguments: [token])
            try self.countLocks(db)
            return true
        }
    }

    public func removeWriteLocks(under key: String) async throws {
        // Every DELETE and MOVE calls this: no write transaction when nothing is locked.
        guard try await mayHoldLocks() else { return }
        try await pool.write { db in
            for row in try Row.fetchAll(db, sql: "SELECT token, root FROM locks WHERE home = ?", arguments: [WriteLock.home(of: key)]) {
                let root: String = row[1]
                if root == key || root.hasPrefix(key + "/") {
                    try db.execute(sql: "DELETE FROM locks WHERE token = ?", arguments: [row[0] as String])
                }
            }
            try self.countLocks(db)
        }
    }

    public func removeAllWriteLocks() async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM locks")
            try self.countLocks(db)
        }
    }

    public func claimPushDelivery(registrationID: String, seq: Int64) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE push_registrations SET last_sent_seq = ? WHERE id = ? AND last_sent_seq < ?",
                           arguments: [seq, registrationID, seq])
            return db.changesCount > 0
        }
    }

    public func recordLoginFailure(subnet: String, account: String, window: TimeInterval, now: Date) async throws -> LoginFailureCounts {
        let now = now.timeIntervalSince1970, cutoff = now - window
        return try await pool.write { db in
            try db.execute(sql: "DELETE FROM login_failures WHERE last_failure < ?", arguments: [cutoff])
            func count(_ kind: String, _ key: String) throws -> Int {
                try db.execute(sql: """
                    INSERT INTO login_failures (kind, key, failures, last_failure) VALUES (?, ?, 1, ?)
                    ON CONFLICT (kind, key) DO UPDATE SET failures = failures + 1, last_failure = excluded.last_failure
                    """, arguments: [kind, key, now])
                return try Int.fetchOne(db, sql: "SELECT failures FROM login_failures WHERE kind = ? AND key = ?",
                                        arguments: [kind, key]) ?? 1
            }
            return LoginFailureCounts(subnet: try count("subnet", subnet), account: try count("account", account))
        }
    }

    public func forgetLoginFailures(subnet: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM login_failures WHERE kind = 'subnet' AND key = ?", arguments: [subnet])
        }
    }

    /// One process per file: every change is published where it is made.
    public func followBookChanges() async {}

    public func withMaintenanceLease(_ name: String, _ body: @escaping @Sendable () async throws -> Void) async throws -> Bool {
        try await body()
        return true
    }
}

/// The number of rows in `locks` as the last write of the table left it (nil until first
/// needed). One process writes an SQLite file, so it is exact between writes, and a lookup
/// that finds 0 skips the table: on a server where nobody locks anything, a PUT or DELETE
/// pays no lock read or write.
final class LockRowHint: Sendable {
    private let rows = Mutex<Int?>(nil)
    var value: Int? { rows.withLock { $0 } }
    func set(_ value: Int?) { rows.withLock { $0 = value } }
}
