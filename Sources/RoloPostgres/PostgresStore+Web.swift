import Foundation
import PostgresNIO
import RoloStore

/// The web UI's store calls (schema v2-web): list rows from `card_listings`, the trash, web
/// sessions; the same answers as `SQLiteStore`'s (schema v9).
extension PostgresStore {
    static let listingColumns = """
        l.name, r.uid, r.kind, r.etag, l.display_name, l.sort_key, l.organization, l.email, l.phone, l.has_photo, l.search_text
        """

    /// The list order, (sort_key, name) in bytes: the index has the sort key's first 200
    /// characters, and the whole key breaks its ties in the same order.
    private static let listingOrder = "left(l.sort_key, 200), l.sort_key, l.name"

    public func cardListings(collectionID: Int64, filter: ListingFilter, search: [String], from position: ListingPosition,
                             limit: Int) async throws -> ListingPage {
        let limit = max(1, limit)
        var sql = SQLBuilder()
        let trigrams = try await searchUsesTrigramIndex(collectionID: collectionID, filter: filter, search: search)
        var condition = listingCondition(collectionID: collectionID, filter: filter, search: search, trigrams: trigrams, sql: &sql)
        let order: String
        switch position {
        case .first:
            order = Self.listingOrder
        case .after(let cursor), .before(let cursor):
            let key = sql.bind(cursor.sortKey.withoutNUL), name = sql.bind(cursor.name.withoutNUL)
            let comparison = if case .after = position { ">" } else { "<" }
            condition += """
                 AND (left(l.sort_key, 200), l.sort_key, l.name) \(comparison)
                     (left(\(key)::TEXT COLLATE "C", 200), \(key)::TEXT COLLATE "C", \(name)::TEXT COLLATE "C")
                """
            order = if case .after = position {
                Self.listingOrder
            } else {
                "left(l.sort_key, 200) DESC, l.sort_key DESC, l.name DESC"
            }
        }
        sql.append("""
            SELECT \(Self.listingColumns) FROM card_listings l JOIN resources r ON r.id = l.resource_id
            WHERE \(condition) ORDER BY \(order) LIMIT \(sql.bind(Int64(limit + 1)))
            """)
        let query = sql.query
        let rows = try await autocommit { connection in
            try await connection.rows(query).map(Self.cardListing)
        }
        return ListingPage(scanned: rows, limit: limit, position: position)
    }

    public func cardListings(collectionID: Int64, names: [String]) async throws -> [CardListing] {
        guard !names.isEmpty else { return [] }
        let names = names.map(\.withoutNUL)
        return try await autocommit { connection in
            try await connection.rows("""
                SELECT \(unescaped: Self.listingColumns) FROM card_listings l JOIN resources r ON r.id = l.resource_id
                WHERE r.collection_id = \(collectionID) AND r.name = ANY(\(names)::TEXT[])
                """).map(Self.cardListing)
        }
    }

    public func cardCount(collectionID: Int64, filter: ListingFilter, search: [String], cap: Int) async throws -> Int {
        var sql = SQLBuilder()
        let trigrams = try await searchUsesTrigramIndex(collectionID: collectionID, filter: filter, search: search)
        let condition = listingCondition(collectionID: collectionID, filter: filter, search: search, trigrams: trigrams, sql: &sql)
        sql.append("""
            SELECT count(*) FROM (SELECT 1 FROM card_listings l WHERE \(condition) LIMIT \(sql.bind(Int64(max(cap, 0))))) s
            """)
        let query = sql.query
        return try await autocommit { connection in
            Int(try await connection.first(query)?.decode(Int64.self) ?? 0)
        }
    }

    /// Whether a search of this book may start from `card_listings_trigrams`, which covers
    /// every book: the same rule as a query's (`SubstringIndexChoice`). Left to the planner,
    /// a word found in a few percent of a million cards was read from the index across all
    /// books (Docs/performance.md, "The web UI's search among a million cards on PostgreSQL").
    private func searchUsesTrigramIndex(collectionID: Int64, filter: ListingFilter, search: [String]) async throws -> Bool {
        let searches = if case .category = filter { true } else { !search.isEmpty }
        guard searches else { return false }
        return try await substringQueryUsesTrigramIndex(collectionID: collectionID)
    }

