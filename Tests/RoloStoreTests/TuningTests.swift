import Foundation
import GRDB
import Testing
@testable import RoloStore

@Suite struct TuningTests {
    @Test func tuningSetsTheWriterAndReaderCachesTheMapAndTheReaderCount() async throws {
        let tuning = SQLiteStore.Tuning(writerCacheKiB: 12_288, readerCacheKiB: 1_024, mmapBytes: 1_048_576, maximumReaders: 2)
        let store = try SQLiteStore.temporary(tuning: tuning)
        defer { try? store.close() }
        let writer = try await store.pool.write { db in
            (try Int.fetchOne(db, sql: "PRAGMA cache_size"), try Int.fetchOne(db, sql: "PRAGMA mmap_size"))
        }
        let reader = try await store.pool.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA cache_size"), try Int.fetchOne(db, sql: "PRAGMA mmap_size"))
        }
        #expect(writer.0 == -12_288 && writer.1 == 1_048_576)
        #expect(reader.0 == -1_024 && reader.1 == 1_048_576)
        #expect(store.pool.configuration.maximumReaderCount == 2)
    }

    @Test func defaultsMapNothingAndGiveReadersSmallerCachesThanTheWriter() {
        let tuning = SQLiteStore.Tuning.default
        #expect(tuning.mmapBytes == 0)
        #expect(tuning.readerCacheKiB < tuning.writerCacheKiB)
        #expect(tuning.maximumReaders >= 2)
    }

    @Test func aNewDatabaseGetsTheTunedPageSizeAndStaysInWriteAheadLogMode() async throws {
        for pageSize in [1024, SQLiteStore.Tuning.default.pageSizeBytes] {
            let store = try SQLiteStore.temporary(tuning: SQLiteStore.Tuning(pageSizeBytes: pageSize))
            defer { try? store.close() }
            let (size, journal) = try await store.pool.read { db in
                (try Int.fetchOne(db, sql: "PRAGMA page_size"), try String.fetchOne(db, sql: "PRAGMA journal_mode"))
            }
            #expect(size == pageSize)
            #expect(journal == "wal")
        }
        #expect(SQLiteStore.Tuning.default.pageSizeBytes == 2048)
    }

    @Test func theWriterCheckpointsTheLogOnlyOnceItHoldsTheTunedBytes() async throws {
        let store = try SQLiteStore.temporary(tuning: SQLiteStore.Tuning(pageSizeBytes: 2048, checkpointBytes: 8 << 20))
        defer { try? store.close() }
        let pages = try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
        #expect(pages == 4096)
        let defaultStore = try SQLiteStore.temporary()
        defer { try? defaultStore.close() }
        let defaultPages = try await defaultStore.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
        #expect(defaultPages == SQLiteStore.Tuning.default.checkpointBytes / SQLiteStore.Tuning.default.pageSizeBytes)
        #expect(defaultPages ?? 0 > 1000)
    }

    @Test func anExistingDatabaseKeepsThePageSizeItWasCreatedWith() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-pages-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("rolo.sqlite").path
        let first = try SQLiteStore(path: path, bcryptCost: 4, tuning: SQLiteStore.Tuning(pageSizeBytes: 4096))
        try await first.createUser(name: "alice", password: "pw")
        try first.close()
        let reopened = try SQLiteStore(path: path, bcryptCost: 4, tuning: SQLiteStore.Tuning(pageSizeBytes: 1024))
        defer { try? reopened.close() }
        let size = try await reopened.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") }
        #expect(size == 4096)
        #expect(try await reopened.verifyPassword(user: "alice", password: "pw"))
    }
}
