import Foundation
import RoloStore
import GRDB

extension SQLiteStore {
    // MARK: Accounts

    static let accountColumns = "name, display_name, email, app_passwords_only, admin, home_seq, disabled, created, source"

    static func account(from row: Row) -> UserAccount {
        UserAccount(name: row[0], displayName: row[1], email: row[2], appPasswordsOnly: row[3], admin: row[4], disabled: row[6],
                    homeSeq: row[5], created: Date(timeIntervalSince1970: row[7]), source: row[8])
    }

    public func account(name: String) async throws -> UserAccount? {
        try await pool.read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT \(Self.accountColumns) FROM users WHERE name = ?"),
                             arguments: [name]).map(Self.account(from:))
        }
    }

    public func updateAccount(name: String, _ update: UserAccountUpdate) async throws {
        try await pool.write { db in
            guard try Self.userID(db, name: name) != nil else { throw StoreError.noSuchUser }
            if let displayName = update.displayName {
                try db.execute(sql: "UPDATE users SET display_name = ? WHERE name = ?", arguments: [displayName, name])
            }
            if let email = update.email {
                try db.execute(sql: "UPDATE users SET email = ? WHERE name = ?", arguments: [email, name])
            }
            if let only = update.appPasswordsOnly {
                try db.execute(sql: "UPDATE users SET app_passwords_only = ? WHERE name = ?", arguments: [only, name])
            }
            if let admin = update.admin {
                try db.execute(sql: "UPDATE users SET admin = ? WHERE name = ?", arguments: [admin, name])
            }
            if let source = update.source {
                try db.execute(sql: "UPDATE users SET source = ? WHERE name = ?", arguments: [source, name])
            }
            if let disabled = update.disabled {
                try db.execute(sql: "UPDATE users SET disabled = ? WHERE name = ?", arguments: [disabled, name])
                if disabled {
                    try db.execute(sql: "DELETE FROM web_sessions WHERE user_id = (SELECT id FROM users WHERE name = ?)",
                                   arguments: [name])
                }
            }
        }
    }

    public func searchAccounts(matching text: String, limit: Int) async throws -> [UserAccount] {
        // instr on lower() rather than LIKE: no escaping of % and _ in what the user typed.
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.accountColumns) FROM users
                WHERE instr(lower(name), lower(?1)) OR instr(lower(COALESCE(display_name, '')), lower(?1))
                   OR instr(lower(COALESCE(email, '')), lower(?1))
                ORDER BY name LIMIT ?2
                """, arguments: [text, limit]).map(Self.account(from:))
        }
    }

    /// Moves the home's ctag: the collections listed in the home changed.
    static func bumpHome(_ db: Database, userID: Int64) throws {
        try db.execute(sql: "UPDATE users SET home_seq = home_seq + 1 WHERE id = ?", arguments: [userID])
    }

    /// Moves the ctag of every home that mounts the book (its name or presence there changed).
    static func bumpShareeHomes(_ db: Database, bookID: Int64) throws {
        try db.execute(sql: """
            UPDATE users SET home_seq = home_seq + 1
            WHERE id IN (SELECT sharee_id FROM shares WHERE collection_id = ? AND state = 'accepted')
            """, arguments: [bookID])
    }

    // MARK: Shares

    static let shareColumns = """
        s.id, o.name, c.path, c.id, c.display_name, e.name, s.access, s.state, s.mount_name, s.mount_display_name, s.created
        """
    static let shareJoins = """
        shares s JOIN collections c ON c.id = s.collection_id JOIN users o ON o.id = c.owner_id
        JOIN users e ON e.id = s.sharee_id
        """

    static func share(from row: Row) -> Share {
        Share(id: row[0], owner: row[1], book: row[2], bookID: row[3], bookDisplayName: row[4], sharee: row[5],
              access: ShareAccess(rawValue: row[6]) ?? .readOnly, state: ShareState(rawValue: row[7]) ?? .pending,
              mountName: row[8], mountDisplayName: row[9], created: Date(timeIntervalSince1970: row[10]))
    }

    static func share(_ db: Database, owner: String, book: String, sharee: String) throws -> Share? {
        try Row.fetchOne(db, sql: """
            SELECT \(shareColumns) FROM \(shareJoins) WHERE o.name = ? AND c.path = ? AND e.name = ?
            """, arguments: [owner, book, sharee]).map(share(from:))
    }

    public func shareBook(owner: String, book: String, with sharee: String, access: ShareAccess,
                          accepted: Bool) async throws -> Share {
        guard owner != sharee else { throw StoreError.shareWithOwner }
        return try await pool.write { db in
            guard let ownerID = try Self.userID(db, name: owner) else { throw StoreError.noSuchUser }
            guard let shareeID = try Self.userID(db, name: sharee) else {
                throw StoreError.noSuchSharee(sharee)
            }
            guard let collection = try Self.collectionRow(db, ownerID: ownerID, path: [book]) else { throw StoreError.notFound }
            guard collection.kind == .addressBook else { throw StoreError.notAnAddressBook(book) }
            let now = self.now
            if let existing = try Self.share(db, owner: owner, book: book, sharee: sharee) {
                let state = accepted ? ShareState.accepted : existing.state
                try db.execute(sql: "UPDATE shares SET access = ?, state = ?, modified = ? WHERE id = ?",
                               arguments: [access.rawValue, state.rawValue, now, existing.id])
                if state != existing.state { try Self.bumpHome(db, userID: shareeID) }
            } else {
                try db.execute(sql: """
                    INSERT INTO shares (collection_id, sharee_id, access, state, mount_name, created, modified)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [collection.id, shareeID, access.rawValue,
                                     (accepted ? ShareState.accepted : .pending).rawValue,
                                     Share.mountName(book: book, owner: owner), now, now])
                if accepted { try Self.bumpHome(db, userID: shareeID) }
            }
            return try Self.share(db, owner: owner, book: book, sharee: sharee)!
        }
    }

    public func acceptShare(sharee: String, owner: String, book: String) async throws -> Share {
        try await pool.write { db in
            guard let share = try Self.share(db, owner: owner, book: book, sharee: sharee) else { throw StoreError.notFound }
            if share.state == .accepted { return share }
            try db.execute(sql: "UPDATE shares SET state = 'accepted', modified = ? WHERE id = ?", arguments: [self.now, share.id])
            try Self.bumpHome(db, userID: try Self.userID(db, name: sharee)!)
            return try Self.share(db, owner: owner, book: book, sharee: sharee)!
        }
    }

    public func removeShare(owner: String, book: String, sharee: String) async throws {
        try await pool.write { db in
            guard let share = try Self.share(db, owner: owner, book: book, sharee: sharee) else { throw StoreError.notFound }
            try Self.deleteShare(db, share)
        }
    }

    /// Deletes the share, the sharee's push of it into their app passwords' scopes, and
    /// moves their home's ctag when it was mounted.
    static func deleteShare(_ db: Database, _ share: Share) throws {
        let shareeID = try userID(db, name: share.sharee)!
        try db.execute(sql: "DELETE FROM shares WHERE id = ?", arguments: [share.id])
        // A scoped app password of the sharee no longer reaches the book.
        try db.execute(sql: """
            DELETE FROM app_password_books WHERE collection_id = ?
              AND app_password_id IN (SELECT id FROM app_passwords WHERE user_id = ?)
            """, arguments: [share.bookID, shareeID])
        if share.state == .accepted { try bumpHome(db, userID: shareeID) }
    }

    public func renameMount(sharee: String, name: String, displayName: String?) async throws {
        try await pool.write { db in
            guard let shareeID = try Self.userID(db, name: sharee) else { throw StoreError.noSuchUser }
            try db.execute(sql: """
                UPDATE shares SET mount_display_name = ?, modified = ? WHERE sharee_id = ? AND mount_name = ? AND state = 'accepted'
                """, arguments: [displayName, self.now, shareeID, name])
            if db.changesCount == 0 { throw StoreError.notFound }
            try Self.bumpHome(db, userID: shareeID)
        }
    }

    public func shares(of user: String) async throws -> [Share] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.shareColumns) FROM \(Self.shareJoins) WHERE o.name = ?1 OR e.name = ?1
                ORDER BY o.name, c.path, e.name
                """, arguments: [user]).map(Self.share(from:))
        }
    }

    public func shares(bookID: Int64) async throws -> [Share] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.shareColumns) FROM \(Self.shareJoins) WHERE c.id = ? ORDER BY e.name",
                             arguments: [bookID]).map(Self.share(from:))
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

    static func mountedCollection(from row: Row, sharee: String) -> CollectionInfo {
        var info = collectionInfo(from: row)
        let bookName = info.displayName ?? info.path.joined(separator: "/")
        let ownerName: String = row[13]
        let displayName = (row[12] as String?) ?? "\(bookName) (\(ownerName))"
        info.mount = Mount(shareID: row[9], sharee: sharee, name: row[10],
                           access: ShareAccess(rawValue: row[11]) ?? .readOnly, displayName: displayName)
        return info
    }

    public func mount(sharee: String, name: String) async throws -> CollectionInfo? {
        try await pool.read { db in
            try Row.fetchOne(db.cachedStatement(sql: """
                SELECT \(Self.mountColumns) FROM \(Self.mountJoins)
                WHERE e.name = ? AND s.mount_name = ? AND s.state = 'accepted'
                """), arguments: [sharee, name]).map { Self.mountedCollection(from: $0, sharee: sharee) }
        }
    }

    public func mounts(sharee: String) async throws -> [CollectionInfo] {
        try await pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT \(Self.mountColumns) FROM \(Self.mountJoins)
                WHERE e.name = ? AND s.state = 'accepted' ORDER BY s.mount_name
                """), arguments: [sharee]).map { Self.mountedCollection(from: $0, sharee: sharee) }
        }
    }

    // MARK: Change attribution

    public func attributedChanges(collectionID: Int64, limit: Int) async throws -> [AttributedChange] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT ch.name, ch.deleted, ch.seq, ch.at, ch.actor_user,
                       CASE WHEN ch.actor_credential = 0 THEN 'account password' ELSE a.name END
                FROM changes ch LEFT JOIN app_passwords a ON a.id = ch.actor_credential
                WHERE ch.collection_id = ? ORDER BY ch.seq DESC LIMIT ?
                """, arguments: [collectionID, limit]).map { row in
                AttributedChange(name: row[0], deleted: row[1], seq: row[2], at: Date(timeIntervalSince1970: row[3]),
                                 user: row[4], credential: row[5])
            }
        }
    }
}
