import Foundation
import GRDB
import PostgresNIO
import Testing
@testable import RoloPostgres
@testable import RoloSQLite
@testable import RoloStore

/// Where a user comes from (`UserAccount.source`, issue 30): `local` unless a source's first
/// login set it, kept by both back ends, and added to an existing database in place
/// (SQLite `v13-account-source`, PostgreSQL `v6-account-source`) with every user `local`
/// and every card, ETag and sync token as it was.
@Suite(.closesStores) struct AccountSourceTests {
    @Test(arguments: [StoreBackend.sqlite, .postgres])
    func aUserIsLocalUntilASourceSetsItsSource(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let accounts = fixture.store
        #expect(try await accounts.account(name: "alice")?.source == "local")
        try await accounts.createUser(name: "carol@example.org", password: "carol-secret")
        try await accounts.updateAccount(name: "carol@example.org", UserAccountUpdate(source: "ldap"))
        #expect(try await accounts.account(name: "carol@example.org")?.source == "ldap")
        // Other changes leave it alone.
        try await accounts.updateAccount(name: "carol@example.org", UserAccountUpdate(admin: true))
        let carol = try #require(try await accounts.account(name: "carol@example.org"))
        #expect(carol.source == "ldap" && carol.admin)
        #expect(try await accounts.account(name: "alice")?.source == "local")
    }

    /// A card, its ETag and the book's sync token before the upgrade, to compare after.
    static func putCard(_ store: any RoloStore, book: Int64) async throws -> (etag: String, seq: Int64) {
        let body = Data(vcard(uid: "kept", fn: "Kept Card").utf8)
        let put = try await store.putResource(collectionID: book, name: "kept.vcf", data: body, contentType: "text/vcard",
                                              card: CardMetadata(uid: "kept", kind: "individual", indexEntries: [], members: []),
                                              precondition: .none)
        return (put.etag, put.seq)
    }

    @Test func aVersion12SQLiteDatabaseUpgradesInPlaceWithEveryUserLocal() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-v13-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("v12.sqlite").path
        let body = Data(vcard(uid: "kept", fn: "Kept Card").utf8)
        let queue = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(queue, upTo: "v12-feeds")
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO users (id, name, password_hash, created, admin) VALUES (1, 'alice', 'x', 0, 1);
                INSERT INTO collections (id, owner_id, parent_id, path, kind, sync_seq, created, modified)
                    VALUES (1, 1, NULL, 'default', 'addressbook', 7, 0, 0);
                INSERT INTO changes (collection_id, seq, name, deleted, at) VALUES (1, 6, 'gone.vcf', 1, 0);
                INSERT INTO changes (collection_id, seq, name, deleted, at) VALUES (1, 7, 'kept.vcf', 0, 0);
                """)
            try db.execute(sql: """
                INSERT INTO resources (id, collection_id, name, content_type, etag, size, modified, seq, uid, kind)
                VALUES (1, 1, 'kept.vcf', 'text/vcard', ?, ?, 0, 7, 'kept', 'individual')
                """, arguments: [ETag.of(body), body.count])
            try db.execute(sql: "INSERT INTO resource_bodies (resource_id, data) VALUES (1, ?)", arguments: [body])
        }
        try queue.close()

        let store = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? store.close() }
        let applied = try await store.pool.read { db in try SQLiteStore.migrator.appliedIdentifiers(db) }
        #expect(applied.contains("v13-account-source"))
        let alice = try #require(try await store.account(name: "alice"))
        #expect(alice.source == "local" && alice.admin)
        let stored = try #require(try await store.resource(collectionID: 1, name: "kept.vcf"))
        #expect(stored.info.etag == ETag.of(body) && stored.data == body)
        let changes = try await store.changes(collectionID: 1, since: 5, limit: nil)
        #expect(changes.changes.map(\.name) == ["gone.vcf", "kept.vcf"] && changes.newSeq == 7)
    }

    @Test func aVersion5PostgresDatabaseUpgradesInPlaceWithEveryUserLocal() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let card = try await Self.putCard(store, book: fixture.book.id)
        // Back to the schema before v6: the column dropped, as if never added.
        try await store.autocommit { connection in
            for statement in [
                "ALTER TABLE users DROP COLUMN source",
                "DELETE FROM schema_migrations WHERE version = 'v6-account-source'",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        let versions = PostgresStore.migrations.map(\.version)
        #expect(versions.firstIndex(of: "v6-account-source") == versions.firstIndex(of: "v5-feeds").map { $0 + 1 })
        #expect(try await upgraded.account(name: "alice")?.source == "local")
        let stored = try #require(try await upgraded.resource(collectionID: fixture.book.id, name: "kept.vcf"))
        #expect(stored.info.etag == card.etag)
        let changes = try await upgraded.changes(collectionID: fixture.book.id, since: 0, limit: nil)
        #expect(changes.newSeq == card.seq && changes.changes.map(\.name) == ["kept.vcf"])
    }
}
