import Foundation
import GRDB
import PostgresNIO
import Testing
@testable import RoloPostgres
@testable import RoloSQLite
@testable import RoloStore

/// A database from before card versions (SQLite v13-account-source, PostgreSQL v6-account-source) upgrades in
/// place: every card, ETag and sync token kept, each card given its current version, and
/// writes from then on keep theirs.
@Suite(.closesStores) struct CardHistoryMigrationTests {
    @Test func anSQLiteDatabaseWithoutVersionsUpgradesKeepingCardsETagsAndSyncTokens() async throws {
        let (folder, path, store, fixture) = try await Self.sqliteFile()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Self.writeOldCards(fixture)
        // Back to the schema before v14: what it added is dropped, as if never applied.
        try await store.pool.write { db in
            try Self.backToV17(db)
            try db.execute(sql: """
                DROP TRIGGER changes_keep_version_insert; DROP TRIGGER changes_keep_version_update;
                DROP TABLE card_versions; DROP TABLE card_version_bodies; DROP TABLE card_version_parts;
                DROP TABLE card_version_part_refs;
                DELETE FROM grdb_migrations
                WHERE identifier IN ('v14-card-versions', 'v15-parts-from-current-cards', 'v17-current-version-body');
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
        try await Self.backToV12(store)
        try await store.autocommit { connection in
            for statement in [
                "DROP TRIGGER changes_keep_version ON changes", "DROP FUNCTION changes_keep_version()",
                "DROP TABLE card_versions", "DROP TABLE card_version_bodies", "DROP TABLE card_version_parts",
                "DROP TABLE card_version_part_refs",
                "DELETE FROM schema_migrations WHERE version IN ('v7-card-versions', 'v8-parts-from-current-cards')",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        let before = try await Self.state(of: store, book: fixture.book.id)
        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        try await Self.check(upgraded, book: fixture.book.id, before: before)
    }

    /// A fresh SQLite file in a folder of its own (the caller removes it), with alice and her
    /// default book, for a test that reopens the file to upgrade it.
    static func sqliteFile() async throws -> (folder: URL, path: String, store: SQLiteStore, fixture: StoreFixture) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("old.sqlite").path
        let store = try SQLiteStore(path: path, bcryptCost: 4)
        try await store.createUser(name: "alice", password: "secret-password")
        let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
        return (folder, path, store, StoreFixture(sqlite: store, book: book))
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

    // MARK: v15 / v8: no second copy of a photo the current card holds

    @Test func anSQLiteHistoryFromV14DropsThePhotosItsCardsHoldAndKeepsEveryVersion() async throws {
        let (folder, path, store, fixture) = try await Self.sqliteFile()
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try await Self.writePhotoCards(fixture)
        // Back to v14: every version's parts kept, the current card's among them, and no
        // record of where a part starts.
        try await store.pool.write { db in
            for part in Self.heldParts(written) {
                try db.execute(sql: "INSERT OR IGNORE INTO card_version_parts (hash, data) VALUES (?, ?)", arguments: [part.hash, part.data])
            }
            try db.execute(sql: """
                ALTER TABLE card_version_part_refs DROP COLUMN start; ALTER TABLE card_version_part_refs DROP COLUMN length;
                DELETE FROM grdb_migrations WHERE identifier = 'v15-parts-from-current-cards';
                """)
        }
        #expect(try await fixture.integer("SELECT count(*) FROM card_version_parts") == 3)
        let before = try await Self.state(of: store, book: fixture.book.id)
        try store.close()

        let upgraded = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? upgraded.close() }
        try await Self.checkPhotos(StoreFixture(sqlite: upgraded, book: fixture.book), written: written, before: before)
    }

    @Test func aPostgresHistoryFromV7DropsThePhotosItsCardsHoldAndKeepsEveryVersion() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let written = try await Self.writePhotoCards(fixture)
        try await Self.backToV12(store)
        try await store.autocommit { connection in
            for part in Self.heldParts(written) {
                try await connection.execute("""
                    INSERT INTO card_version_parts (hash, data) VALUES (\(part.hash), \(part.data)) ON CONFLICT DO NOTHING
                    """)
            }
            for statement in [
                "ALTER TABLE card_version_part_refs DROP COLUMN start, DROP COLUMN length",
                "DELETE FROM schema_migrations WHERE version = 'v8-parts-from-current-cards'",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        #expect(try await fixture.integer("SELECT count(*) FROM card_version_parts") == 3)
        let before = try await Self.state(of: store, book: fixture.book.id)
        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        try await Self.checkPhotos(StoreFixture(backend: .postgres, store: upgraded, book: fixture.book, cleanup: {}),
                                    written: written, before: before)
    }

    /// Back to the schema before v18: each card's current version a row of `card_versions`
    /// too, written by the v17 triggers, and the change rows without their version.
    static func backToV17(_ db: Database) throws {
        try db.execute(sql: """
            DROP TRIGGER changes_keep_replaced_version; DROP TRIGGER changes_keep_compacted_version;
            INSERT INTO card_versions (collection_id, seq, name, at, etag, content_type, actor_user, actor_credential)
                SELECT collection_id, seq, name, at, etag, content_type, actor_user, actor_credential FROM changes;
            CREATE TRIGGER changes_keep_version_insert AFTER INSERT ON changes BEGIN \(SQLiteStore.keepVersion) END;
            CREATE TRIGGER changes_keep_version_update AFTER UPDATE ON changes BEGIN \(SQLiteStore.keepVersion) END;
            ALTER TABLE changes DROP COLUMN etag; ALTER TABLE changes DROP COLUMN content_type;
            DELETE FROM grdb_migrations WHERE identifier = 'v18-current-version-in-changes';
            """)
    }

    /// Back to PostgreSQL's schema before v13: each card's current version a row of
    /// `card_versions` too, written by the v7 trigger, and the change rows without their version.
    static func backToV12(_ store: PostgresStore) async throws {
        let v7 = try #require(PostgresStore.migrations.first { $0.version == "v7-card-versions" })
        let trigger = v7.statements.filter { $0.contains("changes_keep_version()") }
        #expect(trigger.count == 2) // the function and the trigger
        try await store.autocommit { connection in
            for statement in [
                "DROP TRIGGER changes_keep_replaced_version ON changes", "DROP TRIGGER changes_keep_compacted_version ON changes",
                "DROP FUNCTION changes_keep_replaced_version()",
                """
                INSERT INTO card_versions (collection_id, seq, name, at, etag, content_type, actor_user, actor_credential)
                SELECT collection_id, seq, name, at, etag, content_type, actor_user, actor_credential FROM changes
                """,
            ] + trigger + [
                "ALTER TABLE changes DROP COLUMN etag, DROP COLUMN content_type",
                "DELETE FROM schema_migrations WHERE version = 'v13-current-version-in-changes'",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
    }

    // MARK: v18 / v13: the current version is the change row

    /// Carl written and deleted, his tombstone compacted (his versions are rows alone); Dora
    /// deleted, her tombstone kept; Erik edited once, by another device. Each card's versions
    /// and the book's, as `store` reads them.
    static func writeTombstonesAndEdits(_ fixture: StoreFixture, compacting store: any RoloStore)
        async throws -> (cards: [String: [CardVersion]], book: [CardVersion]) {
        try await CardHistoryTests.put(fixture, "c", CardHistoryTests.card("c", "Carl"), as: CardHistoryTests.phone)
        try await CardHistoryTests.delete(fixture, "c", as: CardHistoryTests.phone)
        try await store.compactChanges(olderThan: Date().addingTimeInterval(60))
        try await CardHistoryTests.put(fixture, "d", CardHistoryTests.card("d", "Dora"), as: CardHistoryTests.phone)
        try await CardHistoryTests.delete(fixture, "d", as: nil)
        try await CardHistoryTests.put(fixture, "e", CardHistoryTests.card("e", "Erik"), as: CardHistoryTests.phone)
        try await CardHistoryTests.put(fixture, "e", CardHistoryTests.card("e", "Erik 2"), as: ChangeAuthor(user: "alice", credentialID: 9))
        let history = try #require(fixture.store as? any CardHistoryStore)
        var versions: [String: [CardVersion]] = [:]
        for name in ["a", "b", "c", "d", "e"] { versions[name] = try await history.cardVersions(collectionID: fixture.book.id, name: name) }
        return (versions, try await history.bookVersions(collectionID: fixture.book.id, since: .distantPast))
    }

    /// After the upgrade: `upgraded` reads what was read before it, a new card writes no
    /// version row and an edit writes the one it replaces (`rows`: card_versions' rows now).
    static func checkCurrentVersionsInChanges(_ fixture: StoreFixture, rows: Int64, before: ([StoredResource], Int64),
                                              changesBefore: ChangeSet, read: (cards: [String: [CardVersion]], book: [CardVersion]),
                                              written: [String: [Data]]) async throws {
        let store = fixture.store, book = fixture.book.id
        let history = try #require(store as? any CardHistoryStore)
        #expect(try await fixture.integer("SELECT count(*) FROM card_versions") == rows)
        #expect(try await Self.state(of: store, book: book) == before)
        #expect(try await store.changes(collectionID: book, since: 0, limit: nil) == changesBefore)
        for (name, versions) in read.cards {
            #expect(try await history.cardVersions(collectionID: book, name: name) == versions, "\(name)")
        }
        #expect(try await history.bookVersions(collectionID: book, since: .distantPast) == read.book)
        #expect(try await fixture.integrityCheck() == [])
        try await CardHistoryTests.put(fixture, "f", CardHistoryTests.card("f", "Finn"), as: CardHistoryTests.phone)
        #expect(try await fixture.integer("SELECT count(*) FROM card_versions") == rows)
        let erik3 = CardHistoryTests.card("e", "Erik 3")
        try await CardHistoryTests.put(fixture, "e", erik3, as: CardHistoryTests.phone)
        #expect(try await fixture.integer("SELECT count(*) FROM card_versions") == rows + 1)
        #expect(try await history.cardVersions(collectionID: book, name: "e").map(\.data) == read.cards["e"]!.map(\.data) + [erik3])
        #expect(try await history.cardVersions(collectionID: book, name: "f").map(\.data) == [CardHistoryTests.card("f", "Finn")])
        #expect(try await fixture.integrityCheck() == [])
        try await Self.checkPhotos(fixture, written: written, before: try await Self.state(of: store, book: book))
    }

    @Test func aPostgresHistoryFromV12KeepsEveryVersionWithoutARowForTheCurrentOnes() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let written = try await Self.writePhotoCards(fixture)
        let read = try await Self.writeTombstonesAndEdits(fixture, compacting: store)
        // Two versions of Anna, Bert and Erik, Carl's and Dora's written and deleted: each a
        // row, and at v13 the current ones (Anna's, Bert's, Erik's, Dora's deletion) are not.
        #expect(try await fixture.integer("SELECT count(*) FROM card_versions") == 6)
        try await Self.backToV12(store)
        #expect(try await fixture.integer("SELECT count(*) FROM card_versions") == 10)
        let before = try await Self.state(of: store, book: fixture.book.id)
        let changesBefore = try await store.changes(collectionID: fixture.book.id, since: 0, limit: nil)

        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        try await Self.checkCurrentVersionsInChanges(StoreFixture(backend: .postgres, store: upgraded, book: fixture.book, cleanup: {}),
                                                     rows: 6, before: before, changesBefore: changesBefore, read: read,
                                                     written: written)
    }

    @Test func anSQLiteHistoryFromV17KeepsEveryVersionWithoutARowForTheCurrentOnes() async throws {
        let (folder, path, store, fixture) = try await Self.sqliteFile()
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try await Self.writePhotoCards(fixture)
        let read = try await Self.writeTombstonesAndEdits(fixture, compacting: store)
        // Two versions of Anna, Bert and Erik, Carl's and Dora's written and deleted: each a
        // row, and at v18 the current ones (Anna's, Bert's, Erik's, Dora's deletion) are not.
        #expect(try await fixture.integer("SELECT count(*) FROM card_versions") == 6)
        try await store.pool.write { db in try Self.backToV17(db) }
        #expect(try await fixture.integer("SELECT count(*) FROM card_versions") == 10)
        let before = try await Self.state(of: store, book: fixture.book.id)
        let changesBefore = try await store.changes(collectionID: fixture.book.id, since: 0, limit: nil)
        try store.close()

        let upgraded = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? upgraded.close() }
        try await Self.checkCurrentVersionsInChanges(StoreFixture(sqlite: upgraded, book: fixture.book), rows: 6, before: before,
                                                     changesBefore: changesBefore, read: read, written: written)
    }

    // MARK: v17: the current version's text in the card alone (SQLite)

    @Test func anSQLiteHistoryFromV16DropsTheTextItsCardsHoldAndKeepsEveryVersion() async throws {
        let (folder, path, store, fixture) = try await Self.sqliteFile()
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try await Self.writePhotoCards(fixture)
        // Carl moved to "d" (his text still a card's, but under another name), Erik edited.
        let carl = CardHistoryTests.card("c", "Carl"), erik = [CardHistoryTests.card("e", "Erik"), CardHistoryTests.card("e", "Erik 2")]
        let put = try await CardHistoryTests.put(fixture, "c", carl, as: CardHistoryTests.phone)
        _ = try await fixture.cards.transferResource(collectionID: fixture.book.id, name: "c", sourceETag: put.etag,
                                                     to: fixture.book.id, name: "d", data: carl,
                                                     contentType: "text/vcard; charset=utf-8",
                                                     card: CardMetadata(uid: "c", kind: "individual", indexEntries: [], members: []),
                                                     move: true)
        for data in erik { try await CardHistoryTests.put(fixture, "e", data, as: CardHistoryTests.phone) }
        let history = try #require(fixture.store as? any CardHistoryStore)
        var versions: [String: [CardVersion]] = [:]
        for name in ["a", "b", "c", "d", "e"] { versions[name] = try await history.cardVersions(collectionID: fixture.book.id, name: name) }
        // Back to v16: every card's current text in the history too (its skeleton, as the
        // write path kept it), and the triggers that copied it.
        try await store.pool.write { db in
            try Self.backToV17(db)
            for row in try Row.fetchAll(db, sql: "SELECT r.etag, b.data FROM resources r JOIN resource_bodies b ON b.resource_id = r.id") {
                try db.execute(sql: "INSERT OR IGNORE INTO card_version_bodies (etag, data) VALUES (?, ?)",
                               arguments: [row[0] as String, VersionBody(row[1] as Data).skeleton])
            }
            try db.execute(sql: """
                DROP TRIGGER changes_keep_version_insert; DROP TRIGGER changes_keep_version_update;
                CREATE TRIGGER changes_keep_version_insert AFTER INSERT ON changes BEGIN \(SQLiteStore.keepVersionV14) END;
                CREATE TRIGGER changes_keep_version_update AFTER UPDATE ON changes BEGIN \(SQLiteStore.keepVersionV14) END;
                DELETE FROM grdb_migrations WHERE identifier = 'v17-current-version-body';
                """)
        }
        // Anna's first, Bert's first, Carl's (no card "c" holds it) and Erik's first; and
        // at v16 also Anna's, Bert's and Erik's current.
        #expect(try await fixture.integer("SELECT count(*) FROM card_version_bodies") == 7)
        let before = try await Self.state(of: store, book: fixture.book.id)
        try store.close()

        let upgraded = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? upgraded.close() }
        let upgradedFixture = StoreFixture(sqlite: upgraded, book: fixture.book)
        #expect(try await upgradedFixture.integer("SELECT count(*) FROM card_version_bodies") == 4)
        for (name, kept) in versions {
            #expect(try await upgraded.cardVersions(collectionID: fixture.book.id, name: name) == kept, "\(name)")
        }
        // A new card writes no history text; an edit keeps the text it replaces.
        try await CardHistoryTests.put(upgradedFixture, "f", CardHistoryTests.card("f", "Finn"), as: CardHistoryTests.phone)
        #expect(try await upgradedFixture.integer("SELECT count(*) FROM card_version_bodies") == 4)
        let erik3 = CardHistoryTests.card("e", "Erik 3")
        try await CardHistoryTests.put(upgradedFixture, "e", erik3, as: CardHistoryTests.phone)
        #expect(try await upgradedFixture.integer("SELECT count(*) FROM card_version_bodies") == 5)
        #expect(try await upgraded.cardVersions(collectionID: fixture.book.id, name: "e").map(\.data) == erik + [erik3])
        try await CardHistoryTests.delete(upgradedFixture, "e", as: CardHistoryTests.phone)
        try await CardHistoryTests.delete(upgradedFixture, "f", as: CardHistoryTests.phone)
        var after = before
        after.0.removeAll { $0.info.name == "e" }
        after.1 += 4
        #expect(try await Self.state(of: upgraded, book: fixture.book.id) == after)
        // Anna's and Bert's photos: Anna's is let go by an edit and kept.
        try await Self.checkPhotos(upgradedFixture, written: written, before: after)
    }

    /// Anna edited twice keeping her photo, Bert given a new one: the history holds Bert's
    /// first photo alone. Every version written, by card.
    static func writePhotoCards(_ fixture: StoreFixture) async throws -> [String: [Data]] {
        let written = [
            "a": [CardHistoryTests.photoCard("a", "Anna", photo: 1), CardHistoryTests.photoCard("a", "Anna 2", photo: 1)],
            "b": [CardHistoryTests.photoCard("b", "Bert", photo: 2), CardHistoryTests.photoCard("b", "Bert 2", photo: 3)],
        ]
        for name in ["a", "b"] {
            for data in written[name]! { try await CardHistoryTests.put(fixture, name, data, as: CardHistoryTests.phone) }
        }
        #expect(try await fixture.integer("SELECT count(*) FROM card_version_parts") == 1)
        return written
    }

    /// The photos the two cards hold now, which v14 kept in the history too.
    static func heldParts(_ written: [String: [Data]]) -> [VersionBody.Part] {
        written.values.flatMap { VersionBody($0.last!).parts }
    }

    static func checkPhotos(_ fixture: StoreFixture, written: [String: [Data]],
                            before: ([StoredResource], Int64)) async throws {
        #expect(try await state(of: fixture.store, book: fixture.book.id) == before)
        let history = try #require(fixture.store as? any CardHistoryStore)
        #expect(try await fixture.integer("SELECT count(*) FROM card_version_parts") == 1)
        for (name, versions) in written {
            #expect(try await history.cardVersions(collectionID: fixture.book.id, name: name).map(\.data) == versions, "\(name)")
        }
        // The upgraded store knows where the photos start: a write that drops Anna's keeps it.
        let plain = CardHistoryTests.card("a", "Anna plain")
        try await CardHistoryTests.put(fixture, "a", plain, as: CardHistoryTests.phone)
        #expect(try await fixture.integer("SELECT count(*) FROM card_version_parts") == 2)
        #expect(try await history.cardVersions(collectionID: fixture.book.id, name: "a").map(\.data) == written["a"]! + [plain])
    }
}
