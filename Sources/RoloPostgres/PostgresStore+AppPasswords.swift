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
    /// revocation takes effect on its next request, in whichever process it was made. On the
    /// request's event loop's own connection when it has one (phones sign in this way, so
    /// this is their every request's first read), with the request's first lookup when the
    /// server named it (`LookupAhead`), as the account password's stamp is read.
    public func checkAppPassword(user: String, secret: String) async throws -> AppPasswordCheck? {
        guard let (publicID, rest) = AppPasswordToken.split(secret) else { return nil }
        let publicIDText = String(publicID)
        let found: AppPasswordRow?
        if let onLoop = await appPasswordOnLoop(publicIDText) {
            found = onLoop
        } else {
            found = try await autocommit { connection in
                try await connection.first(AppPasswordSQL.self, publicIDText).map { try Self.appPasswordRow(Columns($0)) } ?? nil
            }
        }
        guard let found, found.user == user, AppPasswordToken.hashesMatch(secretHash(rest), found.hash) else { return nil }
        return AppPasswordCheck(id: found.id, user: found.user,
                                scope: CredentialScope(readOnly: found.readOnly, books: found.allBooks ? nil : Set(found.books)),
                                revoked: found.revoked)
    }

    /// An app password as `AppPasswordSQL` reads it.
    struct AppPasswordRow: Sendable {
        var id: Int64, hash: Data, readOnly: Bool, allBooks: Bool, revoked: Bool, user: String, books: [Int64]
    }

    /// The app password whose public id is `$<parameter>`, with its user's name and its
    /// books (`AppPasswordRow`); no row for none, or a disabled user's.
    private static func appPasswordSQL(parameter: Int) -> String {
        """
        SELECT a.id, a.secret_hash, a.read_only, a.all_books, a.revoked IS NOT NULL, u.name,
               ARRAY(SELECT collection_id FROM app_password_books WHERE app_password_id = a.id)
        FROM app_passwords a JOIN users u ON u.id = a.user_id WHERE a.public_id = $\(parameter) AND NOT u.disabled
        """
    }

    enum AppPasswordSQL: PreparedSQL {
        static let sql = appPasswordSQL(parameter: 1)
    }

    /// `AppPasswordSQL` (public id `$4`) beside `CollectionMemberSQL`'s row: a device's
    /// credential with its request's `LookupAhead`, in one round trip (NULLs for what is not there).
    enum AppPasswordAndMemberSQL: PreparedSQL {
        static let sql = """
            SELECT p.*, m.*, \(homeHasLocks(home: "$1")) FROM (SELECT 1) one
            LEFT JOIN LATERAL (\(appPasswordSQL(parameter: 4))) p ON true
            LEFT JOIN LATERAL (\(CollectionMemberSQL.sql)) m ON true
            """
    }

    /// The columns of `appPasswordSQL`, NULLs for no such app password.
    private static let appPasswordColumnCount = 7

    private static func appPasswordRow(_ row: Columns) throws -> AppPasswordRow? {
        var columns = row
        guard !columns.nextIsNull else { return nil }
        return AppPasswordRow(id: try columns.next(), hash: try columns.next(), readOnly: try columns.next(),
                              allBooks: try columns.next(), revoked: try columns.next(), user: try columns.next(),
                              books: try columns.next())
    }

    /// The app password read on the request's event loop's connection, with the request's
    /// `LookupAhead` filled when it waits: nil when the loop has no connection or the read
    /// failed (the caller then asks the pool).
    private func appPasswordOnLoop(_ publicID: String) async -> AppPasswordRow?? {
        if let ahead = LookupAhead.current, ahead.isWaiting {
            let binds = [PostgresData(string: ahead.owner), PostgresData(string: Self.joined(ahead.path)),
                         PostgresData(string: ahead.name ?? ""), PostgresData(string: publicID)]
            guard let rows = await rowsOnLoop(AppPasswordAndMemberSQL.self, binds), let row = rows.first,
                  let found = try? Self.appPasswordRow(Columns(legacyPrepared: row)) else { return nil }
            var rest = Columns(legacyPrepared: row)
            rest.skip(Self.appPasswordColumnCount)
            if let (found, homeHasLocks) = try? Self.memberAndHomeLocks(rest) {
                ahead.fill(found, homeHasLocks: homeHasLocks)
            }
            return .some(found)
        }
        guard let rows = await rowsOnLoop(AppPasswordSQL.self, [PostgresData(string: publicID)]) else { return nil }
        guard let row = rows.first else { return .some(nil) }
        guard let found = try? Self.appPasswordRow(Columns(legacyPrepared: row)) else { return nil }
        return .some(found)
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
