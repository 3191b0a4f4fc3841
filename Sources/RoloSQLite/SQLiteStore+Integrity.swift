import RoloStore
import GRDB

extension SQLiteStore {
    /// Problems found, empty when the database is sound: SQLite's own `integrity_check` and
    /// `foreign_key_check`, then Rolo's invariants (every resource has its latest change
    /// row and its body, every live change row its resource, ETags match the bytes, index
    /// rows have their resource, index and member rows sit in their resource's collection,
    /// no seq beyond its collection's, the trigram index holds every merged value and
    /// agrees with the text it stores).
    public func integrityCheck() async throws -> [String] {
        var problems = try await pool.read { db in
            var problems: [String] = []
            for message in try String.fetchAll(db, sql: "PRAGMA integrity_check") where message != "ok" {
                problems.append("sqlite: \(message)")
            }
            for row in try Row.fetchAll(db, sql: "PRAGMA foreign_key_check") {
                problems.append("foreign key: table \(row[0] as String) rowid \(row[1] as Int64? ?? -1) -> \(row[2] as String)")
            }
            let invariants: [(String, String)] = [
                ("resource without its change row", """
                    SELECT r.collection_id || '/' || r.name FROM resources r
                    LEFT JOIN changes ch ON ch.collection_id = r.collection_id AND ch.name = r.name
                    WHERE ch.seq IS NOT r.seq OR ch.deleted != 0
                    """),
                ("change row of a missing resource", """
                    SELECT ch.collection_id || '/' || ch.name FROM changes ch
                    WHERE ch.deleted = 0 AND NOT EXISTS (
                        SELECT 1 FROM resources r WHERE r.collection_id = ch.collection_id AND r.name = ch.name)
                    """),
                // The change row is the card's current version (schema v18).
                ("change row with another version than its resource's", """
                    SELECT ch.collection_id || '/' || ch.name FROM changes ch
                    LEFT JOIN resources r ON r.collection_id = ch.collection_id AND r.name = ch.name
                    WHERE CASE WHEN ch.deleted THEN ch.etag IS NOT NULL OR ch.content_type IS NOT NULL
                          ELSE ch.etag IS NOT r.etag OR ch.content_type IS NOT r.content_type END
                    """),
                ("seq beyond its collection's", """
                    SELECT ch.collection_id || '/' || ch.name FROM changes ch JOIN collections c ON c.id = ch.collection_id
                    WHERE ch.seq > c.sync_seq
                    """),
                ("index row of a missing resource", """
                    SELECT i.resource_id FROM \(Self.allIndexEntries) i
                    WHERE NOT EXISTS (SELECT 1 FROM resources r WHERE r.id = i.resource_id)
                    """),
                ("index row outside its resource's collection", """
                    SELECT i.resource_id FROM \(Self.allIndexEntries) i JOIN resources r ON r.id = i.resource_id
                    WHERE i.collection_id != r.collection_id
                    """),
                ("index rows both merged and pending", """
                    SELECT DISTINCT p.resource_id FROM card_index_pending p
                    WHERE EXISTS (SELECT 1 FROM card_index i WHERE i.resource_id = p.resource_id)
                    """),
                // The trigram index may hold more than a card's values (stale rows, values
                // joined by line breaks) but never less: a value it lacks is a card that
                // contains and ends-with would not find.
                ("merged index row missing from the trigram index", """
                    SELECT DISTINCT c.resource_id FROM card_index c LEFT JOIN card_trigrams t ON t.rowid = c.resource_id
                    WHERE (t.rowid IS NULL OR instr(t.text, c.value_unicode) = 0 OR instr(t.text, coalesce(c.value_ascii, '')) = 0)
                    AND NOT EXISTS (SELECT 1 FROM card_index_pending p WHERE \(Self.pendingEntries(of: "c.resource_id", in: "p")))
                    """),
                ("trigram row of a card without merged entries, not marked stale", """
                    SELECT t.rowid FROM card_trigrams t
                    WHERE NOT EXISTS (SELECT 1 FROM card_index c WHERE c.resource_id = t.rowid)
                    AND NOT EXISTS (SELECT 1 FROM card_index_pending p WHERE \(Self.pendingEntries(of: "t.rowid", in: "p")))
                    AND NOT EXISTS (SELECT 1 FROM card_trigram_stale s WHERE s.resource_id = t.rowid)
                    """),
                ("member row outside its group's collection", """
                    SELECT m.resource_id FROM group_members m JOIN resources r ON r.id = m.resource_id
                    WHERE m.collection_id != r.collection_id
                    """),
                ("resource without its body", """
                    SELECT collection_id || '/' || name FROM resources r
                    WHERE NOT EXISTS (SELECT 1 FROM resource_bodies b WHERE b.resource_id = r.id)
                    """),
                ("size differs from the stored bytes", """
                    SELECT collection_id || '/' || name FROM resources JOIN resource_bodies ON resource_id = id
                    WHERE size != length(data)
                    """),
            ]
            for (what, sql) in invariants {
                for subject in try String.fetchAll(db, sql: sql) { problems.append("\(what): \(subject)") }
            }
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT collection_id || '/' || name, etag, data FROM resources JOIN resource_bodies ON resource_id = id
                """)
            while let row = try cursor.next() {
                if ETag.of(row[2]) != row[1] as String {
                    problems.append("ETag differs from the stored bytes: \(row[0] as String)")
                }
            }
            return problems
        }
        // FTS5 compares its index with the text it stores only through this command, an
        // INSERT, which the pool's read-only connections refuse; it writes nothing.
        do {
            try await pool.writeWithoutTransaction { db in
                try db.execute(sql: "INSERT INTO card_trigrams (card_trigrams) VALUES ('integrity-check')")
            }
        } catch let error as DatabaseError {
            problems.append("trigram index: \(error.message ?? error.description)")
        }
        return problems
    }
}
