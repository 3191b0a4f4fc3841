import Foundation
import PostgresNIO
import RoloStore

extension PostgresStore {
    // MARK: Accounts

    static let accountColumns = "name, display_name, email, app_passwords_only, admin, home_seq, disabled, created, source"

    static func account(_ row: PostgresRow) throws -> UserAccount {
        let (name, displayName, email, appPasswordsOnly, admin, homeSeq, disabled, created, source) =
            try row.decode((String, String?, String?, Bool, Bool, Int64, Bool, Double, String).self)
        return UserAccount(name: name, displayName: displayName, email: email, appPasswordsOnly: appPasswordsOnly, admin: admin,
                           disabled: disabled, homeSeq: homeSeq, created: Date(timeIntervalSince1970: created), source: source)
    }

    public func account(name: String) async throws -> UserAccount? {
        try await autocommit { connection in
            try await connection.first("SELECT \(unescaped: Self.accountColumns) FROM users WHERE name = \(name)").map(Self.account)
        }
    }

    public func updateAccount(name: String, _ update: UserAccountUpdate) async throws {
        try await changingSignInOrBooks {
            try await transaction { connection in
                guard try await Self.userID(connection, name: name) != nil else { throw StoreError.noSuchUser }
                if let displayName = update.displayName {
                    try await connection.execute("UPDATE users SET display_name = \(displayName) WHERE name = \(name)")
                }
                if let email = update.email {
                    try await connection.execute("UPDATE users SET email = \(email) WHERE name = \(name)")
                }
                if let only = update.appPasswordsOnly {
                    try await connection.execute("UPDATE users SET app_passwords_only = \(only) WHERE name = \(name)")
                }
                if let admin = update.admin {
                    try await connection.execute("UPDATE users SET admin = \(admin) WHERE name = \(name)")
                }
                if let source = update.source {
                    try await connection.execute("UPDATE users SET source = \(source.withoutNUL) WHERE name = \(name)")
                }
                if let disabled = update.disabled {
                    try await connection.execute("UPDATE users SET disabled = \(disabled) WHERE name = \(name)")
                    if disabled { try await Self.deleteWebSessions(connection, user: name) }
                }
            }
        }
    }

    public func searchAccounts(matching text: String, limit: Int) async throws -> [UserAccount] {
        // strpos on lower() rather than LIKE: no escaping of % and _ in what the user typed.
        // The columns' "C" collation makes lower() fold ASCII only, as SQLite's does.
        let needle = text.withoutNUL
        return try await autocommit { connection in
            try await connection.rows("""
                SELECT \(unescaped: Self.accountColumns) FROM users
                WHERE strpos(lower(name), lower(\(needle)::TEXT COLLATE "C")) > 0
                   OR strpos(lower(COALESCE(display_name, '')), lower(\(needle)::TEXT COLLATE "C")) > 0
                   OR strpos(lower(COALESCE(email, '')), lower(\(needle)::TEXT COLLATE "C")) > 0
                ORDER BY name LIMIT \(Int64(max(limit, 0)))
                """).map(Self.account)
        }
    }

    /// Moves the home's ctag: the collections listed in the home changed.
    static func bumpHome(_ connection: Connection, userID: Int64) async throws {
        try await connection.execute("UPDATE users SET home_seq = home_seq + 1 WHERE id = \(userID)")
    }

    /// Moves the ctag of every home that mounts the book (its name or presence there changed).
    static func bumpShareeHomes(_ connection: Connection, bookID: Int64) async throws {
        try await connection.execute("""
            UPDATE users SET home_seq = home_seq + 1
            WHERE id IN (SELECT sharee_id FROM shares WHERE collection_id = \(bookID) AND state = 'accepted')
            """)
    }

    // MARK: Shares

    static let shareColumns = """
        s.id, o.name, c.path, c.id, c.display_name, e.name, s.access, s.state, s.mount_name, s.mount_display_name, s.created
        """
    static let shareJoins = """
        shares s JOIN collections c ON c.id = s.collection_id JOIN users o ON o.id = c.owner_id
        JOIN users e ON e.id = s.sharee_id
        """

