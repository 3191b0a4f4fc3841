import RoloStore
import GRDB

extension SQLiteStore {
    public func deadProperties(collectionID: Int64, resource: String?) async throws -> [DeadProperty] {
        // A resource has a handful of them at most: read on the calling thread.
        try rowReaders.read { reader in
            var found: [DeadProperty] = []
            try reader.forEachRow(sql: """
                SELECT namespace, name, xml, language FROM dead_properties WHERE collection_id = ? AND resource = ?
                ORDER BY namespace, name
                """, bind: { $0.add(collectionID); $0.add(resource ?? "") }, row: { columns in
                found.append(DeadProperty(name: PropertyName(namespace: columns.text(0), name: columns.text(1)),
                                          xmlValue: columns.text(2), language: columns.optionalText(3)))
            })
            return found
        }
    }

    /// Removals apply first, then sets, all in one transaction (PROPPATCH is atomic).
    public func updateDeadProperties(collectionID: Int64, resource: String?,
                                     set: [DeadProperty], remove: [PropertyName]) async throws {
        try await pool.write { db in
            _ = try Self.collectionRow(db, id: collectionID)
            if let resource, try Self.existingResource(db, collectionID: collectionID, name: resource) == nil {
                throw StoreError.notFound
            }
            let owner = resource ?? ""
            let delete = try db.cachedStatement(sql: """
                DELETE FROM dead_properties WHERE collection_id = ? AND resource = ? AND namespace = ? AND name = ?
                """)
            for name in remove {
                try delete.execute(arguments: [collectionID, owner, name.namespace, name.name])
            }
            let upsert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO dead_properties (collection_id, resource, namespace, name, xml, language)
                VALUES (?, ?, ?, ?, ?, ?)
                """)
            for property in set {
                try upsert.execute(arguments: [collectionID, owner, property.name.namespace, property.name.name,
                                               property.xmlValue, property.language])
            }
        }
    }
}
