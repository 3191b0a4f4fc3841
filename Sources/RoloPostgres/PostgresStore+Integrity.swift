import Foundation
import PostgresNIO
import RoloStore

extension PostgresStore {
    /// Problems found, empty when the database keeps Rolo's invariants: every resource has
    /// its latest change row, every live change row its resource and that resource's version,
    /// no seq beyond its collection's, index, member and list rows belong to a resource (index
    /// and member rows in its collection), sizes and ETags match the stored bytes, every
    /// migration is applied. (The server checks its own pages and constraints; `amcheck` and
    /// `pg_dump` are the tools for those.)
    public func integrityCheck() async throws -> [String] {
        let invariants: [(String, String)] = [
            ("resource without its change row", """
                SELECT r.collection_id || '/' || r.name FROM resources r
                LEFT JOIN changes ch ON ch.collection_id = r.collection_id AND ch.name = r.name
                WHERE ch.seq IS DISTINCT FROM r.seq OR ch.deleted
                """),
            ("change row of a missing resource", """
                SELECT ch.collection_id || '/' || ch.name FROM changes ch
                WHERE NOT ch.deleted AND NOT EXISTS (
                    SELECT 1 FROM resources r WHERE r.collection_id = ch.collection_id AND r.name = ch.name)
                """),
            // The change row is the card's current version (v13).
            ("change row with another version than its resource's", """
                SELECT ch.collection_id || '/' || ch.name FROM changes ch
                LEFT JOIN resources r ON r.collection_id = ch.collection_id AND r.name = ch.name
                WHERE CASE WHEN ch.deleted THEN ch.etag IS NOT NULL OR ch.content_type IS NOT NULL
                      ELSE ch.etag IS DISTINCT FROM r.etag OR ch.content_type IS DISTINCT FROM r.content_type END
                """),
            ("seq beyond its collection's", """
                SELECT ch.collection_id || '/' || ch.name FROM changes ch JOIN collections c ON c.id = ch.collection_id
                WHERE ch.seq > c.sync_seq
                """),
            ("index row outside its resource's collection", """
                SELECT DISTINCT i.resource_id::TEXT FROM card_index i JOIN resources r ON r.id = i.resource_id
                WHERE i.collection_id <> r.collection_id
                """),
            ("member row outside its group's collection", """
                SELECT DISTINCT m.resource_id::TEXT FROM group_members m JOIN resources r ON r.id = m.resource_id
                WHERE m.collection_id <> r.collection_id
                """),
            // No foreign keys since v11 (a trigger deletes them with their card), so the
            // check looks for rows left behind, as SQLite's does.
            ("index row of a missing resource", """
                SELECT DISTINCT i.resource_id::TEXT FROM card_index i
                WHERE NOT EXISTS (SELECT 1 FROM resources r WHERE r.id = i.resource_id)
                """),
            ("member row of a missing resource", """
                SELECT DISTINCT m.resource_id::TEXT FROM group_members m
                WHERE NOT EXISTS (SELECT 1 FROM resources r WHERE r.id = m.resource_id)
                """),
            ("list row of a missing resource", """
                SELECT l.resource_id::TEXT FROM card_listings l
                WHERE NOT EXISTS (SELECT 1 FROM resources r WHERE r.id = l.resource_id)
                """),
            ("size differs from the stored bytes", """
                SELECT collection_id || '/' || name FROM resources WHERE size <> length(data)
                """),
        ]
        var problems = try await autocommit { connection in
            var problems: [String] = []
            let applied = Set(try await connection.rows("SELECT version FROM schema_migrations").map { try $0.decode(String.self) })
            for migration in Self.migrations where !applied.contains(migration.version) {
                problems.append("migration not applied: \(migration.version)")
            }
            for (what, sql) in invariants {
                for row in try await connection.rows(PostgresQuery(unsafeSQL: sql)) {
                    problems.append("\(what): \(try row.decode(String.self))")
                }
            }
            return problems
        }
        // ETags against the bytes, a page at a time: never the whole database in memory.
        var after: (Int64, String) = (0, "")
        while true {
            let (collectionID, name) = after
            let page = try await autocommit { connection in
                try await connection.rows("""
                    SELECT collection_id, name, etag, data FROM resources
                    WHERE (collection_id, name) > (\(collectionID), \(name)) ORDER BY collection_id, name LIMIT 200
                    """).map { try $0.decode((Int64, String, String, Data).self) }
            }
            for (collection, name, etag, data) in page where ETag.of(data) != etag {
                problems.append("ETag differs from the stored bytes: \(collection)/\(name)")
            }
            guard let last = page.last else { break }
            after = (last.0, last.1)
        }
        return problems
    }
}
