import Foundation
import PostgresNIO
import Testing
import CardIndexing
@testable import RoloPostgres
@testable import RoloStore
import VCard

/// PostgreSQL's `v11-card-rows-by-trigger` (issue 34): a card's index, member and list rows
/// go with the card by a trigger on `resources`, not by foreign keys that a write checked row
/// by row. Deleting a card, or its book, leaves none of them behind, and an existing database
/// gets the trigger in place of its keys with every card, ETag and sync token as it was.
@Suite(.closesStores) struct CardRowsTriggerMigrationTests {
    static let tables = ["card_index", "group_members", "card_listings"]

    static func put(_ store: PostgresStore, _ book: Int64, _ name: String, _ text: String) async throws -> PutResult {
        let data = Data("BEGIN:VCARD\r\nVERSION:4.0\r\n\(text)END:VCARD\r\n".utf8)
        let metadata = try VCardParser.parse(Array(data), mode: .lenient).first.map(CardMetadata.init(card:))
        return try await store.putResource(collectionID: book, name: name, data: data, contentType: "text/vcard; charset=utf-8",
                                           card: metadata, precondition: .none)
    }

    /// Rows of each table for the resource named `name` (by the id it had), in `tables`' order.
    static func rows(_ store: PostgresStore, ids: [Int64]) async throws -> [Int] {
        var counts: [Int] = []
        for table in tables {
            counts.append(try await store.autocommit { connection in
                try await connection.first(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table) WHERE resource_id = ANY($1)",
                                                         binds: { var b = PostgresBindings(); b.append(ids); return b }()))!
                    .decode(Int.self)
            })
        }
        return counts
    }

    static func id(_ store: PostgresStore, _ book: Int64, _ name: String) async throws -> Int64 {
        try await store.autocommit { connection in
            try await connection.first("SELECT id FROM resources WHERE collection_id = \(book) AND name = \(name)")!.decode(Int64.self)
        }
    }

    /// The foreign keys from the three tables to `resources`, and whether the trigger is there.
    static func keysAndTrigger(_ store: PostgresStore) async throws -> (keys: Int, trigger: Bool) {
        try await store.autocommit { connection in
            let keys = try await connection.first("""
                SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND confrelid = 'resources'::regclass
                AND conrelid IN ('card_index'::regclass, 'group_members'::regclass, 'card_listings'::regclass)
                """)!.decode(Int.self)
            let trigger = try await connection.first("""
                SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'resources'::regclass AND tgname = 'resources_delete_rows')
                """)!.decode(Bool.self)
            return (keys, trigger)
        }
    }

    /// A card, a group and a second card in `book`; deleting the card leaves the others' rows,
    /// deleting the book leaves none.
    static func expectRowsGoWithTheirCards(_ store: PostgresStore, owner: String) async throws {
        let book = try await store.createCollection(owner: owner, path: ["rows-\(UUID().uuidString.prefix(8))"],
                                                    kind: .addressBook, displayName: nil, description: nil)
        _ = try await put(store, book.id, "anna.vcf", "UID:anna\r\nFN:Anna Berg\r\nEMAIL:anna@example.com\r\nTEL:+49 1\r\n")
        _ = try await put(store, book.id, "team.vcf", "UID:team\r\nFN:Team\r\nKIND:group\r\nMEMBER:urn:uuid:anna\r\nMEMBER:urn:uuid:bo\r\n")
        _ = try await put(store, book.id, "bo.vcf", "UID:bo\r\nFN:Bo\r\n")
        let anna = try await id(store, book.id, "anna.vcf"), team = try await id(store, book.id, "team.vcf")
        let bo = try await id(store, book.id, "bo.vcf")
        #expect(try await rows(store, ids: [anna]) == [4, 0, 1])
        #expect(try await rows(store, ids: [team]) == [3, 2, 1]) // UID, FN, KIND

        try await store.deleteResource(collectionID: book.id, name: "anna.vcf", precondition: .none)
        #expect(try await rows(store, ids: [anna]) == [0, 0, 0])
        #expect(try await rows(store, ids: [team, bo]) == [5, 2, 2])

        try await store.deleteCollection(id: book.id)
        #expect(try await rows(store, ids: [team, bo]) == [0, 0, 0])
    }

    @Test func aDeletedCardOrBookLeavesNoIndexMemberOrListRows() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        #expect(try await Self.keysAndTrigger(store) == (0, true))
        try await Self.expectRowsGoWithTheirCards(store, owner: fixture.book.owner)
        #expect(try await store.integrityCheck() == [])
        // Rows left behind (written around Rolo) are what `rolo check` reports.
        try await store.autocommit { connection in
            for statement in [
                "INSERT INTO card_index (resource_id, position, collection_id, property, value, value_ascii, value_unicode) VALUES (999001, 0, \(fixture.book.id), 'FN', 'x', 'x', 'x')",
                "INSERT INTO group_members (resource_id, position, collection_id, member_uid) VALUES (999002, 0, \(fixture.book.id), 'x')",
                """
                INSERT INTO card_listings (collection_id, is_group, sort_key, name, resource_id, display_name, has_photo, search_text)
                VALUES (\(fixture.book.id), FALSE, 'x', 'x.vcf', 999003, 'x', FALSE, 'x')
                """,
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        #expect(Set(try await store.integrityCheck()) == ["index row of a missing resource: 999001",
                                                          "member row of a missing resource: 999002",
                                                          "list row of a missing resource: 999003"])
    }

    @Test func aVersion10PostgresDatabaseGetsTheTriggerKeepingCardsETagsAndSyncTokens() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let card = try await AccountSourceTests.putCard(store, book: fixture.book.id)
        // Back to the schema before v11: the cascading keys, no trigger.
        try await store.autocommit { connection in
            for statement in [
                "DROP TRIGGER resources_delete_rows ON resources",
                "DROP FUNCTION rolo_resources_delete_rows()",
            ] + Self.tables.map { "ALTER TABLE \($0) ADD FOREIGN KEY (resource_id) REFERENCES resources(id) ON DELETE CASCADE" } + [
                "DELETE FROM schema_migrations WHERE version = 'v11-card-rows-by-trigger'",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        #expect(try await Self.keysAndTrigger(store) == (3, false))

        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        #expect(try await Self.keysAndTrigger(upgraded) == (0, true))
        let listed = try await upgraded.listResources(collectionID: fixture.book.id, after: nil, limit: 10)
        #expect(listed.map(\.name) == ["kept.vcf"] && listed.first?.etag == card.etag)
        let changes = try await upgraded.changes(collectionID: fixture.book.id, since: 0, limit: nil)
        #expect(changes.newSeq == card.seq && changes.changes.map(\.name) == ["kept.vcf"])
        try await Self.expectRowsGoWithTheirCards(upgraded, owner: fixture.book.owner)
    }
}
