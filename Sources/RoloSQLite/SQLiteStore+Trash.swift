import Foundation
import RoloStore
import GRDB

/// The web UI's writes of several cards at once, and its trash (schema v9).
extension SQLiteStore {
    public func applyCardBatch(collectionID: Int64, writes: [CardBatchWrite]) async throws -> CardBatchResult {
        // ETags and folds before taking the writer, as for a PUT.
        let preparedBatch = try PreparedCardBatch(writes)
        let prepared = preparedBatch.writes
        let batch = preparedBatch.batch
        let author = preparedBatch.author
        let user = author?.user
        let result = try await pool.write { db in
            var seq = try Self.collectionRow(db, id: collectionID).syncSeq
            let start = seq
            let now = self.now
            let statements = ResourceStatements(db)
            var etags: [String: String] = [:]
            var trashed: [String: Int64] = [:]
            for write in prepared {
                switch write {
                case let .put(resource, precondition, keepPrevious):
                    let existing = try Self.checkWrite(db, collectionID: collectionID, name: resource.name, card: resource.card,
                                                       precondition: precondition)
                    seq += 1
                    if let existing {
                        if keepPrevious {
                            try Self.keepInTrash(db, resourceID: existing.id, batch: batch, reason: .replaced,
                                                 replacedBy: resource.etag, now: now, user: user)
                            trashed[resource.name] = db.lastInsertedRowID
                        }
                        try statements.replace(id: existing.id, with: resource, collectionID: collectionID, seq: seq, now: now)
                    } else if try !statements.insert(resource, collectionID: collectionID, seq: seq, now: now) {
                        throw StoreError.alreadyExists // unreachable: name and UID were checked above
                    }
                    etags[resource.name] = resource.etag
                case let .trash(name, precondition, reason):
                    let existing = try Self.existingResource(db, collectionID: collectionID, name: name)
                    try precondition.check(currentETag: existing?.etag)
                    guard let existing else { throw StoreError.notFound }
                    try Self.keepInTrash(db, resourceID: existing.id, batch: batch, reason: reason, replacedBy: nil,
                                         now: now, user: user)
                    trashed[name] = db.lastInsertedRowID
                    seq += 1
                    try Self.removeResource(db, collectionID: collectionID, id: existing.id, name: name, seq: seq, now: now,
                                            author: author)
                case let .dropTrashed(id):
                    try db.execute(sql: "DELETE FROM trash WHERE id = ? AND collection_id = ?", arguments: [id, collectionID])
                    if db.changesCount == 0 { throw StoreError.notFound }
                }
            }
            if seq != start { try Self.setSyncSeq(db, collectionID: collectionID, seq: seq, now: now) }
            return (CardBatchResult(batch: batch, etags: etags, trashed: trashed, seq: seq), moved: seq != start)
        }
        for case let .put(resource, _, _) in prepared { pendingIndex.add(max(resource.entries.count, 1)) }
        if result.moved { bookChanges.publish(collectionID: collectionID, seq: result.0.seq) }
        return result.0
    }

    /// Copies the resource, body and all, into the trash.
    private static func keepInTrash(_ db: Database, resourceID: Int64, batch: String, reason: TrashReason,
                                    replacedBy: String?, now: Double, user: String?) throws {
        try db.execute(sql: """
            INSERT INTO trash (collection_id, batch, reason, name, uid, display_name, etag, replaced_by, content_type, data,
                               trashed, user)
            SELECT r.collection_id, ?, ?, r.name, COALESCE(r.uid, ''), COALESCE(l.display_name, r.uid, r.name), r.etag, ?,
                   r.content_type, b.data, ?, ?
            FROM resources r JOIN resource_bodies b ON b.resource_id = r.id
            LEFT JOIN card_listings l ON l.resource_id = r.id WHERE r.id = ?
            """, arguments: [batch, reason.rawValue, replacedBy, now, user, resourceID])
    }

    private static let trashColumns = "id, collection_id, name, uid, display_name, reason, batch, etag, replaced_by, trashed, user"

    private static func trashedCard(from row: Row) -> TrashedCard {
        TrashedCard(id: row[0], collectionID: row[1], name: row[2], uid: row[3], displayName: row[4],
                    reason: TrashReason(rawValue: row[5]) ?? .deleted, batch: row[6], etag: row[7], replacedBy: row[8],
                    trashed: Date(timeIntervalSince1970: row[9]), user: row[10])
    }

    public func trash(collectionID: Int64, limit: Int) async throws -> [TrashedCard] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.trashColumns) FROM trash WHERE collection_id = ? ORDER BY trashed DESC, id DESC LIMIT ?
                """, arguments: [collectionID, limit]).map(Self.trashedCard(from:))
        }
    }

    public func trashedCard(id: Int64) async throws -> (card: TrashedCard, data: Data, contentType: String)? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.trashColumns), data, content_type FROM trash WHERE id = ?",
                             arguments: [id]).map { row in (Self.trashedCard(from: row), row[11], row[12]) }
        }
    }

    public func trash(batch: String) async throws -> [TrashedCard] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.trashColumns) FROM trash WHERE batch = ? ORDER BY id",
                             arguments: [batch]).map(Self.trashedCard(from:))
        }
    }

    public func purgeTrash(olderThan date: Date) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM trash WHERE trashed < ?", arguments: [date.timeIntervalSince1970])
            return db.changesCount
        }
    }

    // MARK: Web sessions

    public func createWebSession(tokenHash: String, user: String, csrfToken: String) async throws {
        try await pool.write { db in
            guard let userID = try Self.userID(db, name: user) else { throw StoreError.noSuchUser }
            let now = self.now
            try db.execute(sql: """
                INSERT INTO web_sessions (token_hash, user_id, csrf_token, created, last_seen) VALUES (?, ?, ?, ?, ?)
                """, arguments: [tokenHash, userID, csrfToken, now, now])
        }
    }

    public func webSession(tokenHash: String) async throws -> WebSession? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: """
                SELECT u.name, s.csrf_token, s.created, s.last_seen FROM web_sessions s JOIN users u ON u.id = s.user_id
                WHERE s.token_hash = ? AND u.disabled = 0
                """, arguments: [tokenHash]).map { row in
                WebSession(user: row[0], csrfToken: row[1], created: Date(timeIntervalSince1970: row[2]),
                           lastSeen: Date(timeIntervalSince1970: row[3]))
            }
        }
    }

    public func touchWebSession(tokenHash: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE web_sessions SET last_seen = ? WHERE token_hash = ?", arguments: [self.now, tokenHash])
        }
    }

    public func deleteWebSession(tokenHash: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM web_sessions WHERE token_hash = ?", arguments: [tokenHash])
        }
    }

    public func deleteWebSessions(user: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM web_sessions WHERE user_id = (SELECT id FROM users WHERE name = ?)",
                           arguments: [user])
        }
    }

    public func pruneWebSessions(idleSince: Date, createdBefore: Date) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM web_sessions WHERE last_seen < ? OR created < ?",
                           arguments: [idleSince.timeIntervalSince1970, createdBefore.timeIntervalSince1970])
            return db.changesCount
        }
    }
}
