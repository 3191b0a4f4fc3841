import Foundation
import GRDB
import GRDBSQLite
import Testing
@testable import RoloSQLite

/// The VFS that writes a transaction's WAL frames in one go (`CSQLiteConfig`,
/// WALWriteCombining.c): whatever SQLite wrote must be in the WAL file whenever another
/// connection, or recovery after a crash, could read it.
@Suite struct WALWriteCombiningTests {
    private func temporaryPath() throws -> (folder: URL, path: String) {
        _ = SQLiteStore.processSettings
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (folder, folder.appendingPathComponent("wal.sqlite").path)
    }

    /// A writer with a page cache of a few pages: a transaction's pages spill to the WAL
    /// before its commit. `synchronous` as given (the barrier before a commit is published
    /// is what writes the frames out when nothing syncs).
    private func writer(_ path: String, synchronous: String = "FULL") throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; PRAGMA cache_size = 8")
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
        return queue
    }

    private func blob(_ row: Int) -> Data { Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ row) }) }

    private func integrity(_ path: String) throws -> (check: String, rows: Int, bytes: Int) {
        let reader = try DatabaseQueue(path: path)
        defer { try? reader.close() }
        return try reader.read { db in
            (try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "",
             try Int.fetchOne(db, sql: "SELECT count(*) FROM t") ?? -1,
             try Int.fetchOne(db, sql: "SELECT coalesce(sum(length(b)), 0) FROM t") ?? -1)
        }
    }

    /// Every connection the store opens (GRDB passes no VFS name) goes through it.
    @Test func theStoresSettingsMakeItSQLitesDefaultVFS() {
        _ = SQLiteStore.processSettings
        let name = sqlite3_vfs_find(nil).map { String(cString: $0.pointee.zName) }
        #expect(name == "rolo-wal-combining")
    }

    @Test func aCommitOfMoreThanOneWritesWorthOfFramesReachesAnotherConnectionWhole() throws {
        let (folder, path) = try temporaryPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = try writer(path)
        // About 600 frames (2.4 MB): past the 1 MiB the WAL keeps back and past the 128 KiB
        // the default VFS writes at once.
        try writer.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)")
            for row in 0..<800 { try db.execute(sql: "INSERT INTO t (id, b) VALUES (?, ?)", arguments: [row, blob(row)]) }
        }
        let seen = try integrity(path)
        #expect(seen.check == "ok")
        #expect(seen.rows == 800)
        #expect(seen.bytes == 800 * 3000)
        let other = try DatabaseQueue(path: path)
        let sample = try other.read { db in try Data.fetchOne(db, sql: "SELECT b FROM t WHERE id = 517") }
        #expect(sample == blob(517))
        try other.close()
        try writer.close()
    }

    /// Spilled frames of a transaction that rolled back must be written (or dropped) before
    /// another connection commits at the same offsets: written later, they would land on its
    /// frames. (SQLite's rollback reads the WAL, which writes them out already; giving up the
    /// write lock would too.)
    @Test func framesOfARolledBackTransactionNeverOverwriteTheNextWritersCommit() throws {
        let (folder, path) = try temporaryPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try writer(path)
        try first.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)") }
        try first.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            // About 100 frames spilled: under the 1 MiB kept back, so all still waiting.
            for row in 0..<100 { try db.execute(sql: "INSERT INTO t (id, b) VALUES (?, ?)", arguments: [row, blob(row)]) }
            try db.execute(sql: "ROLLBACK")
        }
        let second = try writer(path)
        try second.write { db in
            for row in 1000..<1040 { try db.execute(sql: "INSERT INTO t (id, b) VALUES (?, ?)", arguments: [row, blob(row)]) }
        }
        try first.write { db in try db.execute(sql: "INSERT INTO t (id, b) VALUES (?, ?)", arguments: [2000, blob(2000)]) }
        let seen = try integrity(path)
        #expect(seen.check == "ok")
        #expect(seen.rows == 41)
        #expect(seen.bytes == 41 * 3000)
        try first.close()
        try second.close()
    }

    /// With `synchronous = OFF` no sync writes the WAL out, and a page written twice after
    /// a spill has its frame headers rewritten after the commit frame, the commit frame's
    /// last: what is in the file when the commit returns must be a WAL that recovery accepts
    /// whole. (Without the barrier's and the unlock's flush, recovery found no row.)
    @Test func theWALOnDiskWhenACommitReturnsRecoversEveryRowWithoutASync() throws {
        let (folder, path) = try temporaryPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = try writer(path, synchronous: "OFF")
        try writer.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)") }
        try writer.write { db in
            for row in 0..<200 { try db.execute(sql: "INSERT INTO t (id, b) VALUES (?, ?)", arguments: [row, blob(row)]) }
            // The same pages again, after they spilled.
            for row in 0..<200 { try db.execute(sql: "UPDATE t SET b = ? WHERE id = ?", arguments: [blob(row + 7), row]) }
        }
        // A copy of the files as they are now, opened alone: SQLite rebuilds the wal-index
        // from the WAL, checking every frame's checksum.
        let copy = folder.appendingPathComponent("copy")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy.appendingPathComponent("wal.sqlite" + suffix).path)
        }
        let recovered = try integrity(copy.appendingPathComponent("wal.sqlite").path)
        #expect(recovered.check == "ok")
        #expect(recovered.rows == 200)
        let reader = try DatabaseQueue(path: copy.appendingPathComponent("wal.sqlite").path)
        let sample = try reader.read { db in try Data.fetchOne(db, sql: "SELECT b FROM t WHERE id = 150") }
        #expect(sample == blob(157))
        try reader.close()
        try writer.close()
    }
}
