import Foundation
import HummingbirdBcrypt
import PostgresNIO
import RoloStore

extension PostgresStore {
    /// A valid hash of no password, verified against when the user is unknown so that the
    /// answer takes as long as for a known user.
    private static let decoyHash = Bcrypt.hash("rolo decoy password", cost: 4)

    public func createUser(name: String, password: String) async throws {
        try Naming.validate(name, what: "user")
        // bcrypt is tens of milliseconds of CPU: hash before taking a connection.
        let hash = Bcrypt.hash(password, cost: bcryptCost)
        let now = self.now
        do {
            try await transaction { connection in
                if try await Self.userID(connection, name: name) != nil { throw StoreError.userExists }
                guard let row = try await connection.first("""
                    INSERT INTO users (name, password_hash, created) VALUES (\(name), \(hash), \(now)) RETURNING id
                    """) else { throw StoreError.userExists }
                try await Self.insertCollection(connection, ownerID: try row.decode(Int64.self), parentID: nil, path: ["default"],
                                                kind: .addressBook, displayName: "Contacts", description: nil, now: now)
            }
        } catch where Self.isUniqueViolation(error) {
            throw StoreError.userExists
        }
    }

    public func setPassword(user: String, password: String) async throws {
        try await changingSignInOrBooks {
            let hash = Bcrypt.hash(password, cost: bcryptCost)
            try await transaction { connection in
                if try await connection.rows("UPDATE users SET password_hash = \(hash) WHERE name = \(user) RETURNING 1").isEmpty {
                    throw StoreError.noSuchUser
                }
                // A new password signs every browser out.
                try await Self.deleteWebSessions(connection, user: user)
            }
        }
    }

    public func verifyPassword(user: String, password: String) async throws -> Bool {
        let hash = try await autocommit { connection in
            // A disabled account's hash is still checked (the decoy's), so the answer takes as long.
            try await connection.first("SELECT password_hash, disabled FROM users WHERE name = \(user)")
                .map { row -> String? in
                    let (hash, disabled) = try row.decode((String, Bool).self)
                    return disabled ? nil : hash
                } ?? nil
        }
        guard let hash else {
            _ = Bcrypt.verify(password, hash: Self.decoyHash)
            return false
        }
        return Bcrypt.verify(password, hash: hash)
    }

    /// The stamp (or a device's app password) and the request's first lookup come in one
    /// statement (`StampAndMemberSQL`, `AppPasswordAndMemberSQL`).
    public var readsLookupsAhead: Bool { true }

    public func accountPasswordStamp(user: String) async throws -> String? {
        // Every request but an inline GET reads it first, on the request's event loop's own
        // connection: with the request's first lookup when the server named it
        // (`LookupAhead`), else gathered with the GETs (`readOnLoop`: no card asked for). One
        // round trip without the pool's thread hops; a failed read there asks the pool.
        if let ahead = LookupAhead.current, ahead.isWaiting, ahead.writesUnread, ExactString(ahead.owner) == ExactString(user),
           let (stamp, book) = cardCache.writeTarget(login: user, path: Self.joined(ahead.path), server: primary.currentIndex) {
            // A write to the login's own book that its batch judges: nothing to read at all.
            ahead.fillUnread(book: book)
            return stamp
        }
        if let ahead = LookupAhead.current, ahead.isWaiting, let stamp = await stampReadingAhead(ahead, user: user) {
            return stamp
        }
        if let read = await loopRead(owner: "", path: "", name: "", stampOf: user) { return read.stamp }
        return try await autocommit { connection in
            try await connection.first(PasswordStampSQL.self, user).map { try $0.decode(String.self) }
        }
    }

    /// Read by every request the inline GET does not answer (a multiget, a PUT): prepared.
    enum PasswordStampSQL: PreparedSQL {
        static let sql = "SELECT password_hash FROM users WHERE name = $1 AND NOT disabled AND NOT app_passwords_only"
    }

    public func listUsers() async throws -> [String] {
        try await autocommit { connection in
            try await connection.rows("SELECT name FROM users ORDER BY name").map { try $0.decode(String.self) }
        }
    }

    public func deleteUser(name: String) async throws {
        try await changingSignInOrBooks {
            try await transaction { connection in
                // The homes that mount this user's books list one collection less.
                try await connection.execute("""
                    UPDATE users SET home_seq = home_seq + 1 WHERE id IN (
                        SELECT s.sharee_id FROM shares s JOIN collections c ON c.id = s.collection_id
                        JOIN users o ON o.id = c.owner_id WHERE o.name = \(name) AND s.state = 'accepted')
                    """)
                if try await connection.rows("DELETE FROM users WHERE name = \(name) RETURNING 1").isEmpty {
                    throw StoreError.noSuchUser
                }
            }
        }
    }

    public func usedBytes(owner: String) async throws -> Int64 {
        try await autocommit { connection in
            try await connection.first("""
                SELECT COALESCE(SUM(r.size), 0)::BIGINT FROM resources r
                JOIN collections c ON c.id = r.collection_id
                JOIN users u ON u.id = c.owner_id
                WHERE u.name = \(owner)
                """)?.decode(Int64.self) ?? 0
        }
    }

    public func statistics() async throws -> StoreStatistics {
        try await autocommit { connection in
            guard let row = try await connection.first("""
                SELECT (SELECT COUNT(*) FROM users),
                       (SELECT COUNT(*) FROM collections WHERE kind = 'addressbook'),
                       (SELECT COUNT(*) FROM resources r JOIN collections c ON c.id = r.collection_id
                        WHERE c.kind = 'addressbook'),
                       pg_database_size(current_database())
                """) else { return StoreStatistics(users: 0, addressBooks: 0, cards: 0) }
            let (users, books, cards, bytes) = try row.decode((Int64, Int64, Int64, Int64).self)
            return StoreStatistics(users: Int(users), addressBooks: Int(books), cards: Int(cards), databaseBytes: bytes)
        }
    }

    static func userID(_ connection: Connection, name: String) async throws -> Int64? {
        try await connection.first("SELECT id FROM users WHERE name = \(name)")?.decode(Int64.self)
    }
}
