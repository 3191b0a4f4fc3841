import Foundation
import RoloStore
import GRDB

/// Lists for the web UI from `card_listings` (schema v9, kept by resource id since v19):
/// pages in (sort key, name) order from `card_listings_order`, searches as `instr` on the
/// folded search text of the rows read in that order, so a common word fills its page after
/// a few hundred rows and a rare one costs one pass over the book's rows, never a card.
extension SQLiteStore {
    static let listingColumns = """
        l.name, r.uid, r.kind, r.etag, l.display_name, l.sort_key, l.organization, l.email, l.phone, l.has_photo, l.search_text
        """

    /// Rows a search reads in list order before it asks the trigram index instead: a word
    /// that fills a page within them is common enough that reading on is cheapest.
    static let searchWindow = 2000

    public func cardListings(collectionID: Int64, filter: ListingFilter, search: [String], from position: ListingPosition,
                             limit: Int) async throws -> ListingPage {
        let limit = max(1, limit)
        var rows: [CardListing]
        let trigrams = try await listingTrigramQuery(collectionID: collectionID, search: search, filter: filter)
        if trigrams == nil {
            rows = try await listingRows(collectionID: collectionID, filter: filter, search: search, position: position,
                                         limit: limit + 1, window: nil, candidates: nil)
        } else {
            // In list order within a window first: a common word's page is there. A rare
            // one's is found from the trigram index, whose candidates are then sorted.
            rows = try await listingRows(collectionID: collectionID, filter: filter, search: search, position: position,
                                         limit: limit + 1, window: Self.searchWindow, candidates: nil)
            if rows.count <= limit {
                rows = try await listingRows(collectionID: collectionID, filter: filter, search: search, position: position,
                                             limit: limit + 1, window: nil, candidates: trigrams)
            }
        }
        return ListingPage(scanned: rows, limit: limit, position: position)
    }

    /// Up to `limit` rows from `position` on, in list order. `window` reads at most that
    /// many of the book's rows (matching or not); `candidates`, an FTS5 query, starts from
    /// the cards `card_listing_trigrams` finds (and the cards written since its last merge).
    private func listingRows(collectionID: Int64, filter: ListingFilter, search: [String], position: ListingPosition,
                             limit: Int, window: Int?, candidates: String?) async throws -> [CardListing] {
        var arguments = StatementArguments()
        var source = "card_listings l"
        if let candidates {
            // CROSS JOIN keeps SQLite from walking the whole book in order and testing
            // membership: the few candidates drive, and are sorted afterwards.
            source = """
                (SELECT rowid AS id FROM card_listing_trigrams WHERE card_listing_trigrams MATCH ?
                 UNION SELECT resource_id FROM card_index_pending WHERE collection_id = ?) c
                CROSS JOIN card_listings l ON l.resource_id = c.id
                """
            arguments += [candidates, collectionID]
        }
        var condition = Self.listingCondition(collectionID: collectionID, filter: filter,
                                              search: window == nil ? search : [], arguments: &arguments)
        let order: String
        switch position {
        case .first:
            order = "l.sort_key, l.name"
        case .after(let cursor):
            condition += " AND (l.sort_key, l.name) > (?, ?)"
            arguments += [cursor.sortKey, cursor.name]
            order = "l.sort_key, l.name"
        case .before(let cursor):
            condition += " AND (l.sort_key, l.name) < (?, ?)"
            arguments += [cursor.sortKey, cursor.name]
            order = "l.sort_key DESC, l.name DESC"
        }
        var sql = "SELECT l.resource_id, l.name FROM \(source) WHERE \(condition) ORDER BY \(order)"
        if let window {
            // The window's rows, then the words tested on them alone.
            arguments += [window]
            sql = "SELECT w.resource_id, w.name FROM (\(sql) LIMIT ?) w JOIN card_listings l ON l.resource_id = w.resource_id"
            var tests: [String] = []
            for word in search {
                tests.append("instr(l.search_text, ?) > 0")
                arguments += [word]
            }
            if !tests.isEmpty { sql += " WHERE " + tests.joined(separator: " AND ") }
            sql += " ORDER BY \(order)"
        }
        arguments += [limit]
        let query = """
            SELECT \(Self.listingColumns) FROM (\(sql) LIMIT ?) k
            JOIN card_listings l ON l.resource_id = k.resource_id JOIN resources r ON r.id = l.resource_id
            ORDER BY \(order)
            """
        let fetchArguments = arguments
        return try await pool.read { db in
            try Row.fetchAll(db, sql: query, arguments: fetchArguments).map(Self.cardListing(from:))
        }
    }

