import Foundation
import PostgresNIO
import RoloStore

/// Listings a page at a time (keyset pagination on the unique `(collection_id, name)` index,
/// whose "C" collation is byte order): each page is one short statement, and nothing is held
/// open between pages. Named lookups take the names as one array parameter.
extension PostgresStore {
    public func resources(collectionID: Int64, names: [String]) async throws -> [StoredResource] {
        try await named(names, in: collectionID, columns: "\(Self.infoColumns), r.data") { try Self.storedResource(&$0) }
    }

    public func resources(collectionID: Int64, names: [String], bodyLimit: Int) async throws -> [StoredResource] {
        try await named(names, in: collectionID, columns: Self.bodyColumns(upTo: bodyLimit)) { try Self.storedResource(&$0) }
    }

    public func resourceInfos(collectionID: Int64, names: [String]) async throws -> [ResourceInfo] {
        try await named(names, in: collectionID, columns: Self.infoColumns) { try Self.resourceInfo(&$0) }
    }

    public func listResources(collectionID: Int64) async throws -> [ResourceInfo] {
        try await page(of: collectionID, after: nil, limit: nil, columns: Self.infoColumns) { try Self.resourceInfo(&$0) }
    }

    public func allResources(collectionID: Int64) async throws -> [StoredResource] {
        try await page(of: collectionID, after: nil, limit: nil, columns: "\(Self.infoColumns), r.data") { try Self.storedResource(&$0) }
    }

    public func listResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [ResourceInfo] {
        try await page(of: collectionID, after: name, limit: limit, columns: Self.infoColumns) { try Self.resourceInfo(&$0) }
    }

    public func allResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [StoredResource] {
        try await page(of: collectionID, after: name, limit: limit, columns: "\(Self.infoColumns), r.data") {
            try Self.storedResource(&$0)
        }
    }

    public func allResources(collectionID: Int64, after name: String?, limit: Int, bodyLimit: Int) async throws -> [StoredResource] {
        try await page(of: collectionID, after: name, limit: limit, columns: Self.bodyColumns(upTo: bodyLimit)) {
            try Self.storedResource(&$0)
        }
    }

    /// The info columns, then the body when it is at most `limit` bytes, else NULL (a body
    /// the server then never reads from its TOAST table).
    static func bodyColumns(upTo limit: Int) -> String {
        "\(infoColumns), CASE WHEN r.size <= \(max(limit, 0)) THEN r.data END"
    }

    /// The rows of these names in name order, absent names skipped.
    private func named<Value: Sendable>(_ names: [String], in collectionID: Int64, columns: String,
                                        row makeValue: @escaping @Sendable (inout Columns) throws -> Value) async throws -> [Value] {
        guard !names.isEmpty else { return [] }
        return try await autocommit { connection in
            try await connection.rows("""
                SELECT \(unescaped: columns) FROM resources r
                WHERE r.collection_id = \(collectionID) AND r.name = ANY(\(names)::TEXT[]) ORDER BY r.name
                """).map { row in
                var reader = Columns(row)
                return try makeValue(&reader)
            }
        }
    }

    /// At most `limit` rows (all when nil) of the book whose names follow `name` in byte
    /// order, in that order. Names are never empty, so "" as the start takes every row.
    private func page<Value: Sendable>(of collectionID: Int64, after name: String?, limit: Int?, columns: String,
                                       row makeValue: @escaping @Sendable (inout Columns) throws -> Value) async throws -> [Value] {
        var sql = SQLBuilder()
        sql.append("SELECT \(columns) FROM resources r WHERE r.collection_id = \(sql.bind(collectionID))")
        sql.append(" AND r.name > \(sql.bind(name ?? "")) ORDER BY r.name")
        if let limit { sql.append(" LIMIT \(sql.bind(Int64(max(limit, 0))))") }
        let query = sql.query
        return try await autocommit { connection in
            try await connection.rows(query).map { row in
                var reader = Columns(row)
                return try makeValue(&reader)
            }
        }
    }
}
