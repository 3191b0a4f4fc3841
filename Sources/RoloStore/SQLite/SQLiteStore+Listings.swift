import Foundation
import GRDB

/// Listings a page at a time (keyset pagination on the `(collection_id, name)` key): each
/// page is one short range read of the `resources_listing` index, which holds every column
/// a listing returns (no lookup in the table per row), whatever the book's size, and
/// nothing is held open between pages while the caller sends the previous one. A whole
/// listing is the same read without a limit. Named lookups (multiget, query hits, changed
/// cards) read the same index, and the bodies only when asked.
extension SQLiteStore {
    public func resources(collectionID: Int64, names: [String]) async throws -> [StoredResource] {
        try await named(names, in: collectionID, columns: "\(Self.infoColumns), data", from: Self.withBodies,
                        row: { Self.storedResource(from: $0) })
    }

    public func resourceInfos(collectionID: Int64, names: [String]) async throws -> [ResourceInfo] {
        try await named(names, in: collectionID, columns: Self.infoColumns, from: "resources", row: { Self.resourceInfo(from: $0) })
    }

    /// The rows of `table` for these names, in chunks that keep each statement well below
    /// SQLite's bound-parameter limit; absent names are skipped.
    private func named<Value: Sendable>(_ names: [String], in collectionID: Int64, columns: String, from table: String,
                                        row makeValue: @escaping @Sendable (ColumnReader) -> Value) async throws -> [Value] {
        guard !names.isEmpty else { return [] }
        return try await pool.read { db in
            var found: [Value] = []
            found.reserveCapacity(names.count)
            let chunkSize = 500
            for start in stride(from: 0, to: names.count, by: chunkSize) {
                let chunk = Array(names[start..<min(start + chunkSize, names.count)])
                let statement = try db.cachedStatement(sql: Self.namedSQL(columns: columns, from: table, count: chunk.count))
                let arguments = StatementArguments([collectionID]) + StatementArguments(chunk)
                let cursor = try Row.fetchCursor(statement, arguments: arguments)
                while try cursor.next() != nil { found.append(makeValue(ColumnReader(statement))) }
            }
            return found
        }
    }

    /// A page of `table` in name order: `collection_id`, the name to start after and a limit
    /// as arguments. With the info columns it reads the `resources_listing` index alone.
    static func pageSQL(columns: String, from table: String) -> String {
        "SELECT \(columns) FROM \(table) WHERE collection_id = ? AND name > ? ORDER BY name LIMIT ?"
    }

    /// `count` named rows of `table`: `collection_id` and the names as arguments.
    static func namedSQL(columns: String, from table: String, count: Int) -> String {
        let placeholders = Array(repeating: "?", count: count).joined(separator: ",")
        return "SELECT \(columns) FROM \(table) WHERE collection_id = ? AND name IN (\(placeholders))"
    }

    public func listResources(collectionID: Int64) async throws -> [ResourceInfo] {
        try await infoPage(of: collectionID, after: nil, limit: nil)
    }

    public func allResources(collectionID: Int64) async throws -> [StoredResource] {
        try await bodyPage(of: collectionID, after: nil, limit: nil)
    }

    public func listResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [ResourceInfo] {
        try await infoPage(of: collectionID, after: name, limit: limit)
    }

    public func allResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [StoredResource] {
        try await bodyPage(of: collectionID, after: name, limit: limit)
    }

    private func infoPage(of collectionID: Int64, after name: String?, limit: Int?) async throws -> [ResourceInfo] {
        try await page(of: collectionID, after: name, limit: limit, columns: Self.infoColumns, from: "resources",
                       row: { Self.resourceInfo(from: $0) })
    }

    private func bodyPage(of collectionID: Int64, after name: String?, limit: Int?) async throws -> [StoredResource] {
        try await page(of: collectionID, after: name, limit: limit, columns: "\(Self.infoColumns), data",
                       from: Self.withBodies, row: { Self.storedResource(from: $0) })
    }

    /// At most `limit` rows (all when nil) of `table` in the book whose names follow `name`
    /// in byte order (SQLite's BINARY collation), in that order: one range read on the
    /// unique index. Names are never empty, so "" as the start takes every row.
    private func page<Value: Sendable>(of collectionID: Int64, after name: String?, limit: Int?, columns: String,
                                       from table: String, row makeValue: @escaping @Sendable (ColumnReader) -> Value) async throws -> [Value] {
        try await pool.read { db in
            var values: [Value] = []
            values.reserveCapacity(min(limit ?? 0, 4096))
            // A negative LIMIT is no limit in SQLite.
            let statement = try db.cachedStatement(sql: Self.pageSQL(columns: columns, from: table))
            let cursor = try Row.fetchCursor(statement, arguments: [collectionID, name ?? "", limit ?? -1])
            while try cursor.next() != nil { values.append(makeValue(ColumnReader(statement))) }
            return values
        }
    }
}
