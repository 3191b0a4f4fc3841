import Foundation
import GRDB
import PostgresNIO
import Testing
@testable import RoloPostgres
@testable import RoloSQLite
@testable import RoloStore

/// A database from before card versions (SQLite v12-feeds, PostgreSQL v5-feeds) upgrades in
/// place: every card, ETag and sync token kept, each card given its current version, and
/// writes from then on keep theirs.
@Suite(.closesStores) struct CardHistoryMigrationTests {
    @Test func anSQLiteDatabaseWithoutVersionsUpgradesKeepingCardsETagsAndSyncTokens() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-v14-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("old.sqlite").path
        let store = try SQLiteStore(path: path, bcryptCost: 4)
        try await store.createUser(name: "alice", password: "secret-password")
        let fixture = StoreFixture(sqlite: store, book: try #require(try await store.collection(owner: "alice", path: ["default"])))
        try await Self.writeOldCards(fixture)
        // Back to the schema before v14: what it added is dropped, as if never applied.
        try await store.pool.write { db in
            try db.execute(sql: """
                DROP TRIGGER changes_keep_version_insert; DROP TRIGGER changes_keep_version_update;
                DROP TABLE card_versions; DROP TABLE card_version_bodies; DROP TABLE card_version_parts;
                DROP TABLE card_version_part_refs;
                DELETE FROM grdb_migrations WHERE identifier = 'v14-card-versions';
                """)
        }
        let before = try await Self.state(of: store, book: fixture.book.id)
        try store.close()

        let upgraded = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? upgraded.close() }
        try await Self.check(upgraded, book: fixture.book.id, before: before)
    }

    @Test func aPostgresDatabaseWithoutVersionsUpgradesKeepingCardsETagsAndSyncTokens() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        try await Self.writeOldCards(fixture)
        // Back to the schema before v7: what it added is dropped, as if never applied.
        try await store.autocommit { connection in
            for statement in [
                "DROP TRIGGER changes_keep_version ON changes", "DROP FUNCTION changes_keep_version()",
                "DROP TABLE card_versions", "DROP TABLE card_version_bodies", "DROP TABLE card_version_parts",
                "DROP TABLE card_version_part_refs",
                "DELETE FROM schema_migrations WHERE version = 'v7-card-versions'",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        let before = try await Self.state(of: store, book: fixture.book.id)
        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        try await Self.check(upgraded, book: fixture.book.id, before: before)
    }

    static func writeOldCards(_ fixture: StoreFixture) async throws {
        try await fixture.put("a.vcf", fn: "Anna")
        try await fixture.put("b.vcf", fn: "Bert")
        try await fixture.put("a.vcf", fn: "Anna Edited")
        try await fixture.cards.deleteResource(collectionID: fixture.book.id, name: "b.vcf", precondition: .none)
        try await fixture.put("c.vcf", fn: "Carl")
    }

    static func state(of store: any RoloStore, book: Int64) async throws -> ([StoredResource], Int64) {
        (try await store.allResources(collectionID: book), try #require(try await store.collection(id: book)).syncSeq)
    }

    static func check(_ store: any RoloStore, book: Int64, before: ([StoredResource], Int64)) async throws {
        #expect(try await state(of: store, book: book) == before)
        let history = try #require(store as? any CardHistoryStore)
        for resource in before.0 {
            let versions = try await history.cardVersions(collectionID: book, name: resource.info.name)
            #expect(versions.map(\.etag) == [resource.info.etag] && versions.map(\.data) == [resource.data], "\(resource.info.name)")
        }
        let data = Data(vcard(uid: "a.vcf", fn: "Anna Again").utf8)
        _ = try await store.putResource(collectionID: book, name: "a.vcf", data: data, contentType: "text/vcard",
                                        card: CardMetadata(uid: "a.vcf", kind: "individual", indexEntries: [], members: []),
                                        precondition: .none)
        #expect(try await history.cardVersions(collectionID: book, name: "a.vcf").count == 2)
    }
}
