import Crypto
import Foundation
import RoloStore
import GRDB

extension SQLiteStore {
    /// The server's secret key for app-password hashes, made on first open and kept in the
    /// database (`settings`), so a copy of the hashes alone cannot be checked offline.
    static func loadPepper(_ pool: DatabasePool) throws -> Data {
        try pool.write { db in
            if let pepper = try Data.fetchOne(db, sql: "SELECT value FROM settings WHERE key = 'app-password-pepper'") {
                return pepper
            }
            let pepper = AppPasswordToken.newPepper()
            try db.execute(sql: "INSERT INTO settings (key, value) VALUES ('app-password-pepper', ?)", arguments: [pepper])
            return pepper
        }
    }

    /// The keyed hash of a secret (`AppPasswordToken.hash`) under this database's pepper.
    func secretHash(_ secret: some StringProtocol) -> Data {
        AppPasswordToken.hash(secret, pepper: pepper)
    }

    public func createAppPassword(user: String, name: String, readOnly: Bool, books: [String]?) async throws -> NewAppPassword {
        let trimmed = try AccountRules.appPasswordName(name)
        let (publicID, secret) = AppPasswordToken.make()
        let hash = secretHash(secret)
        let id = try await pool.write { db -> Int64 in
            guard let userID = try Self.userID(db, name: user) else { throw StoreError.noSuchUser }
            if try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM app_passwords WHERE user_id = ? AND name = ? AND revoked IS NULL)
                """, arguments: [userID, trimmed]) == true {
                throw StoreError.appPasswordNameTaken(user: user, name: trimmed)
            }
            let bookIDs = try Self.bookIDs(db, userID: userID, user: user, names: books ?? [])
            try db.execute(sql: """
                INSERT INTO app_passwords (user_id, public_id, name, secret_hash, read_only, all_books, created)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [userID, publicID, trimmed, hash, readOnly, books == nil, self.now])
            let id = db.lastInsertedRowID
            for bookID in Set(bookIDs) {
                try db.execute(sql: "INSERT INTO app_password_books (app_password_id, collection_id) VALUES (?, ?)",
                               arguments: [id, bookID])
            }
            return id
        }
        guard let created = try await appPasswords(user: user).first(where: { $0.id == id }) else { throw StoreError.notFound }
        return NewAppPassword(appPassword: created, secret: AppPasswordToken.format(publicID: publicID, secret: secret))
    }

    public func appPasswords(user: String) async throws -> [AppPassword] {
        try await pool.read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT a.id, a.name, a.read_only, a.all_books, a.created, a.last_used, a.last_address, a.last_user_agent,
                       a.revoked
                FROM app_passwords a JOIN users u ON u.id = a.user_id WHERE u.name = ? ORDER BY a.created, a.id
                """, arguments: [user])
            return try rows.map { row in
                let id: Int64 = row[0]
                let allBooks: Bool = row[3]
                let books = try Row.fetchAll(db, sql: """
                    SELECT b.collection_id, CASE WHEN c.owner_id = a.user_id THEN c.path ELSE s.mount_name END
                    FROM app_password_books b JOIN app_passwords a ON a.id = b.app_password_id
                    JOIN collections c ON c.id = b.collection_id
                    LEFT JOIN shares s ON s.collection_id = c.id AND s.sharee_id = a.user_id
                    WHERE b.app_password_id = ? ORDER BY 2
                    """, arguments: [id])
                return AppPassword(
                    id: id, user: user, name: row[1],
                    scope: CredentialScope(readOnly: row[2], books: allBooks ? nil : Set(books.map { $0[0] as Int64 })),
                    bookNames: books.map { $0[1] }, created: Date(timeIntervalSince1970: row[4]),
                    lastUsed: (row[5] as Double?).map(Date.init(timeIntervalSince1970:)), lastAddress: row[6],
                    lastUserAgent: row[7], revoked: (row[8] as Double?).map(Date.init(timeIntervalSince1970:)))
            }
        }
    }

    public func revokeAppPassword(user: String, name: String) async throws {
        try await pool.write { db in
            guard let userID = try Self.userID(db, name: user) else { throw StoreError.noSuchUser }
            try db.execute(sql: "UPDATE app_passwords SET revoked = ? WHERE user_id = ? AND name = ? AND revoked IS NULL",
                           arguments: [self.now, userID, name])
            if db.changesCount == 0 { throw StoreError.notFound }
        }
    }

    /// Two reads on a row reader, on the calling thread: the server asks on every request
    /// a device makes with it, so that a revocation takes effect on the next one.
    public func checkAppPassword(user: String, secret: String) throws -> AppPasswordCheck? {
        guard let (publicID, rest) = AppPasswordToken.split(secret) else { return nil }
        let found = try readOnCallingThread(.appPassword, bind: { $0.add(String(publicID)) }) { row in
            (id: row.int64(0), hash: row.data(1), readOnly: row.int64(2) != 0, allBooks: row.int64(3) != 0,
             revoked: row.int64(4) != 0, user: row.text(5))
        }
        guard let found, found.user == user else { return nil }
        let expected = secretHash(rest)
        guard AppPasswordToken.hashesMatch(expected, found.hash) else { return nil }
        var books: Set<Int64>?
        if !found.allBooks {
            let list = try readOnCallingThread(.appPasswordBooks, bind: { $0.add(found.id) }) { $0.optionalText(0) }
            books = Set((list ?? nil)?.split(separator: ",").compactMap { Int64($0) } ?? [])
        }
        return AppPasswordCheck(id: found.id, user: found.user, scope: CredentialScope(readOnly: found.readOnly, books: books),
                                revoked: found.revoked)
    }
}

extension SQLiteStore {
    /// The books a user names as their home shows them (own address books, then accepted
    /// mounts), as collection ids: what an app password's or a feed's scope keeps.
    /// `noAddressBook` names the first the user cannot read.
    static func bookIDs(_ db: Database, userID: Int64, user: String, names: [String]) throws -> [Int64] {
        try names.map { book in
            if let own = try collectionRow(db, ownerID: userID, path: [book]), own.kind == .addressBook { return own.id }
            if let mounted = try Int64.fetchOne(db, sql: """
                SELECT collection_id FROM shares WHERE sharee_id = ? AND mount_name = ? AND state = 'accepted'
                """, arguments: [userID, book]) {
                return mounted
            }
            throw StoreError.noAddressBook(user: user, book: book)
        }
    }
}
