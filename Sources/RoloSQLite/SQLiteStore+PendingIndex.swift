import Foundation
import RoloStore
import GRDB

/// Index entries of recent writes wait in `card_index_pending` (schema v5): appending them
/// there writes a page or two per commit, where inserting them into the two value indexes
/// wrote a leaf at a random place per entry. The writer moves them into `card_index` in
/// batches, where each leaf is written once per batch: after a burst of writes, before the
/// idle checkpoint, and whenever `Tuning.pendingIndexEntries` are waiting (`GroupCommit.Upkeep`).
/// Queries read both tables (`SQLiteStore+Query.swift`).
extension SQLiteStore {
    /// The bits of a pending entry's `id` below its resource's id, which hold its position
    /// (schema v19): room for 16,777,216 entries a card, where a 10 MB card has at most some
    /// 1,700,000 (`TEL:` and a line break each).
    static let pendingPositionBits = 24
    static let pendingPositionLimit = 1 << pendingPositionBits

    /// A pending entry's key: its resource's id above its position, so a new card's entries
    /// append to the table's last page and a resource's entries are one range of keys.
    static func pendingEntryID(resource: Int64, position: Int) throws -> Int64 {
        guard position >= 0, position < pendingPositionLimit, resource >= 0, resource < Int64(1) << (63 - pendingPositionBits)
        else { throw StoreError.invalid("a card with more than \(pendingPositionLimit) indexed values") }
        return (resource << pendingPositionBits) + Int64(position)
    }

    /// The SQL test that a `card_index_pending` row (of `table`, an alias or the table's name)
    /// is an entry of the resource `resource` (an SQL expression): a range of its key, which
    /// SQLite reads as a range where a test of the generated `resource_id` reads every row.
    /// `resource` appears twice: a parameter must be numbered (`?1`), not `?`.
    static func pendingEntries(of resource: String, in table: String = "card_index_pending") -> String {
        "\(table).id BETWEEN ((\(resource)) << \(pendingPositionBits)) AND (((\(resource)) << \(pendingPositionBits)) + \(pendingPositionLimit - 1))"
    }

    /// The `resource_id` and `collection_id` of every index entry, merged or pending, for
    /// checks that look at all of them.
    static let allIndexEntries = """
        (SELECT resource_id, collection_id FROM card_index UNION ALL SELECT resource_id, collection_id FROM card_index_pending)
        """

    /// Moves every pending entry into `card_index`, and the pending cards' text into
    /// `card_trigrams` (and their search lines into `card_listing_trigrams`) after dropping the rows of cards replaced or deleted since the last
    /// merge. The writer calls it outside a transaction, where each statement is its own and
    /// SQLite keeps no statement journal: inside one, the INSERT kept a copy of every page it
    /// changed (in memory, with `temp_store = MEMORY`), 20 MB for a merge into a
    /// 100,000-card book. Every step can be cut short by a crash and run again: stale rows
    /// are dropped before any card's new row is written (so a reused resource id keeps its
    /// new row), the pending entries go last, and until then queries find those cards by
    /// scanning them; the copies the next merge finds in card_index are skipped (OR IGNORE)
    /// and trigram rows replaced (OR REPLACE). `rolo import` calls it inside each batch's
    /// transaction, whose size bounds that journal.
    ///
    /// Each card's text is gathered from its own range of keys, card by card, not by a
    /// `GROUP BY resource_id`: SQLite cannot tell that the keys' order is the cards' order, so
    /// the grouping first sorted every pending value in memory (`temp_store = MEMORY`). The
    /// server's peak RSS at a 30,000-card import fell from 89 to 73 MiB (issue 34).
    static func mergePendingIndex(_ db: Database) throws {
        try db.execute(sql: """
            DELETE FROM card_trigrams WHERE rowid IN (SELECT resource_id FROM card_trigram_stale);
            DELETE FROM card_listing_trigrams WHERE rowid IN (SELECT resource_id FROM card_trigram_stale);
            DELETE FROM card_trigram_stale;
            INSERT OR REPLACE INTO card_listing_trigrams (rowid, text)
                SELECT resource_id, search_text FROM card_listings
                WHERE resource_id IN (SELECT resource_id FROM card_index_pending);
            INSERT OR IGNORE INTO card_index (resource_id, position, collection_id, property, value_unicode, value_ascii, value)
                SELECT resource_id, position, collection_id, property, value_unicode, value_ascii, value FROM card_index_pending;
            INSERT OR REPLACE INTO card_trigrams (rowid, text)
                SELECT pending.resource_id, (SELECT \(trigramText) FROM card_index_pending p
                                             WHERE \(pendingEntries(of: "pending.resource_id", in: "p")))
                FROM (SELECT DISTINCT resource_id FROM card_index_pending) pending;
            DELETE FROM card_index_pending;
            """)
    }

    /// A card's text in `card_trigrams`, over the rows of one resource (an aggregate): every
    /// value's Unicode fold and, where it differs, its ASCII fold, one per line. Whatever a
    /// contains or ends-with of any collation matches holds the trigrams of the needle that
    /// `substringMatchSQL` searches for: the Unicode fold's for i;unicode-casemap, the ASCII
    /// fold's for the other two (a verbatim match is also one of the ASCII folds). A line
    /// break joins values, so trigrams across two values only add candidates.
    static let trigramText = "group_concat(value_unicode || coalesce(char(10) || value_ascii, ''), char(10))"

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
