import Foundation
import PostgresNIO
import Testing
@testable import RoloPostgres
@testable import RoloStore

/// PostgreSQL's `v10-listing-covering-index` (issue 34): the unique index on a book's names
/// carries the listed columns, so a listing's page is an index-only scan. An existing
/// database gets it in place, with every card, ETag and sync token as it was, and the names
/// stay unique.
@Suite(.closesStores) struct ListingIndexMigrationTests {
    @Test func aVersion9PostgresDatabaseGetsTheCoveringIndexKeepingCardsETagsAndSyncTokens() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let card = try await AccountSourceTests.putCard(store, book: fixture.book.id)
        #expect(try await Self.uniqueIndexes(store) == [Self.covering])
        // Back to the schema before v10: v1's plain unique constraint.
        try await store.autocommit { connection in
            for statement in [
                "ALTER TABLE resources DROP CONSTRAINT resources_collection_id_name_key",
                "ALTER TABLE resources ADD UNIQUE (collection_id, name)",
                "DELETE FROM schema_migrations WHERE version = 'v10-listing-covering-index'",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        #expect(try await Self.uniqueIndexes(store) == ["(collection_id, name)"])

        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        #expect(try await Self.uniqueIndexes(upgraded) == [Self.covering])
        let listed = try await upgraded.listResources(collectionID: fixture.book.id, after: nil, limit: 10)
        #expect(listed.map(\.name) == ["kept.vcf"] && listed.first?.etag == card.etag)
        let changes = try await upgraded.changes(collectionID: fixture.book.id, since: 0, limit: nil)
        #expect(changes.newSeq == card.seq && changes.changes.map(\.name) == ["kept.vcf"])
        // Still a unique constraint: a second row of the name is refused.
        let duplicate = await #expect(throws: PSQLError.self) {
            try await upgraded.autocommit { connection in
                try await connection.execute("""
                    INSERT INTO resources (collection_id, name, content_type, etag, size, modified, seq, data)
                    VALUES (\(fixture.book.id), 'kept.vcf', 'text/vcard', '"x"', 0, 0, 0, ''::BYTEA)
                    """)
            }
        }
        #expect(duplicate.map(PostgresStore.isUniqueViolation) == true)
    }

    static let covering = "(collection_id, name) INCLUDE (content_type, etag, size, modified, seq)"

    /// The key (and included columns) of each unique constraint of `resources`, as
    /// `pg_get_indexdef` writes them.
    static func uniqueIndexes(_ store: PostgresStore) async throws -> [String] {
        try await store.autocommit { connection in
            try await connection.rows("""
                SELECT pg_get_indexdef(conindid) FROM pg_constraint
                WHERE conrelid = 'resources'::regclass AND contype = 'u' ORDER BY conname
                """).map { row in
                let definition = try row.decode(String.self)
                return String(definition[definition.range(of: "btree ")!.upperBound...])
            }
        }
    }
}
