import GRDB
import Testing
@testable import RoloSQLite
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

    @Test func theWriterCheckpointsTheLogOnlyOnceItHoldsTheTunedBytes() async throws {
        let store = try SQLiteStore.temporary(tuning: SQLiteStore.Tuning(checkpointBytes: 8 << 20))
        defer { try? store.close() }
        let pageSize = try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA page_size") }
        #expect(pageSize == 4096)
        // The writer's WAL hook checkpoints in SQLite's place (`WriterCommits`).
        #expect(store.writerCommits.checkpointPages == 2048)
        let defaultStore = try SQLiteStore.temporary()
        defer { try? defaultStore.close() }
        let defaultPages = Int(defaultStore.writerCommits.checkpointPages)
        #expect(defaultPages == SQLiteStore.Tuning.default.checkpointBytes / 4096)
        #expect(defaultPages > 1000)
    }
}
