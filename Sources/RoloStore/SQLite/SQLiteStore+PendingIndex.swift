import Foundation
import GRDB

/// Index entries of recent writes wait in `card_index_pending` (schema v5): appending them
/// there writes a page or two per commit, where inserting them into the two value indexes
/// wrote a leaf at a random place per entry. The writer moves them into `card_index` in
/// batches, where each leaf is written once per batch: after a burst of writes, before the
/// idle checkpoint, and whenever `Tuning.pendingIndexEntries` are waiting (`GroupCommit.Upkeep`).
/// Queries read both tables (`SQLiteStore+Query.swift`).
extension SQLiteStore {
    /// The `resource_id` and `collection_id` of every index entry, merged or pending, for
    /// checks that look at all of them.
    static let allIndexEntries = """
        (SELECT resource_id, collection_id FROM card_index UNION ALL SELECT resource_id, collection_id FROM card_index_pending)
        """

    /// Moves every pending entry into `card_index`. The writer calls it outside a
    /// transaction, where each statement is its own and SQLite keeps no statement journal:
    /// inside one, the INSERT kept a copy of every page it changed (in memory, with
    /// `temp_store = MEMORY`), 20 MB for a merge into a 100,000-card book. A crash between
    /// the two statements leaves entries in both tables; queries still answer right, and
    /// the next merge (opening the store does one) skips the copies (OR IGNORE) and empties
    /// the pending table. `rolo import` calls it inside each batch's transaction, whose
    /// size bounds that journal.
    static func mergePendingIndex(_ db: Database) throws {
        try db.execute(sql: """
            INSERT OR IGNORE INTO card_index (resource_id, position, collection_id, property, value_unicode, value_ascii, value)
                SELECT resource_id, position, collection_id, property, value_unicode, value_ascii, value FROM card_index_pending
            """)
        try db.execute(sql: "DELETE FROM card_index_pending")
    }

    /// Merges the pending index entries now, on the writer (for tests).
    func mergePendingIndex() async throws {
        try await pool.writeWithoutTransaction { db in try Self.mergePendingIndex(db) }
        pendingIndex.reset()
    }

    /// Index entries waiting in `card_index_pending`, counted by SQLite (for tests).
    func pendingIndexEntryCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM card_index_pending") ?? 0 }
    }

    /// What `GroupCommit` runs between batches for the pending entries.
    static func pendingIndexUpkeep(_ pending: PendingIndexCount, mergeAt threshold: Int) -> GroupCommit.Upkeep {
        GroupCommit.Upkeep(
            isDue: { idle in idle ? pending.count > 0 : pending.count >= threshold },
            run: { db in
                try mergePendingIndex(db)
                pending.reset()
            })
    }
}

/// How many index entries wait to be merged, as counted when they are written: a write
/// rolled back afterwards still counts, which only brings the next merge forward.
final class PendingIndexCount: @unchecked Sendable {
    private let lock = NSLock()
    private var entries = 0

    var count: Int { lock.withLock { entries } }
    func add(_ count: Int) { lock.withLock { entries += count } }
    func reset() { lock.withLock { entries = 0 } }
}
