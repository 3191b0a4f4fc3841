import GRDB

extension SQLiteStore {
    public func query(collectionID: Int64, predicate: IndexPredicate, limit: Int?) async throws -> [String] {
        var bound = StatementArguments([collectionID])
        let condition = Self.sql(for: predicate, collectionID: collectionID, arguments: &bound)
        bound += [limit ?? -1]
        let arguments = bound
        // The unary + keeps SQLite from walking the whole book in name order: the
        // index subqueries drive the search and the few hits are sorted afterwards.
        let sql = "SELECT r.name FROM resources r WHERE +r.collection_id = ? AND \(condition) ORDER BY r.name LIMIT ?"
        return try await pool.read { db in
            try String.fetchAll(db, sql: sql, arguments: arguments)
        }
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
    /// covering index (collection, property, folded value, resource), which SQLite runs once.
    static func sql(for predicate: IndexPredicate, collectionID: Int64, arguments: inout StatementArguments) -> String {
        switch predicate {
        case .all(let parts):
            guard !parts.isEmpty else { return "1" }
            return "(" + parts.map { sql(for: $0, collectionID: collectionID, arguments: &arguments) }
                .joined(separator: " AND ") + ")"
        case .any(let parts):
            guard !parts.isEmpty else { return "0" }
            return "(" + parts.map { sql(for: $0, collectionID: collectionID, arguments: &arguments) }
                .joined(separator: " OR ") + ")"
        case .defined(let property):
            arguments += [collectionID, property.uppercased()]
            return "r.id IN (SELECT resource_id FROM card_index WHERE collection_id = ? AND property = ?)"
        case .notDefined(let property):
            arguments += [collectionID, property.uppercased()]
            return "r.id NOT IN (SELECT resource_id FROM card_index WHERE collection_id = ? AND property = ?)"
        case .textMatch(let property, let text, let collation, let match, let negate):
            arguments += [collectionID, property.uppercased()]
            let test = valueTest(text: text, collation: collation, match: match, arguments: &arguments)
            // Naming the index keeps scans (contains, ends-with) on the folded index rather
            // than the whole table; the octet collation narrows on the ASCII fold.
            let index = collation == .unicodeCasemap ? "card_index_unicode" : "card_index_ascii"
            return "r.id IN (SELECT resource_id FROM card_index INDEXED BY \(index) WHERE collection_id = ? AND property = ? AND "
                + (negate ? "NOT (\(test))" : test) + ")"
        }
    }

    /// Compares one index row's value with `text` under `collation`. Equality and prefixes
    /// become index range scans; the octet collation narrows on the ASCII fold first (a
    /// byte-equal value has an equal fold) and then compares the value itself.
    private static func valueTest(text: String, collation: IndexPredicate.Collation, match: IndexPredicate.MatchType,
                                  arguments: inout StatementArguments) -> String {
        switch collation {
        case .asciiCasemap:
            return sqlMatch(column: "value_ascii", match: match, text: CaseFolding.ascii(text), arguments: &arguments)
        case .unicodeCasemap:
            return sqlMatch(column: "value_unicode", match: match, text: CaseFolding.unicode(text), arguments: &arguments)
        case .octet:
            // Arguments are appended in the order the placeholders appear.
            let narrowing = sqlMatch(column: "value_ascii", match: match, text: CaseFolding.ascii(text), arguments: &arguments)
            let exact = sqlMatch(column: "value", match: match, text: text, arguments: &arguments)
            return "\(narrowing) AND \(exact)"
        }
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
            guard let upper = prefixUpperBound(text) else {
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

    /// The smallest string greater than every string starting with `prefix` (its last
    /// scalar incremented: UTF-8 byte order is code point order), nil when none exists.
    static func prefixUpperBound(_ prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var value = last.value + 1
            if value == 0xD800 { value = 0xE000 }
            if let next = Unicode.Scalar(value) {
                var result = String.UnicodeScalarView()
                result.append(contentsOf: scalars)
                result.append(next)
                return String(result)
            }
        }
        return nil
    }
}
