import RoloStore
import GRDB

/// The statements that write a resource, its index and member rows and its change row,
/// fetched once per transaction so that an import of thousands of cards binds and steps
/// them without looking them up again. The caller checks preconditions and UID conflicts
/// and moves the collection's seq.
struct ResourceStatements {
    private let db: Database
    private let insertResource: Statement
    private let updateResource: Statement
    private let insertBody: Statement
    private let updateBody: Statement
    private let deleteEntries: Statement
    private let deletePendingEntries: Statement
    private let deleteMembers: Statement
    private let markTrigramsStale: Statement
    private let insertEntry: Statement
    private let insertMember: Statement
    private let recordChange: Statement
    private let deleteListing: Statement
    private let insertListing: Statement
    private let insertVersionPartRef: Statement
    private let selectEntries: Statement
    private let selectSearchText: Statement

    init(_ db: Database) throws {
        self.db = db
        // DO NOTHING on a taken name or UID lets an import try the insert first and look
        // up the existing resource only when the insert wrote nothing.
        insertResource = try db.cachedStatement(sql: """
            INSERT INTO resources (collection_id, name, content_type, etag, size, modified, seq, uid, kind)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """)
        updateResource = try db.cachedStatement(sql: """
            UPDATE resources SET content_type = ?, etag = ?, size = ?, modified = ?, seq = ?, uid = ?, kind = ?
            WHERE id = ?
            """)
        insertBody = try db.cachedStatement(sql: "INSERT INTO resource_bodies (resource_id, data) VALUES (?, ?)")
        updateBody = try db.cachedStatement(sql: "UPDATE resource_bodies SET data = ? WHERE resource_id = ?")
        deleteEntries = try db.cachedStatement(sql: "DELETE FROM card_index WHERE resource_id = ?")
        deletePendingEntries = try db.cachedStatement(sql: "DELETE FROM card_index_pending WHERE resource_id = ?")
        deleteMembers = try db.cachedStatement(sql: "DELETE FROM group_members WHERE resource_id = ?")
        // A card's trigram row changes at the next merge, not here: writing the FTS index
        // writes a segment per commit, the cost the pending entries avoid (schema v7).
        markTrigramsStale = try db.cachedStatement(sql: "INSERT OR IGNORE INTO card_trigram_stale (resource_id) VALUES (?)")
        // One row per statement: a multi-row VALUES measured 30% slower on import. Into the
        // pending entries, which the writer merges into card_index later (schema v5).
        insertEntry = try db.cachedStatement(sql: """
            INSERT INTO card_index_pending (resource_id, position, collection_id, property, value_unicode, value_ascii, value)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        insertMember = try db.cachedStatement(sql: "INSERT INTO group_members (resource_id, collection_id, member_uid) VALUES (?, ?, ?)")
        recordChange = try db.cachedStatement(sql: SQLiteStore.recordChangeSQL)
        deleteListing = try db.cachedStatement(sql: "DELETE FROM card_listings WHERE resource_id = ?")
        insertListing = try db.cachedStatement(sql: """
            INSERT INTO card_listings (collection_id, is_group, sort_key, name, resource_id, display_name, organization,
                                       email, phone, has_photo, search_text)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        // A card's entries, merged or pending (they are all in one table), in order.
        selectEntries = try db.cachedStatement(sql: """
            SELECT position, property, value_unicode, value_ascii, value FROM card_index WHERE resource_id = ?1
            UNION ALL
            SELECT position, property, value_unicode, value_ascii, value FROM card_index_pending WHERE resource_id = ?1
            ORDER BY 1
            """)
        selectSearchText = try db.cachedStatement(sql: "SELECT search_text FROM card_listings WHERE resource_id = ?")
        // Where each large part of the version the change row's trigger records (schema
        // v14) starts, for a body written before v15 too (those refs have none).
        insertVersionPartRef = try db.cachedStatement(sql: """
            INSERT INTO card_version_part_refs (etag, hash, start, length) VALUES (?, ?, ?, ?)
            ON CONFLICT (etag, hash) DO UPDATE SET start = excluded.start, length = excluded.length WHERE start IS NULL
            """)
    }

    /// Inserts a new resource with its rows; false (and nothing written) when the book
    /// already has a resource with this name or UID.
    func insert(_ write: ResourceWrite, collectionID: Int64, seq: Int64, now: Double) throws -> Bool {
        try insertResource.run { row in
            row.add(collectionID); row.add(write.name); row.add(write.contentType); row.add(write.etag)
            row.add(write.data.count); row.add(now); row.add(seq); row.add(write.card?.uid); row.add(write.card?.kind)
        }
        guard db.changesCount > 0 else { return false }
        let resourceID = db.lastInsertedRowID
        try insertBody.run(blob: write.data) { row, body in row.add(resourceID); row.add(inPlace: body) }
        try writeRows(of: write, resourceID: resourceID, collectionID: collectionID, seq: seq, now: now, entries: true)
        return true
    }

    /// Replaces the resource `id` (same name) and its rows; the number of index entries it
    /// wrote (into the pending entries), 0 when the card's stayed as they were.
    @discardableResult
    func replace(id: Int64, with write: ResourceWrite, collectionID: Int64, seq: Int64, now: Double) throws -> Int {
        try SQLiteStore.keepReplacedBody(db, resourceID: id, newETag: write.etag, newParts: write.versionBody.parts)
        try updateResource.run { row in
            row.add(write.contentType); row.add(write.etag); row.add(write.data.count); row.add(now); row.add(seq)
            row.add(write.card?.uid); row.add(write.card?.kind); row.add(id)
        }
        try updateBody.run(blob: write.data) { row, body in row.add(inPlace: body); row.add(id) }
        let keepsEntries = try hasEntries(id: id, write)
        if !keepsEntries {
            try deleteEntries.run { row in row.add(id) }
            try deletePendingEntries.run { row in row.add(id) }
            // New entries replace the card's trigram row at the merge (OR REPLACE); only a card
            // left without entries needs its row dropped there.
            if write.entries.isEmpty { try markTrigramsStale.run { row in row.add(id) } }
        }
        try deleteMembers.run { row in row.add(id) }
        try deleteListing.run { row in row.add(id) }
        try writeRows(of: write, resourceID: id, collectionID: collectionID, seq: seq, now: now, entries: !keepsEntries)
        return keepsEntries ? 0 : write.entries.count
    }

    /// Whether the card `id` has exactly the entries `write` would give it (in order, byte for
    /// byte) and its list row the same search text. Then an update keeps them: most edits (a
    /// note, an address, a photo) change neither, and each entry rewritten was a row deleted,
    /// a pending row written, and at the merge a row and its trigram row written again
    /// (issue 34). The search text is compared too because the merge refreshes a card's
    /// list trigrams only when it has pending entries.
    private func hasEntries(id: Int64, _ write: ResourceWrite) throws -> Bool {
        let entries = write.entries
        var matched = 0, same = true
        try selectEntries.forEachRow(binding: { $0.add(id) }) { row in
            guard matched < entries.count, row.int64(0) == Int64(matched) else { same = false; return false }
            let entry = entries[matched]
            same = row.holds(1, entry.property) && row.holds(2, entry.unicode) && row.holds(3, entry.ascii)
                && row.holds(4, entry.verbatim)
            matched += 1
            return same
        }
        guard same, matched == entries.count else { return false }
        let listed = try selectSearchText.firstRow(binding: { $0.add(id) }) { row in row.holds(0, write.card?.listing?.searchText) }
        return listed ?? (write.card?.listing == nil)
    }

    private func writeRows(of write: ResourceWrite, resourceID: Int64, collectionID: Int64, seq: Int64, now: Double,
                           entries: Bool) throws {
        if entries {
            for (position, entry) in write.entries.enumerated() {
                try insertEntry.run { row in
                    row.add(resourceID); row.add(position); row.add(collectionID); row.add(entry.property)
                    row.add(entry.unicode); row.add(entry.ascii); row.add(entry.verbatim)
                }
            }
        }
        if let card = write.card, let listing = card.listing {
            try insertListing.run { row in
                row.add(collectionID); row.add(card.kind == "group"); row.add(listing.sortKey); row.add(write.name)
                row.add(resourceID); row.add(listing.displayName); row.add(listing.organization); row.add(listing.email)
                row.add(listing.phone); row.add(listing.hasPhoto); row.add(listing.searchText)
            }
        }
        for member in write.card?.members ?? [] {
            try insertMember.run { row in row.add(resourceID); row.add(collectionID); row.add(member) }
        }
        try writeVersionBody(of: write)
        try recordChange.run { row in
            row.add(collectionID); row.add(seq); row.add(write.name); row.add(false); row.add(now)
            row.add(write.author?.user); row.add(write.author?.credentialID); row.add(write.etag); row.add(write.contentType)
        }
    }

    /// Where the large properties of the version this write makes are in the card: its
    /// text and they stay in the card's body until a write replaces them
    /// (`SQLiteStore.keepReplacedBody`).
    private func writeVersionBody(of write: ResourceWrite) throws {
        for part in write.versionBody.parts {
            try insertVersionPartRef.run { row in
                row.add(write.etag); row.add(part.hash); row.add(part.start); row.add(part.data.count)
            }
        }
    }
}