    static func share(_ row: PostgresRow) throws -> Share {
        var columns = Columns(row)
        return Share(id: try columns.next(), owner: try columns.next(), book: try columns.next(), bookID: try columns.next(),
                     bookDisplayName: try columns.next(), sharee: try columns.next(),
                     access: ShareAccess(rawValue: try columns.next(String.self)) ?? .readOnly,
                     state: ShareState(rawValue: try columns.next(String.self)) ?? .pending,
                     mountName: try columns.next(), mountDisplayName: try columns.next(), created: try columns.date())
    }

    static func share(_ connection: Connection, owner: String, book: String, sharee: String) async throws -> Share? {
        try await connection.first("""
            SELECT \(unescaped: shareColumns) FROM \(unescaped: shareJoins) WHERE o.name = \(owner) AND c.path = \(book) AND e.name = \(sharee)
            """).map(share)
    }

    public func shareBook(owner: String, book: String, with sharee: String, access: ShareAccess,
                          accepted: Bool) async throws -> Share {
        guard owner != sharee else { throw StoreError.shareWithOwner }
        let now = self.now
        return try await transaction { connection in
            guard let ownerID = try await Self.userID(connection, name: owner) else { throw StoreError.noSuchUser }
            guard let shareeID = try await Self.userID(connection, name: sharee) else {
                throw StoreError.noSuchSharee(sharee)
            }
            guard let collection = try await Self.collectionRow(connection, ownerID: ownerID, path: [book]) else {
                throw StoreError.notFound
            }
            guard collection.kind == .addressBook else { throw StoreError.notAnAddressBook(book) }
            if let existing = try await Self.share(connection, owner: owner, book: book, sharee: sharee) {
                let state = accepted ? ShareState.accepted : existing.state
                try await connection.execute("""
                    UPDATE shares SET access = \(access.rawValue), state = \(state.rawValue), modified = \(now) WHERE id = \(existing.id)
                    """)
                if state != existing.state { try await Self.bumpHome(connection, userID: shareeID) }
            } else {
                let state = (accepted ? ShareState.accepted : .pending).rawValue
                try await connection.execute("""
                    INSERT INTO shares (collection_id, sharee_id, access, state, mount_name, created, modified)
                    VALUES (\(collection.id), \(shareeID), \(access.rawValue), \(state),
                            \(Share.mountName(book: book, owner: owner)), \(now), \(now))
                    """)
                if accepted { try await Self.bumpHome(connection, userID: shareeID) }
            }
            guard let share = try await Self.share(connection, owner: owner, book: book, sharee: sharee) else {
                throw StoreError.notFound
            }
            return share
        }
    }

    public func acceptShare(sharee: String, owner: String, book: String) async throws -> Share {
        let now = self.now
        return try await transaction { connection in
            guard let share = try await Self.share(connection, owner: owner, book: book, sharee: sharee) else { throw StoreError.notFound }
            if share.state == .accepted { return share }
            try await connection.execute("UPDATE shares SET state = 'accepted', modified = \(now) WHERE id = \(share.id)")
            guard let shareeID = try await Self.userID(connection, name: sharee) else { throw StoreError.noSuchUser }
            try await Self.bumpHome(connection, userID: shareeID)
            guard let accepted = try await Self.share(connection, owner: owner, book: book, sharee: sharee) else {
                throw StoreError.notFound
            }
            return accepted
        }
    }

    public func removeShare(owner: String, book: String, sharee: String) async throws {
        try await transaction { connection in
            guard let share = try await Self.share(connection, owner: owner, book: book, sharee: sharee) else { throw StoreError.notFound }
            guard let shareeID = try await Self.userID(connection, name: share.sharee) else { throw StoreError.noSuchUser }
            try await connection.execute("DELETE FROM shares WHERE id = \(share.id)")
            // A scoped app password of the sharee no longer reaches the book.
            try await connection.execute("""
                DELETE FROM app_password_books WHERE collection_id = \(share.bookID)
                  AND app_password_id IN (SELECT id FROM app_passwords WHERE user_id = \(shareeID))
                """)
            if share.state == .accepted { try await Self.bumpHome(connection, userID: shareeID) }
        }
    }