    /// The WHERE clause over `card_listings l` for a filter and search words. Each word is
    /// `strpos` (no pattern syntax); when `trigrams` (`searchUsesTrigramIndex`), a LIKE of
    /// the same text lets the planner start from the index for a word of three characters
    /// or more.
    private func listingCondition(collectionID: Int64, filter: ListingFilter, search: [String], trigrams: Bool,
                                  sql: inout SQLBuilder) -> String {
        let collection = sql.bind(collectionID)
        var condition = "l.collection_id = \(collection) AND l.is_group = \(sql.bind(filter == .groups))"
        func contains(_ column: String, _ text: String) -> String {
            var test = "strpos(\(column), \(sql.bind(text))::TEXT COLLATE \"C\") > 0"
            if trigrams, text.unicodeScalars.count >= 3 {
                test += " AND \(column) LIKE \(sql.bind("%" + Self.likeEscaped(text) + "%"))"
            }
            return test
        }
        switch filter {
        case .contacts, .groups:
            break
        case .groupMembers(let name):
            condition += """
                 AND l.resource_id IN (SELECT r.id FROM group_members m JOIN resources g ON g.id = m.resource_id
                     JOIN resources r ON r.collection_id = g.collection_id AND md5(r.uid) = md5(m.member_uid)
                                         AND r.uid = m.member_uid
                     WHERE g.collection_id = \(collection) AND g.name = \(sql.bind(name.withoutNUL)))
                """
        case .category(let category):
            // Its own line of the search text, the line break included.
            let line = CardListingFields.searchLine(category: category).withoutNUL
            condition += " AND strpos(l.search_text || E'\\n', \(sql.bind(line))::TEXT COLLATE \"C\") > 0"
            let word = CaseFolding.search(category).withoutNUL
            if trigrams, word.unicodeScalars.count >= 3 {
                condition += " AND l.search_text LIKE \(sql.bind("%" + Self.likeEscaped(word) + "%"))"
            }
        }
        for word in search {
            condition += " AND " + contains("l.search_text", word.withoutNUL)
        }
        return condition
    }

    static func cardListing(_ row: PostgresRow) throws -> CardListing {
        var columns = Columns(row)
        let name = try columns.next(String.self)
        let uid = try columns.next(String?.self) ?? ""
        let kind = try columns.next(String?.self) ?? "individual"
        let etag = try columns.next(String.self)
        let displayName = try columns.next(String.self)
        let sortKey = try columns.next(String.self)
        let organization = try columns.next(String?.self)
        let email = try columns.next(String?.self)
        let phone = try columns.next(String?.self)
        let hasPhoto = try columns.next(Bool.self)
        let searchText = try columns.next(String.self)
        return CardListing(name: name, uid: uid, kind: kind, etag: etag,
                           fields: CardListingFields(displayName: displayName, sortKey: sortKey, organization: organization,
                                                     email: email, phone: phone, hasPhoto: hasPhoto, searchText: searchText))
    }

