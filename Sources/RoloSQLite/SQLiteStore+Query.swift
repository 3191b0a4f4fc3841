import RoloStore
import GRDB

extension SQLiteStore {
    public func query(collectionID: Int64, predicate: IndexPredicate, limit: Int?) async throws -> [String] {
        let trigrams = predicate.hasSubstringMatch ? try await usesTrigramIndex(collectionID: collectionID) : false
        var bound = StatementArguments([collectionID])
        let condition = Self.sql(for: predicate, collectionID: collectionID, trigrams: trigrams, arguments: &bound)
        bound += [limit ?? -1]
        let arguments = bound
        // The unary + keeps SQLite from walking the whole book in name order: the
        // index subqueries drive the search and the few hits are sorted afterwards.
        let sql = "SELECT r.name FROM resources r WHERE +r.collection_id = ? AND \(condition) ORDER BY r.name LIMIT ?"
        return try await pool.read { db in
            try String.fetchAll(db, sql: sql, arguments: arguments)
        }
    }

    /// Whether a substring search of this book (a query, or the web UI's list) takes its
    /// candidates from a trigram index, which covers every book, or reads the book's own
    /// rows (`SubstringIndexChoice`).
    func usesTrigramIndex(collectionID: Int64) async throws -> Bool {
        try await substringIndex.usesIndex(
            collectionID: collectionID,
            bookCards: { try await self.pool.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM resources WHERE collection_id = ?", arguments: [collectionID]) ?? 0
            } },
            // An estimate is enough: ids are never reused, so this counts deleted cards too.
            totalCards: { try await self.pool.read { db in try Int.fetchOne(db, sql: "SELECT max(id) FROM resources") ?? 0 } })
    }

    public func groupMembers(collectionID: Int64, groupName: String) async throws -> [String] {
        try await pool.read { db in
            try String.fetchAll(db.cachedStatement(sql: """
                SELECT m.member_uid FROM group_members m JOIN resources r ON r.id = m.resource_id
                WHERE r.collection_id = ? AND r.name = ? ORDER BY m.rowid
                """), arguments: [collectionID, groupName])
        }
    }

    public func groups(collectionID: Int64, containingUID uid: String) async throws -> [String] {
        try await pool.read { db in
            try String.fetchAll(db.cachedStatement(sql: """
                SELECT DISTINCT r.name FROM group_members m JOIN resources r ON r.id = m.resource_id
                WHERE m.collection_id = ? AND m.member_uid = ? ORDER BY r.name
                """), arguments: [collectionID, uid])
        }
    }

    /// A boolean SQL expression over `resources r`. Each leaf is `r.id IN (subquery)` on the
    /// covering index (collection, property, folded value, resource), or for contains and
    /// ends-with on the trigram index, which SQLite runs once, with the same test on the
    /// pending entries (`card_index_pending`, which has no
    /// value index: scanned, and bounded by `Tuning.pendingIndexEntries`) added by UNION ALL.
    /// `trigrams`: whether contains and ends-with may use the trigram index
    /// (`SubstringIndexChoice`); without it they scan the book's rows of the property.
    static func sql(for predicate: IndexPredicate, collectionID: Int64, trigrams: Bool,
                    arguments: inout StatementArguments) -> String {
        switch predicate {
        case .all(let parts):
            guard !parts.isEmpty else { return "1" }
            return "(" + parts.map { sql(for: $0, collectionID: collectionID, trigrams: trigrams, arguments: &arguments) }
                .joined(separator: " AND ") + ")"
        case .any(let parts):
            guard !parts.isEmpty else { return "0" }
            return "(" + parts.map { sql(for: $0, collectionID: collectionID, trigrams: trigrams, arguments: &arguments) }
                .joined(separator: " OR ") + ")"
        case .defined(let property):
            let property = property.uppercased()
            arguments += [collectionID, property, collectionID, property]
            return "r.id IN (\(Self.entriesOfProperty))"
        case .notDefined(let property):
            let property = property.uppercased()
            arguments += [collectionID, property, collectionID, property]
            return "r.id NOT IN (\(Self.entriesOfProperty))"
        case .textMatch(let property, let text, let collation, let match, let negate):
            let property = property.uppercased()
            let merged = (trigrams ? substringMatchSQL(property: property, text: text, collation: collation, match: match,
                                                       negate: negate, collectionID: collectionID, arguments: &arguments) : nil)
                ?? textMatchSQL(property: property, text: text, collation: collation, match: match,
                                negate: negate, collectionID: collectionID, arguments: &arguments)
            let pending = pendingTextMatchSQL(property: property, text: text, collation: collation, match: match,
                                              negate: negate, collectionID: collectionID, arguments: &arguments)
            return "r.id IN (\(merged) UNION ALL \(pending))"
        }
    }

    /// The resources with some value of a property, merged or pending: collection and
    /// property as arguments, twice.
    private static let entriesOfProperty = """
        SELECT resource_id FROM card_index WHERE collection_id = ? AND property = ? \
        UNION ALL SELECT resource_id FROM card_index_pending WHERE collection_id = ? AND property = ?
        """

    /// Each collation compares on a covering index (named, so that contains and ends-with
    /// scan the index, not the table). The ASCII fold of a row is `value_ascii` where stored
    /// and `value_unicode` elsewhere (see `FoldedIndexEntry`), so ASCII tests run in two
    /// halves, one per index. The octet collation narrows on the ASCII fold (byte-equal
    /// values have equal folds) and compares the verbatim value only for the rows left;
    /// negated, every value of the property needs the verbatim comparison. Returns a
    /// subquery of resource ids.
    private static func textMatchSQL(property: String, text: String, collation: IndexPredicate.Collation,
                                     match: IndexPredicate.MatchType, negate: Bool, collectionID: Int64,
                                     arguments: inout StatementArguments) -> String {
        // Arguments are appended in the order the placeholders appear.
        switch collation {
        case .unicodeCasemap:
            arguments += [collectionID, property]
            let test = sqlMatch(column: "value_unicode", match: match, text: CaseFolding.unicode(text), arguments: &arguments)
            return """
                SELECT resource_id FROM card_index INDEXED BY card_index_unicode \
                WHERE collection_id = ? AND property = ? AND \(negate ? "NOT (\(test))" : test)
                """
        case .asciiCasemap:
            return asciiFoldRows(select: "resource_id", property: property, text: CaseFolding.ascii(text), match: match, negate: negate, collectionID: collectionID, arguments: &arguments)
        case .octet where negate:
            arguments += [collectionID, property]
            let exact = sqlMatch(column: verbatim, match: match, text: text, arguments: &arguments)
            return "SELECT c.resource_id FROM card_index c WHERE c.collection_id = ? AND c.property = ? AND NOT (\(exact))"
        case .octet:
            let narrowing = asciiFoldRows(select: "resource_id, position", property: property, text: CaseFolding.ascii(text),
                                          match: match, negate: false, collectionID: collectionID, arguments: &arguments)
            let exact = sqlMatch(column: verbatim, match: match, text: text, arguments: &arguments)
            // A join, not `(resource_id, position) IN (...)`, which makes SQLite scan the whole
            // table against a compound list instead of looking each narrowed row up.
            return """
                SELECT c.resource_id FROM (\(narrowing)) n \
                JOIN card_index c ON c.resource_id = n.resource_id AND c.position = n.position WHERE \(exact)
                """
        }
    }

    /// contains and ends-with on the merged entries through `card_trigrams` (schema v7): the
    /// cards whose text holds every trigram of the needle, then each of their card_index
    /// rows of the property checked exactly, as the pending entries are. The needle is the
    /// collation's fold for i;unicode-casemap and the ASCII fold for the other two, the
    /// folds a card's trigram text holds (`trigramText`). The CROSS JOIN and the unary +
    /// keep SQLite from scanning the property's rows and probing the trigram index for
    /// each. Nil (the caller scans) for other match types, for negations (which match
    /// nearly every card) and for needles shorter than a trigram.
    static func substringMatchSQL(property: String, text: String, collation: IndexPredicate.Collation,
                                  match: IndexPredicate.MatchType, negate: Bool, collectionID: Int64,
                                  arguments: inout StatementArguments) -> String? {
        guard match == .contains || match == .endsWith, !negate else { return nil }
        let needle = collation == .unicodeCasemap ? CaseFolding.unicode(text) : CaseFolding.ascii(text)
        guard let trigrams = trigramQuery(needle) else { return nil }
        arguments += [trigrams, collectionID, property]
        let exact = switch collation {
        case .unicodeCasemap: sqlMatch(column: "c.value_unicode", match: match, text: needle, arguments: &arguments)
        case .asciiCasemap: sqlMatch(column: "coalesce(c.value_ascii, c.value_unicode)", match: match, text: needle, arguments: &arguments)
        case .octet: sqlMatch(column: verbatim, match: match, text: text, arguments: &arguments)
        }
        return """
            SELECT c.resource_id FROM card_trigrams t CROSS JOIN card_index c ON c.resource_id = t.rowid \
            WHERE t.card_trigrams MATCH ? AND +c.collection_id = ? AND +c.property = ? AND \(exact)
            """
    }

    /// An FTS5 query for the texts holding every trigram (three Unicode scalars, as the
    /// trigram tokenizer counts) of `needle`: each distinct one quoted, joined by AND, since
    /// a detail=none table has no phrase queries. Nil below three scalars, and for a NUL,
    /// where FTS5's query parser could stop reading (a value never holds one: scanned).
    static func trigramQuery(_ needle: String) -> String? {
        let scalars = Array(needle.unicodeScalars)
        guard scalars.count >= 3, !scalars.contains("\0") else { return nil }
        // Keyed by scalar values: Swift compares Strings by canonical equivalence.
        var seen = Set<[UInt32]>()
        var query = String.UnicodeScalarView()
        for start in 0...(scalars.count - 3) {
            let trigram = scalars[start..<start + 3]
            guard seen.insert(trigram.map(\.value)).inserted else { continue }
            if !query.isEmpty { query.append(contentsOf: " AND ".unicodeScalars) }
            query.append("\"")
            for scalar in trigram {
                query.append(scalar)
                if scalar == "\"" { query.append(scalar) }
            }
            query.append("\"")
        }
        return String(query)
    }

    /// The same test as `textMatchSQL` on the pending entries, which have no value index:
    /// one scan of the property's rows, each compared on the value the collation reads.
    private static func pendingTextMatchSQL(property: String, text: String, collation: IndexPredicate.Collation,
                                            match: IndexPredicate.MatchType, negate: Bool, collectionID: Int64,
                                            arguments: inout StatementArguments) -> String {
        arguments += [collectionID, property]
        let test = switch collation {
        case .unicodeCasemap: sqlMatch(column: "c.value_unicode", match: match, text: CaseFolding.unicode(text), arguments: &arguments)
        case .asciiCasemap: sqlMatch(column: "coalesce(c.value_ascii, c.value_unicode)", match: match,
                                     text: CaseFolding.ascii(text), arguments: &arguments)
        case .octet: sqlMatch(column: verbatim, match: match, text: text, arguments: &arguments)
        }
        return """
            SELECT c.resource_id FROM card_index_pending c \
            WHERE c.collection_id = ? AND c.property = ? AND \(negate ? "NOT (\(test))" : test)
            """
    }

    /// A row's value verbatim (see `FoldedIndexEntry`), for a row aliased `c`.
    private static let verbatim = "coalesce(c.value, c.value_ascii, c.value_unicode)"

    /// `columns` of the index rows of `property` whose ASCII fold passes the test (or,
    /// negated, fails it): rows without `value_ascii` from the Unicode index, the others
    /// from the partial ASCII index.
    private static func asciiFoldRows(select columns: String, property: String, text: String, match: IndexPredicate.MatchType,
                                      negate: Bool, collectionID: Int64, arguments: inout StatementArguments) -> String {
        let halves = [("card_index_unicode", "value_unicode", "value_ascii IS NULL"),
                      ("card_index_ascii", "value_ascii", "value_ascii IS NOT NULL")]
        return halves.map { index, column, presence in
            arguments += [collectionID, property]
            let test = sqlMatch(column: column, match: match, text: text, arguments: &arguments)
            return """
                SELECT \(columns) FROM card_index INDEXED BY \(index) \
                WHERE collection_id = ? AND property = ? AND \(presence) AND \(negate ? "NOT (\(test))" : test)
                """
        }.joined(separator: " UNION ALL ")
    }

    private static func sqlMatch(column: String, match: IndexPredicate.MatchType, text: String,
                                 arguments: inout StatementArguments) -> String {
        // Every value contains, starts and ends with the empty string.
        if text.isEmpty && match != .equals { return "1" }
        switch match {
        case .equals:
            arguments += [text]
            return "\(column) = ?"
        case .contains:
            arguments += [text]
            return "instr(\(column), ?) > 0"
        case .startsWith:
            guard let upper = TextBounds.prefixUpperBound(text) else {
                arguments += [text, text]
                return "substr(\(column), 1, length(?)) = ?"
            }
            arguments += [text, upper]
            return "(\(column) >= ? AND \(column) < ?)"
        case .endsWith:
            arguments += [text, text]
            return "substr(\(column), -length(?)) = ?"
        }
    }
}
