import Foundation
import GRDB

/// Listings a page at a time (keyset pagination on the `(collection_id, name)` key): each
/// page is one short read on the unique index, whatever the book's size, and nothing is
/// held open between pages while the caller sends the previous one.
extension SQLiteStore {
    public func listResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [ResourceInfo] {
        try await pool.read { db in
            var infos: [ResourceInfo] = []
            infos.reserveCapacity(min(limit, 4096))
            let cursor = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT \(Self.infoColumns) FROM resources WHERE collection_id = ? AND name > ? ORDER BY name LIMIT ?
                """), arguments: [collectionID, name ?? "", limit])
            while let row = try cursor.next() { infos.append(Self.resourceInfo(from: row)) }
            return infos
        }
    }

    public func allResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [StoredResource] {
        try await pool.read { db in
            var resources: [StoredResource] = []
            resources.reserveCapacity(min(limit, 4096))
            let cursor = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT \(Self.infoColumns), data FROM \(Self.withBodies)
                WHERE collection_id = ? AND name > ? ORDER BY name LIMIT ?
                """), arguments: [collectionID, name ?? "", limit])
            while let row = try cursor.next() { resources.append(Self.storedResource(from: row)) }
            return resources
        }
    }
}
