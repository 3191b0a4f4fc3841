import Foundation
import PostgresTestSupport
import ProcessLaunch
import RoloSQLite
import RoloStore
import Testing

/// "A restore that fails half way changes nothing" (issue 31), with the real binary: `rolo
/// restore` of a 5,000-card book killed with SIGKILL inside its transaction leaves the book
/// exactly as it was, cards, ETags, change log and sync token, on SQLite and PostgreSQL.
@Suite struct RestoreInterruptionTests {
    static func card(_ number: Int, tel: String) -> String {
        "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:undo-\(number)\r\nFN:Person \(number)\r\nN:\(number);Person;;;\r\n"
            + "EMAIL:person\(number)@example.org\r\nTEL;TYPE=cell:\(tel)\(number)\r\nEND:VCARD\r\n"
    }

    /// What clients can tell of the book: every card with its ETag and bytes, the change log
    /// and the sync token.
    struct BookState: Equatable {
        var cards: [StoredResource]
        var changes: ChangeSet
        var syncSeq: Int64
    }

    static func state(_ database: String) async throws -> BookState {
        let store = try SQLiteStore(path: database, bcryptCost: 4)
        defer { try? store.close() }
        let book = try #require(try await store.collection(owner: "undo", path: ["default"]))
        return BookState(cards: try await store.allResources(collectionID: book.id),
                         changes: try await store.changes(collectionID: book.id, since: 0, limit: nil), syncSeq: book.syncSeq)
    }

    /// True while some process holds SQLite's WAL write lock on `database` (byte 120 of its
    /// `-shm` file, an fcntl lock held from a write transaction's BEGIN to its end). This
    /// process must hold no lock on that file: it has no connection open to it.
    static func writeLockHeld(_ database: String) -> Bool {
        let descriptor = open(database + "-shm", O_RDWR)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 120
        lock.l_len = 1
        guard fcntl(descriptor, F_GETLK, &lock) == 0 else { return false }
        return lock.l_type != Int16(F_UNLCK)
    }

