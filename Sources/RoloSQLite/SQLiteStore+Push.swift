import Crypto
import Foundation
import RoloStore
import GRDB

extension SQLiteStore {
    static let vapidKeySetting = "push-vapid-key"

    public func pushTopic(collectionID: Int64) async throws -> String {
        try await pool.read { db in
            guard let topic = try String.fetchOne(db.cachedStatement(sql: "SELECT push_topic FROM collections WHERE id = ?"),
                                                  arguments: [collectionID]) else { throw StoreError.notFound }
            return topic
        }
    }

    public func pushKey(creatingWith make: @Sendable () -> Data) async throws -> Data {
        try await pool.write { db in
            if let key = try Data.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [Self.vapidKeySetting]) {
                return key
            }
            let key = make()
            try db.execute(sql: "INSERT INTO settings (key, value) VALUES (?, ?)", arguments: [Self.vapidKeySetting, key])
            return key
        }
    }

    public func rotatePushKey(to key: Data) async throws {
        try await pool.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", arguments: [Self.vapidKeySetting, key])
            try db.execute(sql: "DELETE FROM push_registrations")
        }
    }

    @discardableResult
    public func registerPush(_ request: PushRegistrationRequest, limit: Int) async throws -> PushRegistration {
        try await pool.write { db in
            guard let userID = try Self.userID(db, name: request.user) else { throw StoreError.noSuchUser }
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM collections WHERE id = ?)",
                                    arguments: [request.collectionID]) == true else { throw StoreError.notFound }
            let now = self.now
            let existing = try String.fetchOne(db, sql: """
                SELECT id FROM push_registrations WHERE collection_id = ? AND user_id = ? AND push_resource = ?
                """, arguments: [request.collectionID, userID, request.pushResource])
            if let existing {
                // Renewal: new keys and expiry, same id (the client keeps its Location),
                // and a clean slate for the failure count.
                try db.execute(sql: """
                    UPDATE push_registrations SET credential_id = ?, public_key = ?, auth_secret = ?, expires = ?,
                        failures = 0, first_failure = NULL, retry_after = NULL
                    WHERE id = ?
                    """, arguments: [request.credentialID, request.publicKey, request.authSecret,
                                     request.expires.timeIntervalSince1970, existing])
                return try Self.pushRegistration(db, id: existing)!
            }
            let live = try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM push_registrations WHERE collection_id = ? AND user_id = ? AND expires > ?
                """, arguments: [request.collectionID, userID, now]) ?? 0
            if live >= limit {
                throw StoreError.pushRegistrationLimit(limit)
            }
            // An expired registration of the same book makes room rather than counting.
            try db.execute(sql: "DELETE FROM push_registrations WHERE collection_id = ? AND user_id = ? AND expires <= ?",
                           arguments: [request.collectionID, userID, now])
            let id = StoreRandom.token128()
            try db.execute(sql: """
                INSERT INTO push_registrations (id, user_id, collection_id, credential_id, push_resource, public_key,
                    auth_secret, expires, created, last_sent_seq)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT sync_seq FROM collections WHERE id = ?))
                """, arguments: [id, userID, request.collectionID, request.credentialID, request.pushResource,
                                 request.publicKey, request.authSecret, request.expires.timeIntervalSince1970, now,
                                 request.collectionID])
            return try Self.pushRegistration(db, id: id)!
        }
    }

    public func deletePushRegistration(id: String, user: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: """
                DELETE FROM push_registrations
                WHERE id = ? AND user_id = (SELECT id FROM users WHERE name = ?) AND expires > ?
                """, arguments: [id, user, self.now])
            return db.changesCount > 0
        }
    }

    public func pushRegistrations(collectionID: Int64) async throws -> [PushRegistration] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "\(Self.registrationSelect) WHERE p.collection_id = ? AND p.expires > ? ORDER BY p.created",
                             arguments: [collectionID, self.now]).map(Self.pushRegistration(from:))
        }
    }

    public func pushRegistrations(user: String) async throws -> [PushRegistration] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "\(Self.registrationSelect) WHERE u.name = ? ORDER BY p.collection_id, p.created",
                             arguments: [user]).map(Self.pushRegistration(from:))
        }
    }

    public func recordPushOutcome(id: String, _ outcome: PushOutcome) async throws {
        let now = self.now
        try await pool.write { db in
            switch outcome {
            case .delivered:
                try db.execute(sql: """
                    UPDATE push_registrations SET last_success = ?, failures = 0, first_failure = NULL, retry_after = NULL
                    WHERE id = ?
                    """, arguments: [now, id])
            case .failed(let retryAfter):
                try db.execute(sql: """
                    UPDATE push_registrations SET failures = failures + 1, first_failure = COALESCE(first_failure, ?),
                        retry_after = ?
                    WHERE id = ?
                    """, arguments: [now, retryAfter?.timeIntervalSince1970, id])
            case .gone:
                try db.execute(sql: "DELETE FROM push_registrations WHERE id = ?", arguments: [id])
            }
        }
    }

    public func prunePushRegistrations() async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM push_registrations WHERE expires <= ?", arguments: [self.now])
            return db.changesCount
        }
    }

    // MARK: Rows

    private static let registrationSelect = """
        SELECT p.id, u.name, p.collection_id, p.credential_id, p.push_resource, p.public_key, p.auth_secret,
               p.expires, p.created, p.last_success, p.failures, p.first_failure, p.retry_after
        FROM push_registrations p JOIN users u ON u.id = p.user_id
        """

    private static func pushRegistration(_ db: Database, id: String) throws -> PushRegistration? {
        try Row.fetchOne(db, sql: "\(registrationSelect) WHERE p.id = ?", arguments: [id]).map(pushRegistration(from:))
    }

    private static func pushRegistration(from row: Row) -> PushRegistration {
        func date(_ index: Int) -> Date? { (row[index] as Double?).map(Date.init(timeIntervalSince1970:)) }
        return PushRegistration(id: row[0], user: row[1], collectionID: row[2], credentialID: row[3], pushResource: row[4],
                                publicKey: row[5], authSecret: row[6], expires: date(7)!, created: date(8)!,
                                lastSuccess: date(9), failures: row[10], firstFailure: date(11), retryAfter: date(12))
    }
}