    public func backfillCardListings(_ listing: @Sendable (Data) -> CardListingFields?) async throws -> Int {
        var after: Int64 = 0
        var given = 0
        while true {
            let start = after
            let batch = try await autocommit { connection in
                try await connection.rows("""
                    SELECT r.id, r.collection_id, r.name, r.kind, r.etag, r.data FROM resources r
                    JOIN collections c ON c.id = r.collection_id
                    WHERE r.id > \(start) AND c.kind = 'addressbook'
                      AND NOT EXISTS (SELECT 1 FROM card_listings l WHERE l.resource_id = r.id)
                    ORDER BY r.id LIMIT 500
                    """).map { row in
                    try row.decode((Int64, Int64, String, String?, String, Data).self)
                }
            }
            guard let last = batch.last else { return given }
            after = last.0
            let rows: [(id: Int64, collectionID: Int64, name: String, isGroup: Bool, etag: String, fields: CardListingFields)] =
                batch.compactMap { row in
                    guard let fields = listing(row.5) else { return nil }
                    return (row.0, row.1, row.2, row.3 == "group", row.4, fields)
                }
            guard !rows.isEmpty else { continue }
            let rowsToWrite = rows
            given += try await transaction { connection in
                var written = 0
                for row in rowsToWrite {
                    let fields = row.fields
                    // Only the version that was read: a card replaced meanwhile has its row.
                    let inserted = try await connection.rows("""
                        INSERT INTO card_listings (collection_id, is_group, sort_key, name, resource_id, display_name,
                                                   organization, email, phone, has_photo, search_text)
                        SELECT \(row.collectionID), \(row.isGroup), \(fields.sortKey.withoutNUL), \(row.name), \(row.id),
                               \(fields.displayName.withoutNUL), \(fields.organization?.withoutNUL)::TEXT,
                               \(fields.email?.withoutNUL)::TEXT, \(fields.phone?.withoutNUL)::TEXT, \(fields.hasPhoto),
                               \(fields.searchText.withoutNUL)
                        FROM resources WHERE id = \(row.id) AND etag = \(row.etag)
                        ON CONFLICT (resource_id) DO NOTHING RETURNING 1
                        """)
                    written += inserted.count
                }
                return written
            }
        }
    }

    public func categories(collectionID: Int64, limit: Int) async throws -> [String] {
        let values = try await autocommit { connection in
            try await connection.rows("""
                SELECT value FROM card_index WHERE collection_id = \(collectionID) AND property = 'CATEGORIES'
                GROUP BY value ORDER BY min(resource_id)
                """).map { try $0.decode(String.self) }
        }
        return Categories.distinct(values, limit: limit)
    }

    public func duplicateCandidates(collectionID: Int64, limit: Int) async throws -> [[String]] {
        let pairs: [(String, String)] = try await autocommit { connection in
            var pairs: [(String, String)] = []
            for row in try await connection.rows("""
                SELECT i.property, i.value_unicode, r.name FROM card_index i JOIN resources r ON r.id = i.resource_id
                WHERE i.collection_id = \(collectionID) AND i.property IN ('EMAIL', 'TEL')
                """) {
                let (property, value, name) = try row.decode((String, String, String).self)
                if let key = DuplicateCandidates.key(property: property, value: value) { pairs.append((key, name)) }
            }
            for row in try await connection.rows("""
                SELECT sort_key, name FROM card_listings WHERE collection_id = \(collectionID) AND NOT is_group
                """) {
                let (sortKey, name) = try row.decode((String, String).self)
                if let key = DuplicateCandidates.key(sortKey: sortKey) { pairs.append((key, name)) }
            }
            return pairs
        }
        return DuplicateCandidates.connectedGroups(pairs, limit: limit)
    }

    // MARK: Batches and the trash


