import Foundation
import PostgresNIO
import RoloStore

/// `addressbook-query` from the index: each leaf a semi-join on `card_index` for the book and
/// property, comparing the fold its collation reads (`FoldedIndexEntry`: the store folds
/// values and query texts itself, so the database compares plain text in the "C"
/// collation, code point by code point). Index conditions only narrow the rows (a prefix of
/// the value, the trigrams of a substring); an exact test of the value always follows.
extension PostgresStore {
    /// Characters of a value the B-tree indexes hold (`left(value, 200)`).
    static let indexedPrefix = 200

    public func query(collectionID: Int64, predicate: IndexPredicate, limit: Int?) async throws -> [String] {
        let trigrams = predicate.hasSubstringMatch ? try await substringQueryUsesTrigramIndex(collectionID: collectionID) : false
        let query = Self.querySQL(collectionID: collectionID, predicate: predicate, limit: limit, trigrams: trigrams)
        // Text cells read the same in both formats (`ShapedStatements`' rows are binary).
        return try await autocommit { connection in
            try await self.shapedStatements.rows(query, on: connection).map { try $0.decode(String.self) }
        }
    }

    /// From the card cache when the same query was answered on the book as it is now, and
    /// kept there when read.
    public func queryHits(collectionID: Int64, predicate: IndexPredicate, limit: Int?, countingBook: Bool,
                          firstPage: Int, withBodies: Bool, bodyLimit: Int) async throws -> QueryHits {
        guard cardCache.isEnabled else {
            return try await databaseHits(collectionID: collectionID, predicate: predicate, limit: limit, countingBook: countingBook,
                                          firstPage: firstPage, withBodies: withBodies, bodyLimit: bodyLimit).0
        }
        let key = CardCache.QueryKey(predicate: predicate, limit: limit, countingBook: countingBook, firstPage: firstPage,
                                     withBodies: withBodies, bodyLimit: bodyLimit)
        if let cached = cardCache.hits(in: collectionID, for: key, server: primary.currentIndex) { return cached }
        let ticket = cardCache.bookTicket()
        let (hits, bookSeq) = try await databaseHits(collectionID: collectionID, predicate: predicate, limit: limit,
                                                     countingBook: countingBook, firstPage: firstPage, withBodies: withBodies,
                                                     bodyLimit: bodyLimit)
        if let ticket, let bookSeq { cardCache.keep(hits: hits, in: collectionID, seq: bookSeq, for: key, ticket: ticket) }
        return hits
    }

    /// The query's answer, and the book's seq it was read at (nil when its cards were read by
    /// a statement of their own, at a seq of their own).
    private func databaseHits(collectionID: Int64, predicate: IndexPredicate, limit: Int?, countingBook: Bool,
                              firstPage: Int, withBodies: Bool, bodyLimit: Int) async throws -> (QueryHits, Int64?) {
        let trigrams = predicate.hasSubstringMatch ? try await substringQueryUsesTrigramIndex(collectionID: collectionID) : false
        // The first page's bodies go in one row only within `arrayBodyBytes`, as a named read's.
        let bodyLimit = Int64(max(bodyLimit, 0))
        let pageBytes = Int64(max(firstPage, 0)).multipliedReportingOverflow(by: bodyLimit)
        let readsPage = !withBodies || (!pageBytes.overflow && pageBytes.partialValue <= Self.arrayBodyBytes)
        let query = Self.queryHitsSQL(collectionID: collectionID, predicate: predicate, limit: limit, trigrams: trigrams,
                                      countingBook: countingBook, firstPage: readsPage ? max(firstPage, 0) : 0,
                                      bodyLimit: withBodies ? bodyLimit : nil)
        let row = try await autocommit { connection in try await self.shapedStatements.rows(query, on: connection).first }
        let head = ArraysRow(row: row, legacyPrepared: true)
        let bookSeq = try head.int64(Self.bookSeqColumn(withBodies: withBodies))
        let names = try head.strings(0) ?? []
        let bookCards = try head.int64(1).map { Int($0) }
        let page = ArraysRow(row: row, legacyPrepared: true, firstColumn: 2)
        let cards: [StoredResource]
        if !readsPage {
            cards = try await resources(collectionID: collectionID, names: Array(names.prefix(firstPage)), bodyLimit: Int(bodyLimit))
        } else if withBodies {
            cards = try Self.storedResources(arrays: page, bodyLimit: bodyLimit)
        } else {
            cards = try Self.resourceInfos(arrays: page).map { StoredResource(info: $0, data: Data()) }
        }
        return (QueryHits(names: names, bookCards: countingBook ? bookCards ?? 0 : nil, firstCards: cards), readsPage ? bookSeq : nil)
    }

