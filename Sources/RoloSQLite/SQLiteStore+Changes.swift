import Foundation
import RoloStore
import GRDB

extension SQLiteStore {
    /// The log keeps one row per name, its latest change, so "the latest state of each
    /// name changed after seq" is a range scan on (collection, seq). A token `s` stays
    /// valid until a tombstone newer than `s` is compacted away (`min_valid_seq`). Seq 0
    /// (a client that holds nothing) is always valid and is not told about deletions.
    public func changes(collectionID: Int64, since seq: Int64, limit: Int?) async throws -> ChangeSet {
        try await pool.read { db in
            let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT sync_seq, min_valid_seq FROM collections WHERE id = ?
                """), arguments: [collectionID])
            guard let row else { throw StoreError.notFound }
            let current: Int64 = row[0]
            let minimumValid: Int64 = row[1]
            if seq < 0 || seq > current { throw StoreError.invalidSyncToken }
            if seq > 0 && seq < minimumValid { throw StoreError.syncTokenTooOld }

            // One row more than asked tells whether the answer is truncated.
            let fetchLimit = limit.map { max($0, 0) + 1 } ?? -1
            let statement = try db.cachedStatement(sql: """
                SELECT name, deleted, seq FROM changes
                WHERE collection_id = ? AND seq > ? AND (? OR deleted = 0)
                ORDER BY seq LIMIT ?
                """)
            var changes: [ChangeSet.Change] = []
            let cursor = try Row.fetchCursor(statement, arguments: [collectionID, seq, seq > 0, fetchLimit])
            while let row = try cursor.next() {
                changes.append(ChangeSet.Change(name: row[0], deleted: row[1], seq: row[2]))
            }
            if let limit, changes.count > limit {
                changes.removeLast(changes.count - limit)
                return ChangeSet(changes: changes, newSeq: changes.last?.seq ?? seq, truncated: true)
            }
            return ChangeSet(changes: changes, newSeq: current, truncated: false)
        }
    }

    public func compactChanges(olderThan date: Date) async throws {
        let cutoff = date.timeIntervalSince1970
        try await pool.write { db in
            try db.execute(sql: """
                UPDATE collections SET min_valid_seq = MAX(min_valid_seq, (
                    SELECT MAX(seq) FROM changes
                    WHERE changes.collection_id = collections.id AND deleted = 1 AND at < ?1))
                WHERE id IN (SELECT collection_id FROM changes WHERE deleted = 1 AND at < ?1)
                """, arguments: [cutoff])
            try db.execute(sql: "DELETE FROM changes WHERE deleted = 1 AND at < ?", arguments: [cutoff])
        }
    }

    /// Makes `seq` the latest change of `name`, replacing the previous one: a deletion
    /// (no ETag), or the version `etag` of type `contentType`. The row is the card's current
    /// version (schema v18); the one it replaces moves into the history by trigger.
    static func recordDeletion(_ db: Database, collectionID: Int64, name: String, seq: Int64, now: Double,
                               author: ChangeAuthor?) throws {
        try db.cachedStatement(sql: recordChangeSQL)
            .bound([collectionID, seq, name, true, now, author?.user, author?.credentialID, nil, nil]).execute()
    }

    /// Arguments: collection id, seq, name, deleted, time, author's user and credential,
    /// ETag and content type (nil for a deletion).
    static let recordChangeSQL = """
        INSERT INTO changes (collection_id, seq, name, deleted, at, actor_user, actor_credential, etag, content_type)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (collection_id, name) DO UPDATE SET seq = excluded.seq, deleted = excluded.deleted, at = excluded.at,
            actor_user = excluded.actor_user, actor_credential = excluded.actor_credential, etag = excluded.etag,
            content_type = excluded.content_type
        """
}