    public func renameMount(sharee: String, name: String, displayName: String?) async throws {
        let now = self.now
        try await transaction { connection in
            guard let shareeID = try await Self.userID(connection, name: sharee) else { throw StoreError.noSuchUser }
            if try await connection.rows("""
                UPDATE shares SET mount_display_name = \(displayName), modified = \(now)
                WHERE sharee_id = \(shareeID) AND mount_name = \(name) AND state = 'accepted' RETURNING 1
                """).isEmpty {
                throw StoreError.notFound
            }
            try await Self.bumpHome(connection, userID: shareeID)
        }
    }

    public func shares(of user: String) async throws -> [Share] {
        try await autocommit { connection in
            try await connection.rows("""
                SELECT \(unescaped: Self.shareColumns) FROM \(unescaped: Self.shareJoins) WHERE o.name = \(user) OR e.name = \(user)
                ORDER BY o.name, c.path, e.name
                """).map(Self.share)
        }
    }

    public func shares(bookID: Int64) async throws -> [Share] {
        try await autocommit { connection in
            try await connection.rows("""
                SELECT \(unescaped: Self.shareColumns) FROM \(unescaped: Self.shareJoins) WHERE c.id = \(bookID) ORDER BY e.name
                """).map(Self.share)
        }
    }

    /// The columns of `collectionColumns` followed by the mount's: share id, mount name,
    /// access, the sharee's display name for it, the owner's display name.
    static let mountColumns = """
        \(collectionColumns), s.id, s.mount_name, s.access, s.mount_display_name, COALESCE(u.display_name, u.name)
        """
    static let mountJoins = """
        shares s JOIN users e ON e.id = s.sharee_id JOIN collections c ON c.id = s.collection_id
        JOIN users u ON u.id = c.owner_id
        """

    static func mountedCollection(_ row: PostgresRow, sharee: String) throws -> CollectionInfo {
        var columns = Columns(row)
        var info = try collectionInfo(&columns)
        let shareID = try columns.next(Int64.self)
        let mountName = try columns.next(String.self)
        let access = ShareAccess(rawValue: try columns.next(String.self)) ?? .readOnly
        let ownDisplayName = try columns.next(String?.self)
        let ownerName = try columns.next(String.self)
        let bookName = info.displayName ?? info.path.joined(separator: "/")
        info.mount = Mount(shareID: shareID, sharee: sharee, name: mountName, access: access,
                           displayName: ownDisplayName ?? "\(bookName) (\(ownerName))")
        return info
    }

    public func mount(sharee: String, name: String) async throws -> CollectionInfo? {
        let found = try await autocommit { connection in
            try await connection.first("""
                SELECT \(unescaped: Self.mountColumns) FROM \(unescaped: Self.mountJoins)
                WHERE e.name = \(sharee) AND s.mount_name = \(name) AND s.state = 'accepted'
                """).map { try Self.mountedCollection($0, sharee: sharee) }
        }
        // A request on a mounted book looks it up here: its reads of the book may come from
        // the card cache at this seq.
        if let found { LookupAhead.current?.noteBook(found) }
        return found
    }

    public func mounts(sharee: String) async throws -> [CollectionInfo] {
        try await autocommit { connection in
            try await connection.rows("""
                SELECT \(unescaped: Self.mountColumns) FROM \(unescaped: Self.mountJoins)
                WHERE e.name = \(sharee) AND s.state = 'accepted' ORDER BY s.mount_name
                """).map { try Self.mountedCollection($0, sharee: sharee) }
        }
    }

    // MARK: Change attribution

    public func attributedChanges(collectionID: Int64, limit: Int) async throws -> [AttributedChange] {
        try await autocommit { connection in
            try await connection.rows("""
                SELECT ch.name, ch.deleted, ch.seq, ch.at, ch.actor_user,
                       CASE WHEN ch.actor_credential = 0 THEN 'account password' ELSE a.name END
                FROM changes ch LEFT JOIN app_passwords a ON a.id = ch.actor_credential
                WHERE ch.collection_id = \(collectionID) ORDER BY ch.seq DESC LIMIT \(Int64(max(limit, 0)))
                """).map { row in
                var columns = Columns(row)
                return AttributedChange(name: try columns.next(), deleted: try columns.next(), seq: try columns.next(),
                                        at: try columns.date(), user: try columns.next(), credential: try columns.next())
            }
        }
    }
}
