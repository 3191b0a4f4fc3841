import RoloStore
import GRDB

/// The statements that write a resource, its index and member rows and its change row,
/// each fetched from the connection's cache once per transaction, when first used, so that
/// an import of thousands of cards binds and steps them without looking them up again, and
/// a single new card looks up the four to seven it uses, not all sixteen (issue 34: hashing
/// the SQL of each was 0.6 % of a PUT's CPU). The caller checks preconditions and UID
/// conflicts and moves the collection's seq.
final class ResourceStatements {
    private let db: Database
    private var prepared = [Statement?](repeating: nil, count: SQL.allCases.count)

    init(_ db: Database) { self.db = db }

    private func statement(_ sql: SQL) throws -> Statement {
        if let statement = prepared[sql.rawValue] { return statement }
        let statement = try db.cachedStatement(sql: sql.text)
        prepared[sql.rawValue] = statement
        return statement
    }

    private enum SQL: Int, CaseIterable {
        case insertResource, updateResource, insertBody, updateBody, deleteEntries, deletePendingEntries, deleteMembers
        case markTrigramsStale, insertEntry, insertMember, recordChange, deleteListing, writeListing
        case insertVersionPartRef, selectEntries, selectSearchText

        var text: String {
            switch self {
            // DO NOTHING on a taken name or UID lets an import try the insert first and look
            // up the existing resource only when the insert wrote nothing.
            case .insertResource: """
                INSERT INTO resources (collection_id, name, content_type, etag, size, modified, seq, uid, kind)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """
            case .updateResource: """
                UPDATE resources SET content_type = ?, etag = ?, size = ?, modified = ?, seq = ?, uid = ?, kind = ?
                WHERE id = ?
                """
            case .insertBody: "INSERT INTO resource_bodies (resource_id, data) VALUES (?, ?)"
            case .updateBody: "UPDATE resource_bodies SET data = ? WHERE resource_id = ?"
            case .deleteEntries: "DELETE FROM card_index WHERE resource_id = ?"
            case .deletePendingEntries: "DELETE FROM card_index_pending WHERE \(SQLiteStore.pendingEntries(of: "?1"))"
            case .deleteMembers: "DELETE FROM group_members WHERE resource_id = ?"
            // A card's trigram row changes at the next merge, not here: writing the FTS index
            // writes a segment per commit, the cost the pending entries avoid (schema v7).
            case .markTrigramsStale: "INSERT OR IGNORE INTO card_trigram_stale (resource_id) VALUES (?)"
            // One row per statement: a multi-row VALUES measured 30% slower on import. Into the
            // pending entries, which the writer merges into card_index later (schema v5),
            // keyed by `SQLiteStore.pendingEntryID` (v19).
            case .insertEntry: """
                INSERT INTO card_index_pending (id, collection_id, property, value_unicode, value_ascii, value)
                VALUES (?, ?, ?, ?, ?, ?)
                """
            case .insertMember: "INSERT INTO group_members (resource_id, collection_id, member_uid) VALUES (?, ?, ?)"
            case .recordChange: SQLiteStore.recordChangeSQL
            case .deleteListing: "DELETE FROM card_listings WHERE resource_id = ?"
            // Upserted, as on PostgreSQL (`PostgresStore.listingConflictSQL`): a replaced card's
            // row is left alone when it is the same (an edit of a note, an address or a
            // birthday), where deleting and writing it again was two rows and two index
            // entries of work and of pages in the commit (issue 34).
            case .writeListing: """
                INSERT INTO card_listings (collection_id, is_group, sort_key, name, resource_id, display_name, organization,
                                           email, phone, has_photo, search_text)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (resource_id) DO UPDATE SET collection_id = excluded.collection_id, is_group = excluded.is_group,
                    sort_key = excluded.sort_key, name = excluded.name, display_name = excluded.display_name,
                    organization = excluded.organization, email = excluded.email, phone = excluded.phone,
                    has_photo = excluded.has_photo, search_text = excluded.search_text
                WHERE (collection_id, is_group, sort_key, name, display_name, organization, email, phone, has_photo, search_text)
                      IS NOT (excluded.collection_id, excluded.is_group, excluded.sort_key, excluded.name, excluded.display_name,
                              excluded.organization, excluded.email, excluded.phone, excluded.has_photo, excluded.search_text)
                """
            // Where each large part of the version the change row's trigger records (schema
            // v14) starts, for a body written before v15 too (those refs have none).
            case .insertVersionPartRef: """
                INSERT INTO card_version_part_refs (etag, hash, start, length) VALUES (?, ?, ?, ?)
                ON CONFLICT (etag, hash) DO UPDATE SET start = excluded.start, length = excluded.length WHERE start IS NULL
                """
            // A card's entries, merged or pending (they are all in one table), in order.
            case .selectEntries: """
                SELECT position, property, value_unicode, value_ascii, value FROM card_index WHERE resource_id = ?1
                UNION ALL
                SELECT position, property, value_unicode, value_ascii, value FROM card_index_pending
                WHERE \(SQLiteStore.pendingEntries(of: "?1"))
                ORDER BY 1
                """
            case .selectSearchText: "SELECT search_text FROM card_listings WHERE resource_id = ?"
            }
        }
    }