    /// The FTS5 query that finds a search's candidates in `card_listing_trigrams`, or nil
    /// when the book's own rows are read instead: when no word has three characters, and
    /// when the book is small or a small share of the database (`usesTrigramIndex`). The
    /// index covers every book, so in a database of 1,000,000 cards a word common in other
    /// books ("research") gave a 1,000-card book's search 980,000 candidates: 0.5 s for a
    /// list the book's own 1,000 rows answer in a few milliseconds.
    func listingTrigramQuery(collectionID: Int64, search: [String], filter: ListingFilter) async throws -> String? {
        guard let query = Self.searchTrigramQuery(Self.trigramWords(search, filter)),
              try await usesTrigramIndex(collectionID: collectionID) else { return nil }
        return query
    }

    /// The words whose trigrams find candidates: the search's, and a category's name.
    static func trigramWords(_ search: [String], _ filter: ListingFilter) -> [String] {
        guard case .category(let category) = filter else { return search }
        return search + [CaseFolding.search(category)]
    }

    /// The FTS5 query for the trigrams of every search word of three characters or more;
    /// nil when there is none (then only reading the list in order can answer).
    static func searchTrigramQuery(_ words: [String]) -> String? {
        let parts = words.compactMap(trigramQuery)
        return parts.isEmpty ? nil : parts.joined(separator: " AND ")
    }

    public func cardListings(collectionID: Int64, names: [String]) async throws -> [CardListing] {
        guard !names.isEmpty else { return [] }
        return try await pool.read { db in
            var found: [CardListing] = []
            // Bounded IN lists: SQLite's variable limit is far above a page, but not unbounded.
            for chunk in stride(from: 0, to: names.count, by: 500).map({ names[$0..<min($0 + 500, names.count)] }) {
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                found += try Row.fetchAll(db, sql: """
                    SELECT \(Self.listingColumns) FROM card_listings l JOIN resources r ON r.id = l.resource_id
                    WHERE r.collection_id = ? AND r.name IN (\(marks))
                    """, arguments: StatementArguments([collectionID] + Array(chunk))).map(Self.cardListing(from:))
            }
            return found
        }
    }

    public func cardCount(collectionID: Int64, filter: ListingFilter, search: [String], cap: Int) async throws -> Int {
        var arguments = StatementArguments()
        var source = "card_listings l"
        // With a searchable word, counting starts from the trigram index's candidates and
        // stops at the cap; a rare word never reads the whole book.
        if let candidates = try await listingTrigramQuery(collectionID: collectionID, search: search, filter: filter) {
            source = """
                (SELECT rowid AS id FROM card_listing_trigrams WHERE card_listing_trigrams MATCH ?
                 UNION SELECT resource_id FROM card_index_pending WHERE collection_id = ?) c
                CROSS JOIN card_listings l ON l.resource_id = c.id
                """
            arguments += [candidates, collectionID]
        }
        let condition = Self.listingCondition(collectionID: collectionID, filter: filter, search: search, arguments: &arguments)
        arguments += [max(cap, 0)]
        let sql = "SELECT count(*) FROM (SELECT 1 FROM \(source) WHERE \(condition) LIMIT ?)"
        let fetchArguments = arguments
        return try await pool.read { db in try Int.fetchOne(db, sql: sql, arguments: fetchArguments) ?? 0 }
    }

    /// The WHERE clause over `card_listings l` for a filter and search words.
    static func listingCondition(collectionID: Int64, filter: ListingFilter, search: [String],
                                 arguments: inout StatementArguments) -> String {
        var condition = "l.collection_id = ? AND l.is_group = ?"
        arguments += [collectionID, filter == .groups]
        switch filter {
        case .contacts, .groups:
            break
        case .groupMembers(let name):
            condition += """
                 AND l.resource_id IN (SELECT r.id FROM group_members m JOIN resources g ON g.id = m.resource_id
                               JOIN resources r ON r.collection_id = g.collection_id AND r.uid = m.member_uid
                               WHERE g.collection_id = ? AND g.name = ?)
                """
            arguments += [collectionID, name]
        case .category(let category):
            // Its own line of the search text: CATEGORIES:a,b is one index entry ("a,b"),
            // but two lines there.
            condition += " AND instr(l.search_text || char(10), ?) > 0"
            arguments += [CardListingFields.searchLine(category: category)]
        }
        for word in search {
            condition += " AND instr(l.search_text, ?) > 0"
            arguments += [word]
        }
        return condition
    }

