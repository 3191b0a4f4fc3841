import Foundation
import GRDB
import Testing
@testable import RoloSQLite
@testable import RoloStore

@Suite struct MigrationTests {
    /// A database left by the v1 schema: one card with a non-ASCII name and an ASCII email,
    /// its index rows carrying all three values as v1 stored them.
    static func makeVersion1Database(at path: String) throws -> Data {
        let queue = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(queue, upTo: "v1")
        let data = Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:e1\r\nFN:Élodie Durand\r\nEND:VCARD\r\n".utf8)
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO users (id, name, password_hash, created) VALUES (1, 'alice', 'x', 0);
                INSERT INTO collections (id, owner_id, parent_id, path, kind, sync_seq, created, modified)
                    VALUES (1, 1, NULL, 'default', 'addressbook', 1, 0, 0);
                """)
            try db.execute(sql: """
                INSERT INTO resources (id, collection_id, name, content_type, etag, data, size, modified, seq, uid, kind)
                VALUES (1, 1, 'elodie.vcf', 'text/vcard', ?, ?, ?, 0, 1, 'e1', 'individual')
                """, arguments: [ETag.of(data), data, data.count])
            for (position, property, value) in [(0, "FN", "Élodie Durand"), (1, "EMAIL", "elodie@example.com"), (2, "UID", "e1")] {
                try db.execute(sql: """
                    INSERT INTO card_index (resource_id, position, collection_id, property, value, value_ascii, value_unicode)
                    VALUES (1, ?, 1, ?, ?, ?, ?)
                    """, arguments: [position, property, value, CaseFolding.ascii(value), CaseFolding.unicode(value)])
            }
            try db.execute(sql: "INSERT INTO changes (collection_id, seq, name, deleted, at) VALUES (1, 1, 'elodie.vcf', 0, 0)")
        }
        try queue.close()
        return data
    }

    @Test func aVersion1DatabaseUpgradesWithItsBodiesKeptAndItsCardsFoundByEveryCollation() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-migration-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("v1.sqlite").path
        let data = try Self.makeVersion1Database(at: path)

        let store = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? store.close() }
        let applied = try await store.pool.read { db in try SQLiteStore.migrator.appliedIdentifiers(db) }
        #expect(applied == Set(SQLiteStore.migrator.migrations))
        #expect(SQLiteStore.migrator.migrations == ["v1", "v2-lean-card-index", "v3-resource-bodies", "v4-listing-index",
                                                    "v5-pending-index", "v6-sharing", "v7-substring-index", "v8-push", "v9-web",
                                                    "v10-coordination", "v11-dead-property-language", "v12-feeds",
                                                    "v13-account-source", "v14-card-versions", "v15-parts-from-current-cards",
                                                    "v16-directory", "v17-current-version-body",
                                                    "v18-current-version-in-changes", "v19-rows-in-write-order"])
        #expect(try await store.resource(collectionID: 1, name: "elodie.vcf")?.data == data)
        let hits: [(String, String, IndexPredicate.Collation, IndexPredicate.MatchType)] = [
            ("FN", "ÉLODIE DURAND", .asciiCasemap, .equals),
            ("FN", "élodie", .unicodeCasemap, .startsWith),
            ("FN", "Élodie Durand", .octet, .equals),
            ("EMAIL", "EXAMPLE.COM", .asciiCasemap, .endsWith),
            ("EMAIL", "elodie@", .octet, .startsWith),
        ]
        for (property, text, collation, match) in hits {
            let predicate = IndexPredicate.textMatch(property: property, text: text, collation: collation, match: match, negate: false)
            #expect(try await store.query(collectionID: 1, predicate: predicate, limit: nil) == ["elodie.vcf"], "\(predicate)")
        }
        let misses = [IndexPredicate.textMatch(property: "FN", text: "élodie durand", collation: .asciiCasemap, match: .equals, negate: false),
                      .textMatch(property: "FN", text: "élodie durand", collation: .octet, match: .equals, negate: false)]
        for predicate in misses {
            #expect(try await store.query(collectionID: 1, predicate: predicate, limit: nil).isEmpty, "\(predicate)")
        }
        // Only the values whose folds or verbatim form differ kept them.
        let stored: [Row] = try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT property, value_ascii, value FROM card_index ORDER BY position")
        }
        #expect(stored.map { $0[1] as String? } == ["Élodie durand", nil, nil])
        #expect(stored.map { $0[2] as String? } == ["Élodie Durand", nil, nil])
        #expect(try await store.integrityCheck() == [])
    }
}

@Suite struct SubstringIndexMigrationTests {
    /// A database as v6 left it: two cards with merged index rows, one whose rows were still
    /// pending, and a deletion in the change log.
    @Test func aVersion6DatabaseGainsTheTrigramIndexKeepingCardsETagsAndSyncTokens() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-v6-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("v6.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(queue, upTo: "v6-sharing")
        let cards: [(id: Int64, name: String, fn: String, email: String, pending: Bool)] = [
            (1, "joanne.vcf", "Joanne Élodie", "joanne@example.com", false),
            (2, "anna.vcf", "ANNA Lindqvist", "anna@lumen.test", false),
            (3, "zoe.vcf", "Zoë Okafor", "zoe@example.com", true),
        ]
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO users (id, name, password_hash, created) VALUES (1, 'alice', 'x', 0);
                INSERT INTO collections (id, owner_id, parent_id, path, kind, sync_seq, created, modified)
                    VALUES (1, 1, NULL, 'default', 'addressbook', 5, 0, 0);
                INSERT INTO changes (collection_id, seq, name, deleted, at) VALUES (1, 4, 'gone.vcf', 1, 0);
                """)
            for card in cards {
                let body = Data(vcard(uid: card.name, fn: card.fn).utf8)
                try db.execute(sql: """
                    INSERT INTO resources (id, collection_id, name, content_type, etag, size, modified, seq, uid, kind)
                    VALUES (?, 1, ?, 'text/vcard', ?, ?, 0, ?, ?, 'individual')
                    """, arguments: [card.id, card.name, ETag.of(body), body.count, card.id == 3 ? 5 : card.id, card.name])
                try db.execute(sql: "INSERT INTO resource_bodies (resource_id, data) VALUES (?, ?)", arguments: [card.id, body])
                try db.execute(sql: "INSERT INTO changes (collection_id, seq, name, deleted, at) VALUES (1, ?, ?, 0, 0)",
                               arguments: [card.id == 3 ? 5 : card.id, card.name])
                let table = card.pending ? "card_index_pending" : "card_index"
                for (position, (property, value)) in [("UID", card.name), ("FN", card.fn), ("EMAIL", card.email)].enumerated() {
                    let entry = FoldedIndexEntry(IndexEntry(property: property, value: value))
                    try db.execute(sql: """
                        INSERT INTO \(table) (resource_id, position, collection_id, property, value_unicode, value_ascii, value)
                        VALUES (?, ?, 1, ?, ?, ?, ?)
                        """, arguments: [card.id, position, property, entry.unicode, entry.ascii, entry.verbatim])
                }
            }
        }
        try queue.close()

        let store = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? store.close() }
        let applied = try await store.pool.read { db in try SQLiteStore.migrator.appliedIdentifiers(db) }
        #expect(applied.contains("v7-substring-index"))
        // The migration indexed the merged cards; opening the store merged the pending one.
        let rows = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM card_trigrams") }
        #expect(rows == 3)
        for card in cards {
            let stored = try #require(try await store.resource(collectionID: 1, name: card.name))
            let body = Data(vcard(uid: card.name, fn: card.fn).utf8)
            #expect(stored.info.etag == ETag.of(body) && stored.data == body)
        }
        let changes = try await store.changes(collectionID: 1, since: 3, limit: nil)
        #expect(changes.changes.map(\.name) == ["gone.vcf", "zoe.vcf"] && changes.newSeq == 5)
        let hits: [(String, String, IndexPredicate.Collation, IndexPredicate.MatchType, [String])] = [
            ("FN", "ÉLODIE", .unicodeCasemap, .contains, ["joanne.vcf"]),
            ("FN", "Élodie", .octet, .endsWith, ["joanne.vcf"]),
            ("FN", "lindq", .asciiCasemap, .contains, ["anna.vcf"]),
            ("EMAIL", "example.com", .unicodeCasemap, .endsWith, ["joanne.vcf", "zoe.vcf"]),
            ("FN", "zoë", .unicodeCasemap, .contains, ["zoe.vcf"]),
            ("FN", "ann", .unicodeCasemap, .contains, ["anna.vcf", "joanne.vcf"]),
        ]
        for (property, text, collation, match, expected) in hits {
            let predicate = IndexPredicate.textMatch(property: property, text: text, collation: collation, match: match, negate: false)
            #expect(try await store.query(collectionID: 1, predicate: predicate, limit: nil) == expected, "\(predicate)")
        }
        #expect(try await store.integrityCheck() == [])
    }
}
