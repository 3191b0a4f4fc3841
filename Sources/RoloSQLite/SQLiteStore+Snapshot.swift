import Foundation
import RoloStore
import GRDB

/// `rolo migrate` from and into SQLite (`StoreSnapshot.swift`): pages read by key in one
/// read transaction (`DatabaseSnapshot`), restores written one transaction per batch through the writer, like an import.
extension SQLiteStore: StoreSnapshotting {
    public func snapshotReader() async throws -> any StoreSnapshotReading {
        SQLiteSnapshotReader(snapshot: try pool.makeSnapshot())
    }

    public func holdsData() async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM users) OR EXISTS (SELECT 1 FROM collections) OR EXISTS (SELECT 1 FROM resources)
                """) ?? false
        }
    }

    public func restore(_ records: [SnapshotRecord]) async throws {
        try await pool.write { [readAnchor] db in
            readAnchor.release()
            for record in records { try Self.restore(record, db) }
            // Like an import batch: big enough to write the index in order itself.
            try Self.mergePendingIndex(db)
        }
        readAnchor.holdNewest()
        pendingIndex.reset()
    }

    public func finishRestore() async throws {
        try await pool.writeWithoutTransaction { db in try db.execute(sql: "ANALYZE") }
        try await checkpoint()
        pepperValue.value = try Self.loadPepper(pool)
    }

    // MARK: Reading

    /// The core's column lists (`SnapshotTable.columns`), with SQLite's spelling where it
    /// differs: bodies live in their own table, and a book made before push had no topic.
    fileprivate static func snapshotSource(_ table: SnapshotTable) -> SnapshotSource {
        let source = SnapshotSource(table)
        switch table {
        case .resources:
            return source.replacing(table: "resources r JOIN resource_bodies b ON b.resource_id = r.id",
                                    columns: Dictionary(uniqueKeysWithValues: table.columns.map { ($0, $0 == "data" ? "b.data" : "r.\($0)") }),
                                    key: ["r.id"], of: table)
        case .collections:
            return source.replacing(columns: ["push_topic": "coalesce(push_topic, lower(hex(randomblob(16))))"], of: table)
        case .cardVersions:
            // Each card's current version too, which SQLite keeps as its change row (v18).
            return source.replacing(table: "\(SnapshotTable.allCardVersions) AS card_versions", of: table)
        default:
            return source
        }
    }

    /// `(key columns) > (the last record's key)`, or true for the first page.
    fileprivate static func keyCondition(after last: SnapshotRecord?, key: [String]) -> (String, StatementArguments) {
        guard let last else { return ("1", []) }
        let values: [(any DatabaseValueConvertible)?] = switch last {
        case .setting(let key, _): [key]
        case .user(let user): [user.id]
        case .collection(let collection): [collection.id]
        case .resource(let resource): [resource.id]
        case .change(let change): [change.collectionID, change.seq]
        case .deadProperty(let property): [property.collectionID, property.resource, property.namespace, property.name]
        case .share(let share): [share.id]
        case .appPassword(let password): [password.id]
        case .access(let access): [access.userID, access.credentialID, access.bookID, access.periodStart]
        case .pushRegistration(let registration): [registration.id]
        case .trash(let entry): [entry.id]
        case .feed(let feed): [feed.id]
        case .cardVersion(let version): [version.collectionID, version.seq]
        case .cardVersionBody(let etag, _): [etag]
        case .cardVersionPart(let hash, _): [hash]
        case .cardVersionPartRef(let etag, let hash, _, _): [etag, hash]
        case .directoryEntry(let userID, _): [userID]
        }
        let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
        return ("(\(key.joined(separator: ", "))) > (\(placeholders))", StatementArguments(values))
    }

    fileprivate static func record(_ table: SnapshotTable, _ row: Row) throws -> SnapshotRecord {
        switch table {
        case .settings:
            return .setting(key: row[0], value: row[1])
        case .users:
            return .user(SnapshotUser(id: row[0], name: row[1], passwordHash: row[2], created: row[3], displayName: row[4],
                                      email: row[5], appPasswordsOnly: row[6], admin: row[7], disabled: row[8], homeSeq: row[9],
                                      source: row[10]))
        case .collections:
            return .collection(SnapshotCollection(id: row[0], ownerID: row[1], parentID: row[2], path: row[3], kind: row[4],
                                                  displayName: row[5], description: row[6], syncSeq: row[7], minValidSeq: row[8],
                                                  created: row[9], modified: row[10], pushTopic: row[11]))
        case .resources:
            return .resource(SnapshotResource(id: row[0], collectionID: row[1], name: row[2], contentType: row[3], etag: row[4],
                                              modified: row[5], seq: row[6], uid: row[7], kind: row[8], data: row[9]))
        case .changes:
            return .change(SnapshotChange(collectionID: row[0], seq: row[1], name: row[2], deleted: row[3], at: row[4],
                                          actorUser: row[5], actorCredential: row[6]))
        case .deadProperties:
            return .deadProperty(SnapshotDeadProperty(collectionID: row[0], resource: row[1], namespace: row[2], name: row[3],
                                                      xml: row[4], language: row[5]))
        case .shares:
            return .share(SnapshotShare(id: row[0], collectionID: row[1], shareeID: row[2], access: row[3], state: row[4],
                                        mountName: row[5], mountDisplayName: row[6], created: row[7], modified: row[8]))
        case .appPasswords:
            return .appPassword(SnapshotAppPassword(id: row[0], userID: row[1], publicID: row[2], name: row[3], secretHash: row[4],
                                                    readOnly: row[5], allBooks: row[6], created: row[7], lastUsed: row[8],
                                                    lastAddress: row[9], lastUserAgent: row[10], revoked: row[11], books: []))
        case .accessHourly, .accessDaily:
            return .access(SnapshotAccess(daily: table == .accessDaily, userID: row[0], credentialID: row[1], bookID: row[2],
                                          periodStart: row[3], requests: row[4], cardsRead: row[5], cardsWritten: row[6],
                                          cardsDeleted: row[7], fullDownload: row[8]))
        case .pushRegistrations:
            return .pushRegistration(SnapshotPushRegistration(
                id: row[0], userID: row[1], collectionID: row[2], credentialID: row[3], pushResource: row[4], publicKey: row[5],
                authSecret: row[6], expires: row[7], created: row[8], lastSuccess: row[9], failures: row[10],
                firstFailure: row[11], retryAfter: row[12]))
        case .trash:
            return .trash(SnapshotTrash(id: row[0], collectionID: row[1], batch: row[2], reason: row[3], name: row[4], uid: row[5],
                                        displayName: row[6], etag: row[7], replacedBy: row[8], contentType: row[9], data: row[10],
                                        trashed: row[11], user: row[12]))
        case .feeds:
            return .feed(SnapshotFeed(id: row[0], userID: row[1], kind: row[2], secretHash: row[3], books: row[4], created: row[5],
                                      lastRead: row[6]))
        case .cardVersions:
            return .cardVersion(SnapshotCardVersion(collectionID: row[0], seq: row[1], name: row[2], at: row[3], etag: row[4],
                                                    contentType: row[5], actorUser: row[6], actorCredential: row[7]))
        case .cardVersionBodies:
            return .cardVersionBody(etag: row[0], data: row[1])
        case .cardVersionParts:
            return .cardVersionPart(hash: row[0], data: row[1])
        case .cardVersionPartRefs:
            return .cardVersionPartRef(etag: row[0], hash: row[1], start: row[2], length: row[3])
        case .directoryEntries:
            return .directoryEntry(userID: row[0], entry: row[1])
        }
    }

    // MARK: Writing

    private static func restore(_ record: SnapshotRecord, _ db: Database) throws {
        switch record {
        case .setting(let key, let value):
            try db.execute(sql: "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", arguments: [key, value])
        case .user(let u):
            try db.execute(sql: """
                INSERT INTO users (id, name, password_hash, created, display_name, email, app_passwords_only, admin, disabled, home_seq,
                                   source)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [u.id, u.name, u.passwordHash, u.created, u.displayName, u.email, u.appPasswordsOnly, u.admin,
                                 u.disabled, u.homeSeq, u.source])
        case .collection(let c):
            try db.execute(sql: """
                INSERT INTO collections (id, owner_id, parent_id, path, kind, display_name, description, sync_seq, min_valid_seq,
                                         created, modified, push_topic)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [c.id, c.ownerID, c.parentID, c.path, c.kind, c.displayName, c.description, c.syncSeq,
                                 c.minValidSeq, c.created, c.modified, c.pushTopic])
        case .resource(let r):
            try restoreResource(r, db)
        case .change(let c):
            // The card's version (v18) as the resources, copied before, hold it.
            try db.execute(sql: """
                INSERT INTO changes (collection_id, seq, name, deleted, at, actor_user, actor_credential, etag, content_type)
                SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, r.etag, r.content_type
                FROM (SELECT 1) LEFT JOIN resources r ON NOT ?4 AND r.collection_id = ?1 AND r.name = ?3
                """, arguments: [c.collectionID, c.seq, c.name, c.deleted, c.at, c.actorUser, c.actorCredential])
        case .deadProperty(let p):
            try db.execute(sql: """
                INSERT INTO dead_properties (collection_id, resource, namespace, name, xml, language) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [p.collectionID, p.resource, p.namespace, p.name, p.xml, p.language])
        case .share(let s):
            try db.execute(sql: """
                INSERT INTO shares (id, collection_id, sharee_id, access, state, mount_name, mount_display_name, created, modified)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [s.id, s.collectionID, s.shareeID, s.access, s.state, s.mountName, s.mountDisplayName,
                                 s.created, s.modified])
        case .appPassword(let p):
            try db.execute(sql: """
                INSERT INTO app_passwords (id, user_id, public_id, name, secret_hash, read_only, all_books, created, last_used,
                                           last_address, last_user_agent, revoked)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [p.id, p.userID, p.publicID, p.name, p.secretHash, p.readOnly, p.allBooks, p.created,
                                 p.lastUsed, p.lastAddress, p.lastUserAgent, p.revoked])
            for book in p.books {
                try db.execute(sql: "INSERT INTO app_password_books (app_password_id, collection_id) VALUES (?, ?)",
                               arguments: [p.id, book])
            }
        case .access(let a):
            try db.execute(sql: """
                INSERT INTO \(a.daily ? "access_daily" : "access_hourly") (user_id, credential_id, book_id, period_start, requests,
                    cards_read, cards_written, cards_deleted, full_download)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [a.userID, a.credentialID, a.bookID, a.periodStart, a.requests, a.cardsRead, a.cardsWritten,
                                 a.cardsDeleted, a.fullDownload])
        case .pushRegistration(let p):
            try db.execute(sql: """
                INSERT INTO push_registrations (id, user_id, collection_id, credential_id, push_resource, public_key, auth_secret,
                                                expires, created, last_success, failures, first_failure, retry_after)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [p.id, p.userID, p.collectionID, p.credentialID, p.pushResource, p.publicKey, p.authSecret,
                                 p.expires, p.created, p.lastSuccess, p.failures, p.firstFailure, p.retryAfter])
        case .trash(let t):
            try db.execute(sql: """
                INSERT INTO trash (id, collection_id, batch, reason, name, uid, display_name, etag, replaced_by, content_type, data,
                                   trashed, user)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [t.id, t.collectionID, t.batch, t.reason, t.name, t.uid, t.displayName, t.etag, t.replacedBy,
                                 t.contentType, t.data, t.trashed, t.user])
        case .feed(let f):
            try db.execute(sql: """
                INSERT INTO feeds (id, user_id, kind, secret_hash, books, created, last_read) VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [f.id, f.userID, f.kind, f.secretHash, f.books, f.created, f.lastRead])
        case .directoryEntry(let userID, let entry):
            try db.execute(sql: "INSERT INTO directory_entries (user_id, entry) VALUES (?, ?)", arguments: [userID, entry])
        // Each card's current version is its change row, copied before (v18): only the
        // versions before it are rows here.
        case .cardVersion(let v):
            try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO card_versions (collection_id, seq, name, at, etag, content_type, actor_user, actor_credential)
                SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8
                WHERE NOT EXISTS (SELECT 1 FROM changes WHERE collection_id = ?1 AND seq = ?2)
                """).execute(arguments: [v.collectionID, v.seq, v.name, v.at, v.etag, v.contentType, v.actorUser, v.actorCredential])
        case .cardVersionBody(let etag, let data):
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO card_version_bodies (etag, data) VALUES (?, ?)")
                .execute(arguments: [etag, data])
        case .cardVersionPart(let hash, let data):
            try db.cachedStatement(sql: "INSERT INTO card_version_parts (hash, data) VALUES (?, ?)").execute(arguments: [hash, data])
        case .cardVersionPartRef(let etag, let hash, let start, let length):
            try db.cachedStatement(sql: "INSERT INTO card_version_part_refs (etag, hash, start, length) VALUES (?, ?, ?, ?)")
                .execute(arguments: [etag, hash, start, length])
        }
    }

    /// The resource as stored (its id, ETag, seq and time), its body, and the rows derived
    /// from `card`: index entries (pending, merged at the end of the batch), members, list row.
    private static func restoreResource(_ r: SnapshotResource, _ db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO resources (id, collection_id, name, content_type, etag, size, modified, seq, uid, kind)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [r.id, r.collectionID, r.name, r.contentType, r.etag, r.data.count, r.modified, r.seq,
                                     r.uid, r.kind])
        try db.cachedStatement(sql: "INSERT INTO resource_bodies (resource_id, data) VALUES (?, ?)")
            .execute(arguments: [r.id, r.data])
        guard let card = r.card else { return }
        let insertEntry = try db.cachedStatement(sql: """
            INSERT INTO card_index_pending (id, collection_id, property, value_unicode, value_ascii, value)
            VALUES (?, ?, ?, ?, ?, ?)
            """)
        for (position, entry) in card.indexEntries.map(FoldedIndexEntry.init).enumerated() {
            try insertEntry.execute(arguments: [try pendingEntryID(resource: r.id, position: position), r.collectionID,
                                                entry.property, entry.unicode, entry.ascii, entry.verbatim])
        }
        let insertMember = try db.cachedStatement(sql: "INSERT INTO group_members (resource_id, collection_id, member_uid) VALUES (?, ?, ?)")
        for member in card.members {
            try insertMember.execute(arguments: [r.id, r.collectionID, member])
        }
        if let listing = card.listing {
            try db.cachedStatement(sql: """
                INSERT INTO card_listings (collection_id, is_group, sort_key, name, resource_id, display_name, organization,
                                           email, phone, has_photo, search_text)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [r.collectionID, (r.kind ?? card.kind) == "group", listing.sortKey, r.name, r.id,
                                         listing.displayName, listing.organization, listing.email, listing.phone,
                                         listing.hasPhoto, listing.searchText])
        }
    }
}