    public func applyCardBatch(collectionID: Int64, writes: [CardBatchWrite]) async throws -> CardBatchResult {
        // ETags and folds before taking the writer, as for a PUT.
        let preparedBatch = try PreparedCardBatch(writes)
        let prepared = preparedBatch.writes
        let batch = preparedBatch.batch
        let author = preparedBatch.author
        let now = self.now
        let result = try await transaction { connection in
            // The book's row, locked until the commit, as by a PUT; each write below moves
            // its seq on in turn.
            guard let row = try await connection.first("""
                SELECT sync_seq FROM collections WHERE id = \(collectionID) FOR UPDATE
                """) else { throw StoreError.notFound }
            let start = try row.decode(Int64.self)
            var seq = start
            var etags: [String: String] = [:]
            var trashed: [String: Int64] = [:]
            for write in prepared {
                switch write {
                case let .put(resource, precondition, keepPrevious):
                    let existing = try await Self.checkWrite(connection, collectionID: collectionID, name: resource.name,
                                                             card: resource.card, precondition: precondition)
                    seq = try await Self.nextSeq(connection, collectionID: collectionID, now: now)
                    if let existing {
                        if keepPrevious {
                            trashed[resource.name] = try await Self.keepInTrash(
                                connection, resourceID: existing.id, batch: batch, reason: .replaced, replacedBy: resource.etag,
                                now: now, user: author?.user)
                        }
                        try await Self.replace(connection, id: existing.id, with: resource, collectionID: collectionID, seq: seq,
                                               now: now)
                    } else if try await Self.insert(connection, resource, collectionID: collectionID, seq: seq, now: now) == nil {
                        throw StoreError.alreadyExists // unreachable: name and UID were checked above
                    }
                    etags[resource.name] = resource.etag
                case let .trash(name, precondition, reason):
                    let existing = try await Self.existingResource(connection, collectionID: collectionID, name: name)
                    try precondition.check(currentETag: existing?.etag)
                    guard let existing else { throw StoreError.notFound }
                    trashed[name] = try await Self.keepInTrash(connection, resourceID: existing.id, batch: batch, reason: reason,
                                                               replacedBy: nil, now: now, user: author?.user)
                    seq = try await Self.nextSeq(connection, collectionID: collectionID, now: now)
                    try await Self.removeResource(connection, collectionID: collectionID, id: existing.id, name: name, seq: seq,
                                                  now: now, author: author)
                case let .dropTrashed(id):
                    if try await connection.rows("""
                        DELETE FROM trash WHERE id = \(id) AND collection_id = \(collectionID) RETURNING 1
                        """).isEmpty { throw StoreError.notFound }
                }
            }
            return (CardBatchResult(batch: batch, etags: etags, trashed: trashed, seq: seq), moved: seq != start)
        }
        if result.moved { await committed(collectionID: collectionID, seq: result.0.seq) }
        return result.0
    }

    /// Copies the resource, body and all, into the trash; the entry's id.
    private static func keepInTrash(_ connection: Connection, resourceID: Int64, batch: String, reason: TrashReason,
                                    replacedBy: String?, now: Double, user: String?) async throws -> Int64 {
        guard let row = try await connection.first("""
            INSERT INTO trash (collection_id, batch, reason, name, uid, display_name, etag, replaced_by, content_type, data,
                               trashed, "user")
            SELECT r.collection_id, \(batch), \(reason.rawValue), r.name, COALESCE(r.uid, ''),
                   COALESCE(l.display_name, r.uid, r.name), r.etag, \(replacedBy)::TEXT, r.content_type, r.data, \(now), \(user)::TEXT
            FROM resources r LEFT JOIN card_listings l ON l.resource_id = r.id WHERE r.id = \(resourceID)
            RETURNING id
            """) else { throw StoreError.notFound }
        return try row.decode(Int64.self)
    }

    private static let trashColumns = """
        id, collection_id, name, uid, display_name, reason, batch, etag, replaced_by, trashed, "user"
        """

    private static func trashedCard(_ columns: inout Columns) throws -> TrashedCard {
        let id = try columns.next(Int64.self)
        let collectionID = try columns.next(Int64.self)
        let name = try columns.next(String.self)
        let uid = try columns.next(String.self)
        let displayName = try columns.next(String.self)
        let reason = TrashReason(rawValue: try columns.next(String.self)) ?? .deleted
        let batch = try columns.next(String.self)
        let etag = try columns.next(String.self)
        let replacedBy = try columns.next(String?.self)
        let trashed = try columns.date()
        let user = try columns.next(String?.self)
        return TrashedCard(id: id, collectionID: collectionID, name: name, uid: uid, displayName: displayName, reason: reason,
                           batch: batch, etag: etag, replacedBy: replacedBy, trashed: trashed, user: user)
    }

