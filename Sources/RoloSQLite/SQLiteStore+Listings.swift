import Foundation
import RoloStore
import GRDB

/// Listings a page at a time (keyset pagination on the `(collection_id, name)` key): each
/// page is one short range read of the `resources_listing` index, which holds every column
/// a listing returns (no lookup in the table per row), whatever the book's size, and
/// nothing is held open between pages while the caller sends the previous one. A whole
/// listing is the same read without a limit. Named lookups (multiget, query hits, changed
/// cards) read the same index, and the bodies only when asked.
extension SQLiteStore {
    public func resources(collectionID: Int64, names: [String]) async throws -> [StoredResource] {
        try named(names, in: collectionID, columns: "\(Self.infoColumns), data", from: Self.withBodies,
                        row: { Self.storedResource(from: $0) })
    }

    public func resources(collectionID: Int64, names: [String], bodyLimit: Int) async throws -> [StoredResource] {
        try named(names, in: collectionID, columns: Self.bodyColumns(upTo: bodyLimit), from: Self.withBodies,
                  row: { Self.storedResource(from: $0, limited: true) })
    }

    /// The info columns, then the body when it is at most `limit` bytes, else NULL. SQLite
    /// evaluates the CASE before it loads the column, so a big body's overflow pages are
    /// never read. The limit is a constant of the deployment, so the statement's text
    /// takes it as a literal and stays one of a few prepared shapes.
    static func bodyColumns(upTo limit: Int) -> String {
        "\(infoColumns), CASE WHEN size <= \(max(limit, 0)) THEN data END"
    }

    public func resourceInfos(collectionID: Int64, names: [String]) async throws -> [ResourceInfo] {
        try named(names, in: collectionID, columns: Self.infoColumns, from: "resources", row: { Self.resourceInfo(from: $0) })
    }

    /// The rows of `table` for these names, absent names skipped. Read on the calling thread
    /// (`RowReaders`, see `readOnCallingThread`): callers ask for a page of names at a time. Each statement
    /// takes up to `namedChunk` names, its placeholders padded to a power of two (unbound
    /// ones are NULL, which matches no name), so a connection keeps a few statements
    /// instead of one per count; more names than a chunk are read in one snapshot.
    private func named<Value>(_ names: [String], in collectionID: Int64, columns: String, from table: String,
                              row makeValue: (ColumnReader) -> Value) throws -> [Value] {
        guard !names.isEmpty else { return [] }
        return try rowReaders.read { reader in
            func readChunks() throws -> [Value] {
                var found: [Value] = []
                found.reserveCapacity(names.count)
                for start in stride(from: 0, to: names.count, by: Self.namedChunk) {
                    let chunk = names[start..<min(start + Self.namedChunk, names.count)]
                    let placeholders = min(Self.namedChunk, 1 << (Int.bitWidth - (chunk.count - 1).leadingZeroBitCount))
                    try reader.forEachRow(sql: Self.namedSQL(columns: columns, from: table, count: placeholders), bind: { bindings in
                        bindings.add(collectionID)
                        for name in chunk { bindings.add(name) }
                    }, row: { found.append(makeValue($0)) })
                }
                return found
            }
            return try names.count > Self.namedChunk ? reader.inOneSnapshot(readChunks) : readChunks()
        }
    }

    /// Names per statement of a named read, well below SQLite's bound-parameter limit.
    static let namedChunk = 512

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

    public func resourceCount(collectionID: Int64, cap: Int) async throws -> Int {
        let cap = max(cap, 0)
        // A multiget's or a query's count stops one past its hrefs or hits: a bounded walk of
        // the covering index, read where the request runs. Through the pool it was two thread
        // switches and, resumed on the other event loop, the rest of the request there too:
        // a multiget of one card took 0.58 ms at the client against 0.17 for the older build.
        if cap <= Self.countOnCallingThreadCap {
            return try readOnCallingThread(.resourceCount, bind: { $0.add(collectionID); $0.add(cap) }) { $0.int(0) } ?? 0
        }
        return try await pool.read { db in
            try Int.fetchOne(db.cachedStatement(sql: RowReader.Query.resourceCount.sql), arguments: [collectionID, cap]) ?? 0
        }
    }

    /// The largest count read on the calling thread (`resourceCount`); beyond it a count
    /// is a scan the event loop should not wait for.
    static let countOnCallingThreadCap = 10_000

    public func listResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [ResourceInfo] {
        try await infoPage(of: collectionID, after: name, limit: limit)
    }

    public func allResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [StoredResource] {
        try await bodyPage(of: collectionID, after: name, limit: limit)
    }

    public func allResources(collectionID: Int64, after name: String?, limit: Int, bodyLimit: Int) async throws -> [StoredResource] {
        try await page(of: collectionID, after: name, limit: limit, columns: Self.bodyColumns(upTo: bodyLimit),
                       from: Self.withBodies, row: { Self.storedResource(from: $0, limited: true) })
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
    /// unique index. Names are never empty, so "" as the start takes every row. A page
    /// (`limit` given) is read on the calling thread (`RowReaders`); a whole book,
    /// whose size nothing bounds, on a reader's thread.
    private func page<Value: Sendable>(of collectionID: Int64, after name: String?, limit: Int?, columns: String,
                                       from table: String, row makeValue: @escaping @Sendable (ColumnReader) -> Value) async throws -> [Value] {
        let sql = Self.pageSQL(columns: columns, from: table)
        if let limit {
            return try rowReaders.read { reader in
                var values: [Value] = []
                values.reserveCapacity(min(limit, 4096))
                try reader.forEachRow(sql: sql, bind: { $0.add(collectionID); $0.add(name ?? ""); $0.add(limit) },
                                      row: { values.append(makeValue($0)) })
                return values
            }
        }
        return try await pool.read { db in
            var values: [Value] = []
            // A negative LIMIT is no limit in SQLite.
            let statement = try db.cachedStatement(sql: sql)
            let cursor = try Row.fetchCursor(statement, arguments: [collectionID, name ?? "", -1])
            while try cursor.next() != nil { values.append(makeValue(ColumnReader(statement))) }
            return values
        }
    }
}