/// Pages of what the database held when `snapshotReader()` was called: a connection of
/// its own in one read transaction (WAL keeps it while others write; it holds back
/// checkpoints until released).
struct SQLiteSnapshotReader: StoreSnapshotReading {
    let snapshot: DatabaseSnapshot

    func close() async { try? snapshot.close() }

    func snapshotCounts() async throws -> [SnapshotTable: Int] {
        try await snapshot.read { db in
            var counts: [SnapshotTable: Int] = [:]
            for table in SnapshotTable.allCases {
                counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQLiteStore.snapshotSource(table).table)") ?? 0
            }
            return counts
        }
    }

    func snapshotPage(_ table: SnapshotTable, after last: SnapshotRecord?, limit: Int) async throws -> [SnapshotRecord] {
        let source = SQLiteStore.snapshotSource(table)
        let (condition, arguments) = SQLiteStore.keyCondition(after: last, key: source.key)
        return try await snapshot.read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT \(source.columns) FROM \(source.table) WHERE \(condition)
                ORDER BY \(source.key.joined(separator: ", ")) LIMIT \(limit)
                """, arguments: arguments)
            var records = try rows.map { try SQLiteStore.record(table, $0) }
            if table == .appPasswords, !records.isEmpty {
                let ids = records.compactMap { if case .appPassword(let p) = $0 { p.id } else { nil } }
                var books: [Int64: [Int64]] = [:]
                for row in try Row.fetchAll(db, sql: """
                    SELECT app_password_id, collection_id FROM app_password_books
                    WHERE app_password_id BETWEEN ? AND ? ORDER BY app_password_id, collection_id
                    """, arguments: [ids.first!, ids.last!]) {
                    books[row[0], default: []].append(row[1])
                }
                records = records.map { record in
                    guard case .appPassword(var password) = record else { return record }
                    password.books = books[password.id] ?? []
                    return .appPassword(password)
                }
            }
            return records
        }
    }

}

/// A value behind a lock, for the few settings a store replaces after opening.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
