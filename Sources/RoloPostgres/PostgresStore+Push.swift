import Foundation
import PostgresNIO
import RoloStore

extension PostgresStore {
    static let vapidKeySetting = "push-vapid-key"

    public func pushTopic(collectionID: Int64) async throws -> String {
        let topic = try await autocommit { connection in
            try await connection.first("SELECT push_topic FROM collections WHERE id = \(collectionID)")?.decode(String.self)
        }
        guard let topic else { throw StoreError.notFound }
        return topic
    }

    /// Made by whichever process asks first: the others find its key.
    public func pushKey(creatingWith make: @Sendable () -> Data) async throws -> Data {
        if let key = try await storedPushKey() { return key }
        let made = make()
        return try await transaction { connection in
            try await connection.execute("""
                INSERT INTO settings (key, value) VALUES (\(Self.vapidKeySetting), \(made)) ON CONFLICT (key) DO NOTHING
                """)
            guard let row = try await connection.first("SELECT value FROM settings WHERE key = \(Self.vapidKeySetting)") else {
                throw StoreError.notFound
            }
            return try row.decode(Data.self)
        }
    }

    private func storedPushKey() async throws -> Data? {
        try await autocommit { connection in
            try await connection.first("SELECT value FROM settings WHERE key = \(Self.vapidKeySetting)")?.decode(Data.self)
        }
    }

    public func rotatePushKey(to key: Data) async throws {
        try await transaction { connection in
            try await connection.execute("""
                INSERT INTO settings (key, value) VALUES (\(Self.vapidKeySetting), \(key))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """)
            try await connection.execute("DELETE FROM push_registrations")
        }
    }

    @discardableResult
    public func registerPush(_ request: PushRegistrationRequest, limit: Int) async throws -> PushRegistration {
        let now = self.now
        return try await transaction { connection in
            guard let userID = try await Self.userID(connection, name: request.user) else { throw StoreError.noSuchUser }
            // The book's row, locked: two registrations of one user racing for the last place
            // on the book take turns.
            guard try await connection.first("SELECT 1 FROM collections WHERE id = \(request.collectionID) FOR UPDATE") != nil else {
                throw StoreError.notFound
            }
            if let existing = try await connection.first("""
                SELECT id FROM push_registrations
                WHERE collection_id = \(request.collectionID) AND user_id = \(userID) AND push_resource = \(request.pushResource)
                """)?.decode(String.self) {
                // Renewal: new keys and expiry, same id (the client keeps its Location),
                // and a clean slate for the failure count.
                try await connection.execute("""
                    UPDATE push_registrations SET credential_id = \(request.credentialID), public_key = \(request.publicKey),
                        auth_secret = \(request.authSecret), expires = \(request.expires.timeIntervalSince1970),
                        failures = 0, first_failure = NULL, retry_after = NULL
                    WHERE id = \(existing)
                    """)
                return try await Self.pushRegistration(connection, id: existing)
            }
            let live = try await connection.first("""
                SELECT COUNT(*) FROM push_registrations
                WHERE collection_id = \(request.collectionID) AND user_id = \(userID) AND expires > \(now)
                """)?.decode(Int64.self) ?? 0
            if live >= limit {
                throw StoreError.pushRegistrationLimit(limit)
            }
            // An expired registration of the same book makes room rather than counting.
            try await connection.execute("""
                DELETE FROM push_registrations WHERE collection_id = \(request.collectionID) AND user_id = \(userID) AND expires <= \(now)
                """)
            let id = StoreRandom.token128()
            try await connection.execute("""
                INSERT INTO push_registrations (id, user_id, collection_id, credential_id, push_resource, public_key,
                    auth_secret, expires, created, last_sent_seq)
                VALUES (\(id), \(userID), \(request.collectionID), \(request.credentialID), \(request.pushResource),
                        \(request.publicKey), \(request.authSecret), \(request.expires.timeIntervalSince1970), \(now),
                        (SELECT sync_seq FROM collections WHERE id = \(request.collectionID)))
                """)
            return try await Self.pushRegistration(connection, id: id)
        }
    }

    public func deletePushRegistration(id: String, user: String) async throws -> Bool {
        let now = self.now
        return try await autocommit { connection in
            try await !connection.rows("""
                DELETE FROM push_registrations
                WHERE id = \(id) AND user_id = (SELECT id FROM users WHERE name = \(user)) AND expires > \(now) RETURNING 1
                """).isEmpty
        }
    }

    public func pushRegistrations(collectionID: Int64) async throws -> [PushRegistration] {
        let now = self.now
        return try await autocommit { connection in
            try await connection.rows("""
                \(unescaped: Self.registrationSelect) WHERE p.collection_id = \(collectionID) AND p.expires > \(now) ORDER BY p.created
                """).map(Self.pushRegistration)
        }
    }

    public func pushRegistrations(user: String) async throws -> [PushRegistration] {
        try await autocommit { connection in
            try await connection.rows("""
                \(unescaped: Self.registrationSelect) WHERE u.name = \(user) ORDER BY p.collection_id, p.created
                """).map(Self.pushRegistration)
        }
    }

    public func recordPushOutcome(id: String, _ outcome: PushOutcome) async throws {
        let now = self.now
        try await autocommit { connection in
            switch outcome {
            case .delivered:
                try await connection.execute("""
                    UPDATE push_registrations SET last_success = \(now), failures = 0, first_failure = NULL, retry_after = NULL
                    WHERE id = \(id)
                    """)
            case .failed(let retryAfter):
                try await connection.execute("""
                    UPDATE push_registrations SET failures = failures + 1, first_failure = COALESCE(first_failure, \(now)),
                        retry_after = \(retryAfter?.timeIntervalSince1970)
                    WHERE id = \(id)
                    """)
            case .gone:
                try await connection.execute("DELETE FROM push_registrations WHERE id = \(id)")
            }
        }
    }

    public func prunePushRegistrations() async throws -> Int {
        let now = self.now
        return try await autocommit { connection in
            try await connection.rows("DELETE FROM push_registrations WHERE expires <= \(now) RETURNING 1").count
        }
    }

    // MARK: Rows

    private static let registrationSelect = """
        SELECT p.id, u.name, p.collection_id, p.credential_id, p.push_resource, p.public_key, p.auth_secret,
               p.expires, p.created, p.last_success, p.failures, p.first_failure, p.retry_after
        FROM push_registrations p JOIN users u ON u.id = p.user_id
        """

    private static func pushRegistration(_ connection: Connection, id: String) async throws -> PushRegistration {
        guard let row = try await connection.first("\(unescaped: registrationSelect) WHERE p.id = \(id)") else {
            throw StoreError.notFound
        }
        return try pushRegistration(row)
    }

    private static func pushRegistration(_ row: PostgresRow) throws -> PushRegistration {
        var columns = Columns(row)
        return PushRegistration(
            id: try columns.next(), user: try columns.next(), collectionID: try columns.next(), credentialID: try columns.next(),
            pushResource: try columns.next(), publicKey: try columns.next(), authSecret: try columns.next(),
            expires: try columns.date(), created: try columns.date(), lastSuccess: try columns.optionalDate(),
            failures: Int(try columns.next(Int64.self)), firstFailure: try columns.optionalDate(), retryAfter: try columns.optionalDate())
    }
}
