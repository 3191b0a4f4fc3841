import Foundation
import PostgresNIO
import RoloStore

extension PostgresStore {
    /// The keyed hash of a secret (`AppPasswordToken.hash`) under this database's pepper.
    func secretHash(_ secret: some StringProtocol) -> Data {
        AppPasswordToken.hash(secret, pepper: pepper)
    }

    public func createAppPassword(user: String, name: String, readOnly: Bool, books: [String]?) async throws -> NewAppPassword {
        let name = try AccountRules.appPasswordName(name)
        let (publicID, secret) = AppPasswordToken.make()
        let hash = secretHash(secret)
        let now = self.now
        let taken = StoreError.appPasswordNameTaken(user: user, name: name)
        let id: Int64
        do {
            id = try await transaction { connection in
                guard let userID = try await Self.userID(connection, name: user) else { throw StoreError.noSuchUser }
                if try await connection.first("""
                    SELECT 1 FROM app_passwords WHERE user_id = \(userID) AND name = \(name) AND revoked IS NULL
                    """) != nil {
                    throw taken
                }
                let bookIDs = try await Self.bookIDs(connection, userID: userID, user: user, names: books ?? [])
                guard let row = try await connection.first("""
                    INSERT INTO app_passwords (user_id, public_id, name, secret_hash, read_only, all_books, created)
                    VALUES (\(userID), \(publicID), \(name), \(hash), \(readOnly), \(books == nil), \(now)) RETURNING id
                    """) else { throw StoreError.notFound }
                let id = try row.decode(Int64.self)
                let distinct = Array(Set(bookIDs))
                if !distinct.isEmpty {
                    try await connection.execute("""
                        INSERT INTO app_password_books (app_password_id, collection_id) SELECT \(id), unnest(\(distinct)::BIGINT[])
                        """)
                }
                return id
            }
        } catch where Self.isUniqueViolation(error) {
            throw taken
        }
        guard let created = try await appPasswords(user: user).first(where: { $0.id == id }) else { throw StoreError.notFound }
        return NewAppPassword(appPassword: created, secret: AppPasswordToken.format(publicID: publicID, secret: secret))
    }

    public func appPasswords(user: String) async throws -> [AppPassword] {
        try await autocommit { connection in
            let rows = try await connection.rows("""
                SELECT a.id, a.name, a.read_only, a.all_books, a.created, a.last_used, a.last_address, a.last_user_agent,
                       a.revoked
                FROM app_passwords a JOIN users u ON u.id = a.user_id WHERE u.name = \(user) ORDER BY a.created, a.id
                """)
            var passwords: [AppPassword] = []
            for row in rows {
                var columns = Columns(row)
                let id = try columns.next(Int64.self)
                let name = try columns.next(String.self)
                let readOnly = try columns.next(Bool.self)
                let allBooks = try columns.next(Bool.self)
                let created = try columns.date()
                let lastUsed = try columns.optionalDate()
                let lastAddress = try columns.next(String?.self)
                let lastUserAgent = try columns.next(String?.self)
                let revoked = try columns.optionalDate()
                let books = try await connection.rows("""
                    SELECT b.collection_id, CASE WHEN c.owner_id = a.user_id THEN c.path ELSE s.mount_name END AS book
                    FROM app_password_books b JOIN app_passwords a ON a.id = b.app_password_id
                    JOIN collections c ON c.id = b.collection_id
                    LEFT JOIN shares s ON s.collection_id = c.id AND s.sharee_id = a.user_id
                    WHERE b.app_password_id = \(id) ORDER BY book
                    """).map { try $0.decode((Int64, String).self) }
                passwords.append(AppPassword(
                    id: id, user: user, name: name,
                    scope: CredentialScope(readOnly: readOnly, books: allBooks ? nil : Set(books.map(\.0))),
                    bookNames: books.map(\.1), created: created, lastUsed: lastUsed, lastAddress: lastAddress,
                    lastUserAgent: lastUserAgent, revoked: revoked))
            }
            return passwords
        }
    }

    public func revokeAppPassword(user: String, name: String) async throws {
        let now = self.now
        try await transaction { connection in
            guard let userID = try await Self.userID(connection, name: user) else { throw StoreError.noSuchUser }
            if try await connection.rows("""
                UPDATE app_passwords SET revoked = \(now) WHERE user_id = \(userID) AND name = \(name) AND revoked IS NULL RETURNING 1
                """).isEmpty {
                throw StoreError.notFound
            }
        }
    }

    /// One statement on every request a device makes with an app password, so that a
    /// revocation takes effect on its next request, in whichever process it was made.
    public func checkAppPassword(user: String, secret: String) async throws -> AppPasswordCheck? {
        guard let (publicID, rest) = AppPasswordToken.split(secret) else { return nil }
        let publicIDText = String(publicID)
        let found = try await autocommit { connection in
            try await connection.first("""
                SELECT a.id, a.secret_hash, a.read_only, a.all_books, a.revoked IS NOT NULL, u.name,
                       ARRAY(SELECT collection_id FROM app_password_books WHERE app_password_id = a.id)
                FROM app_passwords a JOIN users u ON u.id = a.user_id WHERE a.public_id = \(publicIDText) AND NOT u.disabled
                """).map { try $0.decode((Int64, Data, Bool, Bool, Bool, String, [Int64]).self) }
        }
        guard let (id, hash, readOnly, allBooks, revoked, owner, books) = found, owner == user,
              AppPasswordToken.hashesMatch(secretHash(rest), hash) else { return nil }
        return AppPasswordCheck(id: id, user: owner, scope: CredentialScope(readOnly: readOnly, books: allBooks ? nil : Set(books)),
                                revoked: revoked)
    }
}

extension PostgresStore {
    /// The books a user names as their home shows them (own address books, then accepted
    /// mounts), as collection ids: what an app password's or a feed's scope keeps.
    /// `noAddressBook` names the first the user cannot read.
    static func bookIDs(_ connection: Connection, userID: Int64, user: String, names: [String]) async throws -> [Int64] {
        var ids: [Int64] = []
        for book in names {
            if let own = try await collectionRow(connection, ownerID: userID, path: [book]), own.kind == .addressBook {
                ids.append(own.id)
            } else if let mounted = try await connection.first("""
                SELECT collection_id FROM shares WHERE sharee_id = \(userID) AND mount_name = \(book) AND state = 'accepted'
                """) {
                ids.append(try mounted.decode(Int64.self))
            } else {
                throw StoreError.noAddressBook(user: user, book: book)
            }
        }
        return ids
    }
}