    /// Inserts a new resource with its rows; false (and nothing written) when the book
    /// already has a resource with this name or UID.
    func insert(_ write: ResourceWrite, collectionID: Int64, seq: Int64, now: Double) throws -> Bool {
        try statement(.insertResource).run { row in
            row.add(collectionID); row.add(write.name); row.add(write.contentType); row.add(write.etag)
            row.add(write.data.count); row.add(now); row.add(seq); row.add(write.card?.uid); row.add(write.card?.kind)
        }
        guard db.changesCount > 0 else { return false }
        let resourceID = db.lastInsertedRowID
        try statement(.insertBody).run(blob: write.data) { row, body in row.add(resourceID); row.add(inPlace: body) }
        try writeRows(of: write, resourceID: resourceID, collectionID: collectionID, seq: seq, now: now, entries: true)
        return true
    }

    /// Replaces the resource `id` (same name) and its rows; the number of index entries it
    /// wrote (into the pending entries), 0 when the card's stayed as they were.
    @discardableResult
    func replace(id: Int64, with write: ResourceWrite, collectionID: Int64, seq: Int64, now: Double) throws -> Int {
        try SQLiteStore.keepReplacedBody(db, resourceID: id, newETag: write.etag, newParts: write.versionBody.parts)
        try statement(.updateResource).run { row in
            row.add(write.contentType); row.add(write.etag); row.add(write.data.count); row.add(now); row.add(seq)
            row.add(write.card?.uid); row.add(write.card?.kind); row.add(id)
        }
        try statement(.updateBody).run(blob: write.data) { row, body in row.add(inPlace: body); row.add(id) }
        let keepsEntries = try hasEntries(id: id, write)
        if !keepsEntries {
            try statement(.deleteEntries).run { row in row.add(id) }
            try statement(.deletePendingEntries).run { row in row.add(id) }
            // New entries replace the card's trigram row at the merge (OR REPLACE); only a card
            // left without entries needs its row dropped there.
            if write.entries.isEmpty { try statement(.markTrigramsStale).run { row in row.add(id) } }
        }
        try statement(.deleteMembers).run { row in row.add(id) }
        // A card with a list row gets it upserted (`writeListing`); one without loses its old one.
        if write.card?.listing == nil { try statement(.deleteListing).run { row in row.add(id) } }
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
        try statement(.selectEntries).forEachRow(binding: { $0.add(id) }) { row in
            guard matched < entries.count, row.int64(0) == Int64(matched) else { same = false; return false }
            let entry = entries[matched]
            same = row.holds(1, entry.property) && row.holds(2, entry.unicode) && row.holds(3, entry.ascii)
                && row.holds(4, entry.verbatim)
            matched += 1
            return same
        }
        guard same, matched == entries.count else { return false }
        let listed = try statement(.selectSearchText).firstRow(binding: { $0.add(id) }) { row in row.holds(0, write.card?.listing?.searchText) }
        return listed ?? (write.card?.listing == nil)
    }

    private func writeRows(of write: ResourceWrite, resourceID: Int64, collectionID: Int64, seq: Int64, now: Double,
                           entries: Bool) throws {
        if entries, !write.entries.isEmpty {
            let insertEntry = try statement(.insertEntry)
            for (position, entry) in write.entries.enumerated() {
                let id = try SQLiteStore.pendingEntryID(resource: resourceID, position: position)
                try insertEntry.run { row in
                    row.add(id); row.add(collectionID); row.add(entry.property)
                    row.add(entry.unicode); row.add(entry.ascii); row.add(entry.verbatim)
                }
            }
        }
        if let card = write.card, let listing = card.listing {
            try statement(.writeListing).run { row in
                row.add(collectionID); row.add(card.kind == "group"); row.add(listing.sortKey); row.add(write.name)
                row.add(resourceID); row.add(listing.displayName); row.add(listing.organization); row.add(listing.email)
                row.add(listing.phone); row.add(listing.hasPhoto); row.add(listing.searchText)
            }
        }
        for member in write.card?.members ?? [] {
            try statement(.insertMember).run { row in row.add(resourceID); row.add(collectionID); row.add(member) }
        }
        try writeVersionBody(of: write)
        try statement(.recordChange).run { row in
            row.add(collectionID); row.add(seq); row.add(write.name); row.add(false); row.add(now)
            row.add(write.author?.user); row.add(write.author?.credentialID); row.add(write.etag); row.add(write.contentType)
        }
    }

    /// Where the large properties of the version this write makes are in the card: its
    /// text and they stay in the card's body until a write replaces them
    /// (`SQLiteStore.keepReplacedBody`).
    private func writeVersionBody(of write: ResourceWrite) throws {
        for part in write.versionBody.parts {
            try statement(.insertVersionPartRef).run { row in
                row.add(write.etag); row.add(part.hash); row.add(part.start); row.add(part.data.count)
            }
        }
    }
}
