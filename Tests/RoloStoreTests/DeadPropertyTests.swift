import Foundation
import GRDB
import PostgresNIO
import Testing
@testable import RoloPostgres
@testable import RoloSQLite
@testable import RoloStore

@Suite(.closesStores) struct DeadPropertyTests {
    let color = PropertyName(namespace: "http://apple.com/ns/ical/", name: "calendar-color")
    let note = PropertyName(namespace: "urn:example", name: "note")

    @Test(arguments: StoreBackend.cardBackends)
    func propertiesAreSetReplacedAndRemovedPerOwner(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.cards
        let id = fixture.book.id
        try await fixture.put("a.vcf")
        let xml = #"<x:v xmlns:x="urn:example">a &amp; b</x:v>"#
        try await store.updateDeadProperties(collectionID: id, resource: nil,
                                             set: [DeadProperty(name: color, xmlValue: "#FF0000"), DeadProperty(name: note, xmlValue: xml)],
                                             remove: [])
        try await store.updateDeadProperties(collectionID: id, resource: "a.vcf",
                                             set: [DeadProperty(name: note, xmlValue: "card note")], remove: [])
        #expect(try await store.deadProperties(collectionID: id, resource: nil)
                == [DeadProperty(name: color, xmlValue: "#FF0000"), DeadProperty(name: note, xmlValue: xml)])
        try await store.updateDeadProperties(collectionID: id, resource: nil,
                                             set: [DeadProperty(name: color, xmlValue: "#00FF00")], remove: [note])
        #expect(try await store.deadProperties(collectionID: id, resource: nil) == [DeadProperty(name: color, xmlValue: "#00FF00")])
        #expect(try await store.deadProperties(collectionID: id, resource: "a.vcf") == [DeadProperty(name: note, xmlValue: "card note")])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func resourcePropertiesSurviveAPutAndGoWithADelete(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let id = fixture.book.id
        try await fixture.put("a.vcf")
        try await fixture.cards.updateDeadProperties(collectionID: id, resource: "a.vcf",
                                                     set: [DeadProperty(name: note, xmlValue: "n")], remove: [])
        try await fixture.put("a.vcf", fn: "Edited")
        #expect(try await fixture.cards.deadProperties(collectionID: id, resource: "a.vcf").count == 1)
        try await fixture.cards.deleteResource(collectionID: id, name: "a.vcf", precondition: .none)
        try await fixture.put("a.vcf")
        #expect(try await fixture.cards.deadProperties(collectionID: id, resource: "a.vcf").isEmpty)
        await #expect(throws: StoreError.notFound) {
            try await fixture.cards.updateDeadProperties(collectionID: id, resource: "missing.vcf",
                                                         set: [DeadProperty(name: note, xmlValue: "n")], remove: [])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aPropertysLanguageIsKeptAndReplacedWithItsValue(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let id = fixture.book.id
        try await fixture.store.updateDeadProperties(collectionID: id, resource: nil, set: [
            DeadProperty(name: note, xmlValue: "Bonjour", language: "fr-CA"), DeadProperty(name: color, xmlValue: "#FF0000"),
        ], remove: [])
        #expect(try await fixture.store.deadProperties(collectionID: id, resource: nil)
                == [DeadProperty(name: color, xmlValue: "#FF0000"), DeadProperty(name: note, xmlValue: "Bonjour", language: "fr-CA")])
        try await fixture.store.updateDeadProperties(collectionID: id, resource: nil,
                                                     set: [DeadProperty(name: note, xmlValue: "Hello")], remove: [])
        #expect(try await fixture.store.deadProperties(collectionID: id, resource: nil).last
                == DeadProperty(name: note, xmlValue: "Hello", language: nil))
    }

    // MARK: Upgrades

    /// A v10 SQLite database (before dead properties kept their language) upgrades in
    /// place: its properties keep their values, with no language, and new ones keep theirs.
    @Test func aVersion10DatabaseKeepsItsDeadPropertiesAndGainsTheirLanguage() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-v11-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("v10.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(queue, upTo: "v10-coordination")
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO users (id, name, password_hash, created) VALUES (1, 'alice', 'x', 0);
                INSERT INTO collections (id, owner_id, parent_id, path, kind, sync_seq, created, modified)
                    VALUES (1, 1, NULL, 'default', 'addressbook', 0, 0, 0);
                INSERT INTO dead_properties (collection_id, resource, namespace, name, xml)
                    VALUES (1, '', 'urn:example', 'note', 'kept');
                """)
        }
        try queue.close()

        let store = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? store.close() }
        #expect(try await store.deadProperties(collectionID: 1, resource: nil) == [DeadProperty(name: note, xmlValue: "kept")])
        try await store.updateDeadProperties(collectionID: 1, resource: nil,
                                             set: [DeadProperty(name: color, xmlValue: "rouge", language: "fr")], remove: [])
        #expect(try await store.deadProperties(collectionID: 1, resource: nil)
                == [DeadProperty(name: color, xmlValue: "rouge", language: "fr"), DeadProperty(name: note, xmlValue: "kept")])
    }

    /// A PostgreSQL database at v3-coordination upgrades in place the same way.
    @Test func aVersion3PostgresDatabaseKeepsItsDeadPropertiesAndGainsTheirLanguage() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let id = fixture.book.id
        // Back to the schema before v4: its column dropped, as if never added.
        try await store.autocommit { connection in
            for statement in [
                "ALTER TABLE dead_properties DROP COLUMN language",
                "DELETE FROM schema_migrations WHERE version = 'v4-dead-property-language'",
                "INSERT INTO dead_properties (collection_id, resource, namespace, name, xml) VALUES (\(id), '', 'urn:example', 'note', 'kept')",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        #expect(try await upgraded.deadProperties(collectionID: id, resource: nil) == [DeadProperty(name: note, xmlValue: "kept")])
        try await upgraded.updateDeadProperties(collectionID: id, resource: nil,
                                                set: [DeadProperty(name: color, xmlValue: "rouge", language: "fr")], remove: [])
        #expect(try await upgraded.deadProperties(collectionID: id, resource: nil)
                == [DeadProperty(name: color, xmlValue: "rouge", language: "fr"), DeadProperty(name: note, xmlValue: "kept")])
    }
}