    /// A user `undo` whose `count` cards were all changed by a second import after the time
    /// returned; merged and checkpointed by `rolo check`, so a restore's process finds no
    /// index entries to merge when it opens the store: the only write it makes is the restore's.
    static func bookChangedAfterAStamp(_ database: String, in folder: URL, count: Int) async throws -> String {
        let db = ["--database", database]
        let added = try await RoloBinary.run(["user", "add", "undo", "--password-stdin", "--create-database"] + db,
                                             stdin: "undo-password\n")
        #expect(added.status == 0, "\(added.stderr)")
        let first = folder.appendingPathComponent("first.vcf"), second = folder.appendingPathComponent("second.vcf")
        try (1...count).map { Self.card($0, tel: "+49 170 ") }.joined().write(to: first, atomically: true, encoding: .utf8)
        try (1...count).map { Self.card($0, tel: "+49 171 ") }.joined().write(to: second, atomically: true, encoding: .utf8)
        #expect(try await RoloBinary.run(["import", "undo", "default", first.path] + db).status == 0)
        try await Task.sleep(for: .milliseconds(1200))
        let stamp = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)).formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
        try await Task.sleep(for: .milliseconds(1200))
        #expect(try await RoloBinary.run(["import", "undo", "default", second.path] + db).status == 0)
        #expect(try await RoloBinary.run(["check"] + db).status == 0)
        return stamp
    }

    /// Starts `rolo restore`, and from a plain thread (a busy cooperative pool could let the
    /// restore finish first) kills it once its "restoring" line is out and `insideTransaction`
    /// says its transaction runs. Checks it died by the signal, having restored nothing.
    static func restoreKilledInsideItsTransaction(_ database: String, stamp: String,
                                                  insideTransaction: @escaping @Sendable () -> Bool) async throws {
        let restoring = try ServeProcess(arguments: ["restore", "undo", "default", "--to", stamp, "--database", database])
        let killed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread.detachNewThread {
                while restoring.process.isRunning {
                    if restoring.stderr.current.contains("restoring "), insideTransaction() {
                        restoring.process.send(SIGKILL)
                        continuation.resume(returning: true)
                        return
                    }
                    usleep(500)
                }
                continuation.resume(returning: false)
            }
        }
        #expect(killed, "the restore ended before it could be killed: \(restoring.stderr.current)")
        _ = await restoring.terminate()
        #expect(restoring.process.terminationReason == .uncaughtSignal)
        #expect(!restoring.stdout.current.contains("Restored "), "\(restoring.stdout.current.suffix(300))")
    }

    /// The same restore, not interrupted, does what it was asked.
    static func restoreToTheEnd(_ database: String, stamp: String, count: Int) async throws {
        let restored = try await RoloBinary.run(["restore", "undo", "default", "--to", stamp, "--database", database])
        #expect(restored.stdout.contains("Restored \(count) cards of undo/default; 0 conflicts left alone."), "\(restored.stderr)")
        let exported = try await RoloBinary.run(["export", "undo", "default", "--database", database]).stdout
        #expect(exported.components(separatedBy: "+49 170 ").count == count + 1)
        #expect(!exported.contains("+49 171 "))
    }

    @Test func aRestoreKilledInsideItsTransactionLeavesTheBookAsItWas() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let count = 5_000
        let stamp = try await Self.bookChangedAfterAStamp(database, in: folder, count: count)
        let before = try await Self.state(database)
        #expect(before.cards.count == count)

        try await Self.restoreKilledInsideItsTransaction(database, stamp: stamp) { Self.writeLockHeld(database) }
        let check = try await RoloBinary.run(["check", "--database", database])
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
        #expect(try await Self.state(database) == before)

        try await Self.restoreToTheEnd(database, stamp: stamp, count: count)
        let after = try await Self.state(database)
        #expect(after.syncSeq == before.syncSeq + Int64(count))
    }

    /// One statement through psql: its rows, unaligned, without headers.
    static func psql(_ url: String, _ sql: String) -> String {
        guard let child = try? SpawnedProcess("/usr/bin/psql", ["-X", "-q", "-A", "-t", url, "-c", sql],
                                              stdin: .null, stdout: .pipe, stderr: .null) else { return "" }
        let output = readToEnd(child.standardOutput!)
        child.waitUntilExit()
        return String(decoding: output, as: UTF8.self)
    }

    /// The book as clients can tell it, from PostgreSQL's tables: cards with ETags and a
    /// hash of their bytes, the change log, the sync token.
    static func postgresState(_ url: String) -> String {
        psql(url, """
            SELECT r.name || ' ' || r.etag || ' ' || md5(r.data) FROM resources r JOIN collections c ON c.id = r.collection_id
            WHERE c.path = 'default' ORDER BY r.name
            """) + psql(url, """
            SELECT ch.seq || ' ' || ch.name || ' ' || ch.deleted FROM changes ch JOIN collections c ON c.id = ch.collection_id
            WHERE c.path = 'default' ORDER BY ch.seq
            """) + psql(url, "SELECT sync_seq FROM collections WHERE path = 'default'")
    }

    /// On PostgreSQL the restore is killed once its connection holds a transaction that has
    /// written (`backend_xid` is set from the first write to the end).
    @Test func aRestoreKilledInsideItsTransactionLeavesAPostgreSQLBookAsItWas() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-undo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try await TestDatabase.create()
        do {
            // Fewer cards than on SQLite: PostgreSQL's imports and restores take most of the
            // test's time, and 1,500 ordinary writes still keep the transaction open for the
            // poll (a psql spawn, tens of milliseconds) to find it.
            let count = 1_500
            let stamp = try await Self.bookChangedAfterAStamp(database.url, in: folder, count: count)
            let before = Self.postgresState(database.url)
            #expect(before.components(separatedBy: "\n").count > count)

            let url = database.url
            try await Self.restoreKilledInsideItsTransaction(url, stamp: stamp) {
                Self.psql(url, """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE datname = current_database() AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()
                    """).trimmingCharacters(in: .whitespacesAndNewlines) != "0"
            }
            // The server ends the killed connection's transaction: wait until no write is open.
            for _ in 0..<200 where Self.psql(url, """
                SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
                    AND backend_xid IS NOT NULL
                """).trimmingCharacters(in: .whitespacesAndNewlines) != "0" {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(Self.postgresState(url) == before)
            try await Self.restoreToTheEnd(url, stamp: stamp, count: count)
        } catch {
            await database.drop()
            throw error
        }
        await database.drop()
    }
}
