import Foundation
import GRDB
import Testing
@testable import RoloSQLite
@testable import RoloStore

@Suite struct IntegrityAndBackupTests {
    @Test func integrityCheckSpotsTamperedRows() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("a.vcf")
        try await fixture.put("b.vcf")
        try await fixture.put("c.vcf")
        #expect(try await fixture.sqlite.integrityCheck() == [])
        try await fixture.sqlite.pool.write { db in
            try db.execute(sql: "DELETE FROM resource_bodies WHERE resource_id = (SELECT id FROM resources WHERE name = 'c.vcf')")
            try db.execute(sql: "UPDATE resource_bodies SET data = X'00' WHERE resource_id = (SELECT id FROM resources WHERE name = 'a.vcf')")
            try db.execute(sql: "DELETE FROM changes WHERE name = 'b.vcf'")
        }
        let problems = try await fixture.sqlite.integrityCheck()
        #expect(problems.contains { $0.hasPrefix("ETag differs") && $0.hasSuffix("a.vcf") })
        #expect(problems.contains { $0.hasPrefix("size differs") })
        #expect(problems.contains { $0.hasPrefix("resource without its change row") && $0.hasSuffix("b.vcf") })
        #expect(problems.contains { $0.hasPrefix("resource without its body") && $0.hasSuffix("c.vcf") })
    }

    /// Index rows have no foreign key (it cost a lookup per insert): a trigger removes them
    /// with their resource, and the integrity check reports any left behind.
    @Test func deletingAResourceRemovesItsIndexRowsAndOrphansAreReported() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("a.vcf", extra: [IndexEntry(property: "EMAIL", value: "a@example.com")])
        try await fixture.put("b.vcf")
        try await fixture.sqlite.deleteResource(collectionID: fixture.book.id, name: "a.vcf", precondition: .none)
        let counts = try await fixture.sqlite.pool.read { db in
            try Int.fetchAll(db, sql: "SELECT COUNT(*) FROM \(SQLiteStore.allIndexEntries) GROUP BY resource_id ORDER BY resource_id")
        }
        #expect(counts == [2])
        #expect(try await fixture.sqlite.integrityCheck() == [])
        // Orphans in either table of entries (merged and pending).
        try await fixture.sqlite.pool.write { db in
            try db.execute(sql: """
                INSERT INTO card_index (resource_id, position, collection_id, property, value_unicode) VALUES (999, 0, ?, 'FN', 'x')
                """, arguments: [fixture.book.id])
            // A pending entry's key holds its resource (schema v19).
            try db.execute(sql: "INSERT INTO card_index_pending (id, collection_id, property, value_unicode) VALUES (?, ?, 'FN', 'x')",
                           arguments: [try SQLiteStore.pendingEntryID(resource: 998, position: 0), fixture.book.id])
        }
        // The merged orphan has no trigram row either (schema v7).
        #expect(Set(try await fixture.sqlite.integrityCheck())
            == ["index row of a missing resource: 999", "index row of a missing resource: 998",
                "merged index row missing from the trigram index: 999"])
    }

    @Test func backupIsAConsistentOpenableCopy() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("a.vcf", fn: "Backed up")
        let target = FileManager.default.temporaryDirectory
            .appendingPathComponent("rolo-backup-\(UUID().uuidString)/copy.sqlite").path
        try fixture.sqlite.backup(to: target)
        let copy = try SQLiteStore(path: target, bcryptCost: 4)
        defer {
            try? copy.close()
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: target).deletingLastPathComponent().path)
        }
        #expect(try await copy.verifyPassword(user: "alice", password: "secret"))
        let book = try #require(try await copy.collection(owner: "alice", path: ["default"]))
        #expect(try await copy.resource(collectionID: book.id, name: "a.vcf")?.data == Data(vcard(uid: "a.vcf", fn: "Backed up").utf8))
        #expect(try await copy.integrityCheck() == [])
    }

    @Test func reopeningKeepsDataAndTemporaryStoresCleanUp() async throws {
        let store = try SQLiteStore.temporary()
        let path = store.path
        try await store.createUser(name: "bob", password: "pw")
        #expect(FileManager.default.fileExists(atPath: path))
        try store.close()
        #expect(!FileManager.default.fileExists(atPath: path))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-reopen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("nested/dir/rolo.sqlite").path
        let first = try SQLiteStore(path: file, bcryptCost: 4)
        try await first.createUser(name: "carol", password: "pw")
        try first.close()
        let second = try SQLiteStore(path: file, bcryptCost: 4)
        defer { try? second.close() }
        #expect(try await second.listUsers() == ["carol"])
    }

    /// A store closed last leaves its database as one file (a `rolo backup` from PostgreSQL
    /// renames its finished copy, and left the log's two files behind under the old name);
    /// closed while another connection still has the file, it leaves the log to that one.
    @Test func aStoreClosedLastLeavesOneFileAndNeverTakesTheLogFromAnotherConnection() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-close-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("rolo.sqlite").path
        func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() }

        let alone = try SQLiteStore(path: file, bcryptCost: 4)
        try await alone.createUser(name: "dana", password: "pw")
        // A read through the pool opens one of its read-only connections, which GRDB closes last.
        #expect(try await alone.listUsers() == ["dana"])
        #expect(try files() == ["rolo.sqlite", "rolo.sqlite-shm", "rolo.sqlite-wal"])
        try alone.close()
        #expect(try files() == ["rolo.sqlite"])

        // Another connection (another process's, as far as SQLite can tell) reading the file.
        let other = try DatabaseQueue(path: file)
        defer { try? other.close() }
        let shared = try SQLiteStore(path: file, bcryptCost: 4)
        try await shared.createUser(name: "erin", password: "pw")
        func usersSeenByTheOther() throws -> [String] {
            try other.read { db in try String.fetchAll(db, sql: "SELECT name FROM users ORDER BY name") }
        }
        #expect(try usersSeenByTheOther() == ["dana", "erin"])
        try shared.close()
        #expect(try files() == ["rolo.sqlite", "rolo.sqlite-shm", "rolo.sqlite-wal"])
        #expect(try usersSeenByTheOther() == ["dana", "erin"])
    }
}
