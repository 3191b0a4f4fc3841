import GRDB

extension SQLiteStore {
    public func deadProperties(collectionID: Int64, resource: String?) async throws -> [DeadProperty] {
        try await pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT namespace, name, xml FROM dead_properties WHERE collection_id = ? AND resource = ?
                ORDER BY namespace, name
                """), arguments: [collectionID, resource ?? ""])
                .map { DeadProperty(name: PropertyName(namespace: $0[0], name: $0[1]), xmlValue: $0[2]) }
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
                INSERT OR REPLACE INTO dead_properties (collection_id, resource, namespace, name, xml) VALUES (?, ?, ?, ?, ?)
                """)
            for property in set {
                try upsert.execute(arguments: [collectionID, owner, property.name.namespace, property.name.name,
                                               property.xmlValue])
            }
        }
    }
}