    public func trash(collectionID: Int64, limit: Int) async throws -> [TrashedCard] {
        try await autocommit { connection in
            try await connection.rows("""
                SELECT \(unescaped: Self.trashColumns) FROM trash WHERE collection_id = \(collectionID)
                ORDER BY trashed DESC, id DESC LIMIT \(Int64(max(limit, 0)))
                """).map { row in
                var columns = Columns(row)
                return try Self.trashedCard(&columns)
            }
        }
    }

    public func trashedCard(id: Int64) async throws -> (card: TrashedCard, data: Data, contentType: String)? {
        try await autocommit { connection in
            try await connection.first("""
                SELECT \(unescaped: Self.trashColumns), data, content_type FROM trash WHERE id = \(id)
                """).map { row in
                var columns = Columns(row)
                let card = try Self.trashedCard(&columns)
                return (card, try columns.next(Data.self), try columns.next(String.self))
            }
        }
    }

    public func trash(batch: String) async throws -> [TrashedCard] {
        try await autocommit { connection in
            try await connection.rows("""
                SELECT \(unescaped: Self.trashColumns) FROM trash WHERE batch = \(batch) ORDER BY id
                """).map { row in
                var columns = Columns(row)
                return try Self.trashedCard(&columns)
            }
        }
    }

    public func purgeTrash(olderThan date: Date) async throws -> Int {
        let cutoff = date.timeIntervalSince1970
        return try await autocommit { connection in
            try await connection.rows("DELETE FROM trash WHERE trashed < \(cutoff) RETURNING 1").count
        }
    }

    // MARK: Web sessions

    public func createWebSession(tokenHash: String, user: String, csrfToken: String) async throws {
        let now = self.now
        try await transaction { connection in
            guard let userID = try await Self.userID(connection, name: user) else { throw StoreError.noSuchUser }
            try await connection.execute("""
                INSERT INTO web_sessions (token_hash, user_id, csrf_token, created, last_seen)
                VALUES (\(tokenHash), \(userID), \(csrfToken), \(now), \(now))
                """)
        }
    }

    public func webSession(tokenHash: String) async throws -> WebSession? {
        try await autocommit { connection in
            try await connection.first("""
                SELECT u.name, s.csrf_token, s.created, s.last_seen FROM web_sessions s JOIN users u ON u.id = s.user_id
                WHERE s.token_hash = \(tokenHash) AND NOT u.disabled
                """).map { row in
                let (user, csrf, created, lastSeen) = try row.decode((String, String, Double, Double).self)
                return WebSession(user: user, csrfToken: csrf, created: Date(timeIntervalSince1970: created),
                                  lastSeen: Date(timeIntervalSince1970: lastSeen))
            }
        }
    }

    public func touchWebSession(tokenHash: String) async throws {
        let now = self.now
        try await autocommit { connection in
            try await connection.execute("UPDATE web_sessions SET last_seen = \(now) WHERE token_hash = \(tokenHash)")
        }
    }

    public func deleteWebSession(tokenHash: String) async throws {
        try await autocommit { connection in
            try await connection.execute("DELETE FROM web_sessions WHERE token_hash = \(tokenHash)")
        }
    }

    public func deleteWebSessions(user: String) async throws {
        try await autocommit { connection in try await Self.deleteWebSessions(connection, user: user) }
    }

    static func deleteWebSessions(_ connection: Connection, user: String) async throws {
        try await connection.execute("DELETE FROM web_sessions WHERE user_id = (SELECT id FROM users WHERE name = \(user))")
    }

    public func pruneWebSessions(idleSince: Date, createdBefore: Date) async throws -> Int {
        let idle = idleSince.timeIntervalSince1970, created = createdBefore.timeIntervalSince1970
        return try await autocommit { connection in
            try await connection.rows("""
                DELETE FROM web_sessions WHERE last_seen < \(idle) OR created < \(created) RETURNING 1
                """).count
        }
    }
}
