import Foundation
import RoloStore
import GRDB
import HummingbirdBcrypt

extension SQLiteStore {
    /// A valid hash of no password, verified against when the user is unknown so that the
    /// answer takes as long as for a known user.
    private static let decoyHash = Bcrypt.hash("rolo decoy password", cost: 4)

    public func createUser(name: String, password: String) async throws {
        try Naming.validate(name, what: "user")
        // bcrypt is tens of milliseconds of CPU: hash before taking the writer.
        let hash = Bcrypt.hash(password, cost: bcryptCost)
        try await pool.write { db in
            if try Self.userID(db, name: name) != nil { throw StoreError.userExists }
            let now = self.now
            try db.execute(sql: "INSERT INTO users (name, password_hash, created) VALUES (?, ?, ?)",
                           arguments: [name, hash, now])
            try Self.insertCollection(db, ownerID: db.lastInsertedRowID, parentID: nil, path: ["default"],
                                      kind: .addressBook, displayName: "Contacts", description: nil, now: now)
        }
    }

    public func setPassword(user: String, password: String) async throws {
        let hash = Bcrypt.hash(password, cost: bcryptCost)
        try await pool.write { db in
            try db.execute(sql: "UPDATE users SET password_hash = ? WHERE name = ?", arguments: [hash, user])
            if db.changesCount == 0 { throw StoreError.noSuchUser }
            // A new password signs every browser out.
            try db.execute(sql: "DELETE FROM web_sessions WHERE user_id = (SELECT id FROM users WHERE name = ?)",
                           arguments: [user])
        }
    }

    public func verifyPassword(user: String, password: String) async throws -> Bool {
        // A disabled account's hash is still checked, so the answer takes as long.
        let hash = try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT password_hash, disabled FROM users WHERE name = ?", arguments: [user])
                .map { row -> String? in row[1] ? nil : row[0] } ?? nil
        }
        guard let hash else {
            _ = Bcrypt.verify(password, hash: Self.decoyHash)
            return false
        }
        return Bcrypt.verify(password, hash: hash)
    }

    public func accountPasswordStamp(user: String) throws -> String? {
        try readOnCallingThread(.accountPasswordStamp, bind: { $0.add(user) }) { $0.text(0) }
    }

    public func listUsers() async throws -> [String] {
        try await pool.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM users ORDER BY name")
        }
    }

    public func deleteUser(name: String) async throws {
        try await pool.write { db in
            // The homes that mount this user's books list one collection less.
            try db.execute(sql: """
                UPDATE users SET home_seq = home_seq + 1 WHERE id IN (
                    SELECT s.sharee_id FROM shares s JOIN collections c ON c.id = s.collection_id
                    JOIN users o ON o.id = c.owner_id WHERE o.name = ? AND s.state = 'accepted')
                """, arguments: [name])
            try db.execute(sql: "DELETE FROM users WHERE name = ?", arguments: [name])
            if db.changesCount == 0 { throw StoreError.noSuchUser }
        }
    }

    public func usedBytes(owner: String) async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: """
                SELECT COALESCE(SUM(r.size), 0) FROM resources r
                JOIN collections c ON c.id = r.collection_id
                JOIN users u ON u.id = c.owner_id
                WHERE u.name = ?
                """, arguments: [owner]) ?? 0
        }
    }

    public func statistics() async throws -> StoreStatistics {
        try await pool.read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT (SELECT COUNT(*) FROM users),
                       (SELECT COUNT(*) FROM collections WHERE kind = 'addressbook'),
                       (SELECT COUNT(*) FROM resources r JOIN collections c ON c.id = r.collection_id
                        WHERE c.kind = 'addressbook')
                """)
            return StoreStatistics(users: row?[0] ?? 0, addressBooks: row?[1] ?? 0, cards: row?[2] ?? 0,
                                   databaseBytes: databaseFileBytes())
        }
    }

    /// The database file and its write-ahead log; nil when neither can be read.
    func databaseFileBytes() -> Int64? {
        let sizes = [path, path + "-wal"].compactMap {
            ((try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? NSNumber)?.int64Value
        }
        return sizes.isEmpty ? nil : sizes.reduce(0, +)
    }

    static func userID(_ db: Database, name: String) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM users WHERE name = ?"), arguments: [name])
    }
}