    /// Where `queryHitsSQL` puts the book's seq: after the names, the count and the page's
    /// six arrays, and its bodies' when it has them.
    static func bookSeqColumn(withBodies: Bool) -> Int { withBodies ? 9 : 8 }

    /// The names of the book's cards that match, in name order; `trigrams`: substring
    /// leaves take their candidates from the trigram index.
    static func querySQL(collectionID: Int64, predicate: IndexPredicate, limit: Int?, trigrams: Bool) -> SQLBuilder {
        var sql = SQLBuilder.keepingData()
        sql.append(hitsSQL(collectionID: collectionID, predicate: predicate, limit: limit, trigrams: trigrams,
                           columns: "r.name", sql: &sql))
        return sql
    }

    /// `queryHits` in one row: the names as an array, the book's count up to one more than
    /// them (`ResourceCountSQL`'s) or NULL, then the first `firstPage` hits as
    /// `infoArrays`' six arrays, with `cardArrays`' bodies as a seventh when `bodyLimit` is
    /// given, and last the book's seq as the statement read it (`bookSeqColumn`). The hits
    /// carry their info columns (the index scan found their rows anyway);
    /// the page's bodies are read by id. One statement where a query answered with its
    /// cards took two, with the count three (issue 34); prepared by its shape
    /// (`ShapedStatements`).
    static func queryHitsSQL(collectionID: Int64, predicate: IndexPredicate, limit: Int?, trigrams: Bool,
                             countingBook: Bool, firstPage: Int, bodyLimit: Int64?) -> SQLBuilder {
        var sql = SQLBuilder.keepingData()
        let hits = hitsSQL(collectionID: collectionID, predicate: predicate, limit: limit, trigrams: trigrams,
                           columns: "r.id, \(infoColumns)", sql: &sql)
        let count = countingBook ? bookCount(collection: sql.bind(collectionID), cap: "(SELECT count(*) + 1 FROM hits)")
            : "NULL::BIGINT"
        let page = "SELECT * FROM hits ORDER BY name LIMIT \(sql.bind(Int64(firstPage)))"
        let pageRows = bodyLimit.map { limit in
            """
            SELECT p.*, CASE WHEN p.size <= \(sql.bind(limit)) THEN b.data ELSE ''::BYTEA END AS body \
            FROM (\(page)) p JOIN resources b ON b.id = p.id ORDER BY p.name
            """
        } ?? page
        let bodies = bodyLimit == nil ? "" : ", array_agg(body)"
        sql.append("""
            WITH hits AS (\(hits)) \
            SELECT coalesce((SELECT array_agg(name ORDER BY name) FROM hits), '{}'::TEXT[]), \(count), p.*, \
            \(bookSeq(collection: sql.bind(collectionID))) \
            FROM (SELECT array_agg(name), array_agg(content_type), array_agg(etag), array_agg(size), array_agg(modified), \
            array_agg(seq)\(bodies) FROM (\(pageRows)) listed) p
            """)
        return sql
    }

    /// The query's matching rows of `resources r` (`columns`), in name order, at most `limit`.
    private static func hitsSQL(collectionID: Int64, predicate: IndexPredicate, limit: Int?, trigrams: Bool, columns: String,
                                sql: inout SQLBuilder) -> String {
        let collection = sql.bind(collectionID)
        let condition = Self.condition(for: predicate, collection: collection, trigrams: trigrams, sql: &sql)
        var hits = "SELECT \(columns) FROM resources r WHERE r.collection_id = \(collection) AND \(condition) ORDER BY r.name"
        if let limit { hits += " LIMIT \(sql.bind(Int64(max(limit, 0))))" }
        return hits
    }

    /// Whether a substring query of this book takes its candidates from the trigram index,
    /// which covers every book, or reads the book's own rows (`SubstringIndexChoice`).
    func substringQueryUsesTrigramIndex(collectionID: Int64) async throws -> Bool {
        guard usesTrigramIndex else { return false }
        return try await substringIndex.usesIndex(
            collectionID: collectionID,
            bookCards: { try await self.autocommit { connection in
                try await connection.first(BookCardsSQL.self, collectionID)?.decode(Int64.self) }.map(Int.init) ?? 0 },
            // The planner's estimate, kept by ANALYZE and autovacuum: enough to steer a plan.
            totalCards: { try await self.autocommit { connection in
                try await connection.first(CardsEstimateSQL.self)?.decode(Int64.self) }.map(Int.init) ?? 0 })
    }