    static func cardListing(from row: Row) -> CardListing {
        CardListing(name: row[0], uid: row[1] ?? "", kind: row[2] ?? "individual", etag: row[3],
                    fields: CardListingFields(displayName: row[4], sortKey: row[5], organization: row[6], email: row[7],
                                              phone: row[8], hasPhoto: row[9], searchText: row[10]))
    }

    public func backfillCardListings(_ listing: @Sendable (Data) -> CardListingFields?) async throws -> Int {
        var after: Int64 = 0
        var given = 0
        while true {
            let batch = try await pool.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT r.id, r.collection_id, r.name, r.kind, r.etag, b.data FROM resources r
                    JOIN collections c ON c.id = r.collection_id JOIN resource_bodies b ON b.resource_id = r.id
                    WHERE r.id > ? AND c.kind = 'addressbook'
                      AND NOT EXISTS (SELECT 1 FROM card_listings l WHERE l.resource_id = r.id)
                    ORDER BY r.id LIMIT 500
                    """, arguments: [after])
            }
            guard let last = batch.last else { return given }
            after = last[0]
            let rows: [(id: Int64, collectionID: Int64, name: String, isGroup: Bool, etag: String, fields: CardListingFields)] =
                batch.compactMap { row in
                    guard let fields = listing(row[5]) else { return nil }
                    return (row[0], row[1], row[2], (row[3] as String?) == "group", row[4], fields)
                }
            let rowsToWrite = rows
            given += try await pool.write { db in
                var written = 0
                for row in rowsToWrite {
                    // Only the version that was read: a card replaced meanwhile has its row.
                    try db.execute(sql: """
                        INSERT OR IGNORE INTO card_listings (collection_id, is_group, sort_key, name, resource_id,
                            display_name, organization, email, phone, has_photo, search_text)
                        SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM resources WHERE id = ? AND etag = ?
                        """, arguments: [row.collectionID, row.isGroup, row.fields.sortKey, row.name, row.id,
                                         row.fields.displayName, row.fields.organization, row.fields.email,
                                         row.fields.phone, row.fields.hasPhoto, row.fields.searchText, row.id, row.etag])
                    guard db.changesCount > 0 else { continue }
                    written += 1
                    try db.execute(sql: "INSERT OR REPLACE INTO card_listing_trigrams (rowid, text) VALUES (?, ?)",
                                   arguments: [row.id, row.fields.searchText])
                }
                return written
            }
        }
    }

    public func categories(collectionID: Int64, limit: Int) async throws -> [String] {
        let values = try await pool.read { db in
            try String.fetchAll(db, sql: """
                SELECT DISTINCT value FROM (
                    SELECT coalesce(value, value_ascii, value_unicode) AS value FROM card_index
                    WHERE collection_id = ?1 AND property = 'CATEGORIES'
                    UNION ALL
                    SELECT coalesce(value, value_ascii, value_unicode) FROM card_index_pending
                    WHERE collection_id = ?1 AND property = 'CATEGORIES')
                """, arguments: [collectionID])
        }
        return Categories.distinct(values, limit: limit)
    }

    public func duplicateCandidates(collectionID: Int64, limit: Int) async throws -> [[String]] {
        // (key, name) pairs: a folded e-mail address, a phone number's last 9 digits (so
        // "+44 20 7946 0958" and "020 7946 0958" meet), a normalised name.
        let pairs: [(String, String)] = try await pool.read { db in
            var pairs: [(String, String)] = []
            let values = try Row.fetchCursor(db, sql: """
                SELECT i.property, i.value_unicode, r.name FROM (
                    SELECT resource_id, property, value_unicode FROM card_index
                    WHERE collection_id = ?1 AND property IN ('EMAIL', 'TEL')
                    UNION ALL
                    SELECT resource_id, property, value_unicode FROM card_index_pending
                    WHERE collection_id = ?1 AND property IN ('EMAIL', 'TEL')) i
                JOIN resources r ON r.id = i.resource_id
                """, arguments: [collectionID])
            while let row = try values.next() {
                let property: String = row[0], value: String = row[1], name: String = row[2]
                if let key = DuplicateCandidates.key(property: property, value: value) { pairs.append((key, name)) }
            }
            let names = try Row.fetchCursor(db, sql: """
                SELECT sort_key, name FROM card_listings WHERE collection_id = ? AND is_group = 0
                """, arguments: [collectionID])
            while let row = try names.next() {
                if let key = DuplicateCandidates.key(sortKey: row[0]) { pairs.append((key, row[1])) }
            }
            return pairs
        }
        return DuplicateCandidates.connectedGroups(pairs, limit: limit)
    }
}
