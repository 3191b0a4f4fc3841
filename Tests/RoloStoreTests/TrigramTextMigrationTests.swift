import Foundation
import PostgresNIO
import Testing
@testable import RoloPostgres
@testable import RoloStore

/// PostgreSQL's `v15-trigram-text-once` (issue 34): the trigram index reads a value's fold
/// once when its two folds are the same, and a card's bytes are compressed with lz4. An
/// existing database gets both in place, with every card, ETag and sync token as it was, and
/// a substring query still finds a needle in either fold through the index.
@Suite(.closesStores) struct TrigramTextMigrationTests {
    @Test func aVersion14PostgresDatabaseGetsTheNewTrigramIndexKeepingCardsETagsAndSyncTokens() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        #expect(try await Self.trigramIndexText(store) == Self.onceText)
        #expect(try await Self.compressions(store) == ["lz4", "lz4", "lz4"])

        // Back to the schema before v15: v1's index over both folds, pglz.
        try await store.autocommit { connection in
            for statement in [
                "DROP INDEX card_index_trigrams",
                "CREATE INDEX card_index_trigrams ON card_index USING gin ((value_ascii || E'\\n' || value_unicode) gin_trgm_ops)",
                "ALTER TABLE resources ALTER COLUMN data SET COMPRESSION pglz",
                "ALTER TABLE card_version_bodies ALTER COLUMN data SET COMPRESSION pglz",
                "ALTER TABLE card_version_parts ALTER COLUMN data SET COMPRESSION pglz",
                "DELETE FROM schema_migrations WHERE version = 'v15-trigram-text-once'",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        #expect(try await Self.trigramIndexText(store) == Self.bothText)
        #expect(try await Self.compressions(store) == ["pglz", "pglz", "pglz"])
        // One value whose folds are the same (ASCII), one whose folds differ.
        let ascii = try await CardRowsTriggerMigrationTests.put(store, fixture.book.id, "ascii.vcf", "UID:ascii\r\nFN:Anna Number 4\r\n")
        let greek = try await CardRowsTriggerMigrationTests.put(store, fixture.book.id, "greek.vcf", "UID:greek\r\nFN:ΕΛΈΝΗ Γεωργίου\r\n")

        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        #expect(try await Self.trigramIndexText(upgraded) == Self.onceText)
        #expect(try await Self.compressions(upgraded) == ["lz4", "lz4", "lz4"])
        #expect(upgraded.usesTrigramIndex)
        let listed = try await upgraded.listResources(collectionID: fixture.book.id, after: nil, limit: 10)
        #expect(listed.map(\.name) == ["ascii.vcf", "greek.vcf"] && listed.map(\.etag) == [ascii.etag, greek.etag])
        let changes = try await upgraded.changes(collectionID: fixture.book.id, since: ascii.seq - 1, limit: nil)
        #expect(changes.newSeq == greek.seq && changes.changes.map(\.name) == ["ascii.vcf", "greek.vcf"])

        // Found through the rebuilt index: in the one fold, and in the second of two.
        for (text, collation, found) in [("number 4", IndexPredicate.Collation.asciiCasemap, ["ascii.vcf"]),
                                         ("νη γεωρ", .unicodeCasemap, ["greek.vcf"]),
                                         ("ΈΝΗ", .asciiCasemap, ["greek.vcf"]),
                                         ("ένη", .asciiCasemap, [])] {
            let predicate = IndexPredicate.textMatch(property: "FN", text: text, collation: collation, match: .contains, negate: false)
            #expect(try await upgraded.query(collectionID: fixture.book.id, predicate: predicate, limit: nil) == found, "\(text)")
        }

        // A long card written now is compressed with lz4.
        let note = String(repeating: "A long note that compresses well. ", count: 300)
        _ = try await CardRowsTriggerMigrationTests.put(upgraded, fixture.book.id, "long.vcf", "UID:long\r\nFN:Long\r\nNOTE:\(note)\r\n")
        let method = try await upgraded.autocommit { connection in
            try await connection.first("""
                SELECT pg_column_compression(data) FROM resources WHERE collection_id = \(fixture.book.id) AND name = 'long.vcf'
                """)?.decode(String?.self)
        }
        #expect(method == "lz4")
    }

    static let onceText = "CASE WHEN (value_ascii = value_unicode) THEN value_ascii ELSE ((value_ascii || ' '::text) || value_unicode) END"
    static let bothText = "((value_ascii || ' '::text) || value_unicode)"

    /// The indexed expression of `card_index_trigrams` as `pg_get_indexdef` writes it, on one
    /// line (its line break and the layout's as spaces).
    static func trigramIndexText(_ store: PostgresStore) async throws -> String {
        let definition = try await store.autocommit { connection in
            try await connection.first("SELECT pg_get_indexdef('card_index_trigrams'::regclass)")!.decode(String.self)
        }
        let expression = definition[definition.range(of: "USING gin ((")!.upperBound..<definition.range(of: ") gin_trgm_ops")!.lowerBound]
        return expression.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The compression of the card bytes' columns: resources, card_version_bodies, card_version_parts.
    static func compressions(_ store: PostgresStore) async throws -> [String] {
        try await store.autocommit { connection in
            try await connection.rows("""
                SELECT CASE attcompression WHEN 'l' THEN 'lz4' WHEN 'p' THEN 'pglz' ELSE 'default' END
                FROM pg_attribute WHERE attname = 'data'
                      AND attrelid IN ('resources'::regclass, 'card_version_bodies'::regclass, 'card_version_parts'::regclass)
                ORDER BY attrelid::regclass::text
                """).map { try $0.decode(String.self) }
        }
    }
}