    enum BookCardsSQL: PreparedSQL {
        static let sql = "SELECT count(*) FROM resources WHERE collection_id = $1"
    }

    enum CardsEstimateSQL: PreparedSQL {
        static let sql = "SELECT greatest(reltuples, 0)::BIGINT FROM pg_class WHERE oid = 'resources'::regclass"
    }

    public func groupMembers(collectionID: Int64, groupName: String) async throws -> [String] {
        try await autocommit { connection in
            try await connection.rows("""
                SELECT m.member_uid FROM group_members m JOIN resources r ON r.id = m.resource_id
                WHERE r.collection_id = \(collectionID) AND r.name = \(groupName) ORDER BY m.position
                """).map { try $0.decode(String.self) }
        }
    }

    public func groups(collectionID: Int64, containingUID uid: String) async throws -> [String] {
        let uid = uid.withoutNUL
        return try await autocommit { connection in
            try await connection.rows("""
                SELECT DISTINCT r.name FROM group_members m JOIN resources r ON r.id = m.resource_id
                WHERE m.collection_id = \(collectionID) AND md5(m.member_uid) = md5(\(uid)) AND m.member_uid = \(uid)
                ORDER BY r.name
                """).map { try $0.decode(String.self) }
        }
    }

    /// A boolean SQL expression over `resources r`.
    static func condition(for predicate: IndexPredicate, collection: String, trigrams: Bool, sql: inout SQLBuilder) -> String {
        switch predicate {
        case .all(let parts):
            guard !parts.isEmpty else { return "TRUE" }
            return "(" + parts.map { condition(for: $0, collection: collection, trigrams: trigrams, sql: &sql) }
                .joined(separator: " AND ") + ")"
        case .any(let parts):
            guard !parts.isEmpty else { return "FALSE" }
            return "(" + parts.map { condition(for: $0, collection: collection, trigrams: trigrams, sql: &sql) }
                .joined(separator: " OR ") + ")"
        case .defined(let property):
            return "r.id IN (SELECT resource_id FROM card_index WHERE collection_id = \(collection) AND property = \(sql.bind(property.uppercased())))"
        case .notDefined(let property):
            return "r.id NOT IN (SELECT resource_id FROM card_index WHERE collection_id = \(collection) AND property = \(sql.bind(property.uppercased())))"
        case .textMatch(let property, let text, let collation, let match, let negate):
            let (test, byTrigrams) = textMatch(text: text, collation: collation, match: match, negate: negate,
                                               trigrams: trigrams, sql: &sql)
            let book = bookTest(collection: collection, byTrigrams: byTrigrams)
            return """
                r.id IN (SELECT c.resource_id FROM card_index c \
                WHERE \(book) AND c.property = \(sql.bind(property.uppercased())) AND \(test))
                """
        }
    }

    /// An index row's test for the book. Candidates from the trigram index are tested, not
    /// also read from the B-tree: with statistics from before a large import, the planner
    /// scanned the book's whole (collection_id, property) range too and ANDed the two
    /// bitmaps, 10,000 entries to find 249 cards, a contains query 2-3x slower until
    /// autovacuum's next ANALYZE. The book is then a good share of the database
    /// (`SubstringIndexChoice`), so its test narrows little; `+ 0` keeps the B-tree from
    /// serving it.
    static func bookTest(collection: String, byTrigrams: Bool) -> String {
        byTrigrams ? "c.collection_id + 0 = \(collection)" : "c.collection_id = \(collection)"
    }

