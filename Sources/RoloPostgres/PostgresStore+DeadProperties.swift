import Foundation
import PostgresNIO
import RoloStore

extension PostgresStore {
    public func deadProperties(collectionID: Int64, resource: String?) async throws -> [DeadProperty] {
        let owner = resource ?? ""
        return try await autocommit { connection in
            try await connection.rows("""
                SELECT namespace, name, xml, language FROM dead_properties WHERE collection_id = \(collectionID) AND resource = \(owner)
                ORDER BY namespace, name
                """).map { row in
                let (namespace, name, xml, language) = try row.decode((String, String, String, String?).self)
                return DeadProperty(name: PropertyName(namespace: namespace, name: name), xmlValue: xml, language: language)
            }
        }
    }

    /// Removals apply first, then sets, all in one transaction (PROPPATCH is atomic).
    public func updateDeadProperties(collectionID: Int64, resource: String?,
                                     set: [DeadProperty], remove: [PropertyName]) async throws {
        let owner = resource ?? ""
        try await transaction { connection in
            guard try await connection.first("SELECT 1 FROM collections WHERE id = \(collectionID)") != nil else {
                throw StoreError.notFound
            }
            if let resource, try await Self.existingResource(connection, collectionID: collectionID, name: resource) == nil {
                throw StoreError.notFound
            }
            if !remove.isEmpty {
                try await connection.execute("""
                    DELETE FROM dead_properties d USING unnest(\(remove.map(\.namespace))::TEXT[], \(remove.map(\.name))::TEXT[])
                        AS gone(namespace, name)
                    WHERE d.collection_id = \(collectionID) AND d.resource = \(owner)
                      AND d.namespace = gone.namespace AND d.name = gone.name
                    """)
            }
            // One statement, in order, for each property: a later value of the same name wins.
            for property in set {
                try await connection.execute("""
                    INSERT INTO dead_properties (collection_id, resource, namespace, name, xml, language)
                    VALUES (\(collectionID), \(owner), \(property.name.namespace), \(property.name.name), \(property.xmlValue),
                            \(property.language))
                    ON CONFLICT (collection_id, resource, namespace, name) DO UPDATE SET xml = excluded.xml, language = excluded.language
                    """)
            }
        }
    }
}