    /// The test of one index row `c`. Each collation compares its own column with the query
    /// text folded the same way; i;octet narrows on the ASCII fold (byte-equal values have
    /// equal folds) and compares the verbatim value. Negated: some value fails the test.
    /// `byTrigrams`: the test narrows by the trigram index.
    static func textMatch(text: String, collation: IndexPredicate.Collation, match: IndexPredicate.MatchType, negate: Bool,
                          trigrams: Bool, sql: inout SQLBuilder) -> (test: String, byTrigrams: Bool) {
        let text = text.withoutNUL
        let (column, needle): (String, String) = switch collation {
        case .unicodeCasemap: ("c.value_unicode", CaseFolding.unicode(text))
        case .asciiCasemap: ("c.value_ascii", CaseFolding.ascii(text))
        case .octet: ("c.value", text)
        }
        if negate { return ("NOT (\(exactMatch(column: column, match: match, text: needle, sql: &sql)))", false) }
        // Candidates first, from what the indexes hold: the ASCII fold for i;octet.
        let (indexed, indexedNeedle) = collation == .octet ? ("c.value_ascii", CaseFolding.ascii(text))
                                                            : (column, needle)
        guard let narrowing = candidates(column: indexed, match: match, text: indexedNeedle,
                                         substringNeedle: collation == .unicodeCasemap ? needle : CaseFolding.ascii(text),
                                         trigrams: trigrams, sql: &sql) else {
            // A contains that scans the book's rows tests them with LIKE, whose share of
            // matches the planner estimates from the column's statistics; `strpos(…) > 0`
            // it guesses at a third of the rows, which for 200 hits among 10,000 names
            // chose a hash join over a scan of every card of the book (2.5 ms) instead of
            // 200 key lookups. Same answers: the needle's wildcards are escaped.
            if match == .contains && !needle.isEmpty {
                return ("\(column) LIKE \(sql.bind("%" + likeEscaped(needle) + "%"))", false)
            }
            return (exactMatch(column: column, match: match, text: needle, sql: &sql), false)
        }
        return ("\(narrowing.test) AND \(exactMatch(column: column, match: match, text: needle, sql: &sql))", narrowing.byTrigrams)
    }

    /// A condition the indexes answer that every matching row meets, nil when none helps:
    /// the value's first `indexedPrefix` characters for equals and starts-with, its trigrams
    /// (`trigramText`, in one GIN index) for contains and ends-with.
    private static func candidates(column: String, match: IndexPredicate.MatchType, text: String, substringNeedle: String,
                                   trigrams: Bool, sql: inout SQLBuilder) -> (test: String, byTrigrams: Bool)? {
        let prefix = "left(\(column), \(indexedPrefix))"
        switch match {
        case .equals:
            return ("\(prefix) = left(\(sql.bind(text))::TEXT, \(indexedPrefix))", false)
        case .startsWith:
            guard !text.isEmpty else { return nil }
            guard text.unicodeScalars.count <= indexedPrefix else {
                return ("\(prefix) = left(\(sql.bind(text))::TEXT, \(indexedPrefix))", false)
            }
            let lower = "\(prefix) >= \(sql.bind(text))"
            guard let upper = TextBounds.prefixUpperBound(text) else { return (lower, false) }
            return ("\(lower) AND \(prefix) < \(sql.bind(upper))", false)
        case .contains, .endsWith:
            // pg_trgm finds nothing to look up in a needle of fewer than three characters.
            guard trigrams, substringNeedle.unicodeScalars.count >= 3 else { return nil }
            return ("\(trigramText) LIKE \(sql.bind("%" + likeEscaped(substringNeedle) + "%"))", true)
        }
    }

    /// The text the trigram index `card_index_trigrams` holds for an index row `c`: both folds,
    /// joined by a line break, or the one fold when they are the same (any ASCII value, most
    /// names), so pg_trgm reads it once (`v15-trigram-text-once`). A needle found in either
    /// fold is found in it; the collation's own test then decides. A query must write it as
    /// the index does, or the planner does not see the index.
    static let trigramText = "(CASE WHEN c.value_ascii = c.value_unicode THEN c.value_ascii ELSE c.value_ascii || E'\\n' || c.value_unicode END)"

    /// `text` with LIKE's wildcards and its escape character escaped.
    static func likeEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text.unicodeScalars {
            if character == "\\" || character == "%" || character == "_" { escaped.unicodeScalars.append("\\") }
            escaped.unicodeScalars.append(character)
        }
        return escaped
    }

    /// The collation's test, by characters (code points), with no pattern syntax.
    private static func exactMatch(column: String, match: IndexPredicate.MatchType, text: String, sql: inout SQLBuilder) -> String {
        // Every value contains, starts and ends with the empty string.
        if text.isEmpty && match != .equals { return "TRUE" }
        let value = sql.bind(text)
        return switch match {
        case .equals: "\(column) = \(value)"
        case .contains: "strpos(\(column), \(value)) > 0"
        case .startsWith: "left(\(column), length(\(value))) = \(value)"
        case .endsWith: "right(\(column), length(\(value))) = \(value)"
        }
    }
}
