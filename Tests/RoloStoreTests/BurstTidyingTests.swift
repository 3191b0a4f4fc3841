import Foundation
import PostgresNIO
import PostgresTestSupport
@testable import RoloPostgres
import RoloStore
import Synchronization
import Testing

/// After a burst of PUTs, PostgreSQL's tables are vacuumed (and, when the burst is a good
/// share of the cards, analysed) and the GIN pending lists merged, without waiting for
/// autovacuum (`BurstTidying`); fewer writes than the threshold leave them to it.
@Suite(.closesStores) struct BurstTidyingTests {
    /// `last_vacuum` and `last_analyze` count only VACUUMs and ANALYZEs run by a client (here
    /// Rolo), never autovacuum's, which has columns of its own.
    private static func lastVacuumAndAnalyze(_ store: PostgresStore) async throws -> (vacuum: Bool, analyze: Bool) {
        try await store.autocommit { connection in
            try await connection.execute("SELECT pg_stat_clear_snapshot()")
            let row = try await connection.first("""
                SELECT last_vacuum IS NOT NULL, last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'resources'
                """)
            return try row.map { try $0.decode((Bool, Bool).self) } ?? (false, false)
        }
    }

    private static func open(threshold: Int) async throws -> (StoreFixture, PostgresStore) {
        let database = try await TestDatabase.create()
        var configuration = try database.configuration()
        configuration.tidyAfterWrites = threshold
        let store = try await PostgresStore.open(configuration)
        try await store.createUser(name: "alice", password: "secret")
        let fixture = StoreFixture(backend: .postgres, store: store,
                                   book: try #require(try await store.collection(owner: "alice", path: ["default"])),
                                   cleanup: { await store.close(); await database.drop() })
        return (fixture, store)
    }

    @Test func aBurstOfPutsIsVacuumedAnalysedAndItsPendingTrigramsMerged() async throws {
        let (fixture, store) = try await Self.open(threshold: 30)
        defer { fixture.close() }
        #expect(store.usesTrigramIndex, "pg_trgm ships with Debian's server: the test server has the index")
        for index in 0..<40 { _ = try await fixture.put("c\(index).vcf", fn: "Person Number \(index)") }
        // Until the tidying is over: its VACUUM comes before its merge of the pending lists, and
        // on a slow machine the burst can take two tidyings (the writes after the first pause).
        // A batch counts its cards after it has answered them, so the last `put` can return
        // before its cards are counted and start another tidying: wait out a quiet pause since
        // the last count too (CI once saw the card index's list unmerged without it).
        let deadline = ContinuousClock.now + .seconds(60)
        var state = try await Self.lastVacuumAndAnalyze(store)
        while !(state.vacuum && state.analyze) || store.tidying.isRunning
                || ContinuousClock.now - store.tidying.lastWrite < BurstTidying.quiet * 2,
              ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            state = try await Self.lastVacuumAndAnalyze(store)
        }
        #expect(!store.tidying.isRunning)
        #expect(state.vacuum && state.analyze, "40 new cards in an empty database: vacuumed and analysed")
        // Nothing is left in the pending lists for a query to scan: merging them again finds
        // no page (a burst of 40 cards leaves some, far below the 4 MB that merges them by itself).
        let (listings, index) = try await store.autocommit { connection in
            try #require(try await connection.first("""
                SELECT gin_clean_pending_list('card_listings_trigrams'), gin_clean_pending_list('card_index_trigrams')
                """)).decode((Int64, Int64).self)
        }
        #expect(listings == 0 && index == 0)
    }

    /// Writes soon after a burst's tidying ended (a stall inside the burst looked like its
    /// end) are its tail: fewer than the threshold, they are tidied once more, but a tail's
    /// tidying arms no further one, so a trickle of writes is not tidied write by write.
    @Test func aBurstsTailIsTidiedOnceAfterIt() async throws {
        let tidying = BurstTidying(threshold: 3)
        let runs = Mutex(0)
        @Sendable func tidy() async {
            repeat {
                _ = tidying.take()
                runs.withLock { $0 += 1 }
            } while tidying.another()
        }
        func settled() async throws -> Int {
            let deadline = ContinuousClock.now + .seconds(30)
            while tidying.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            return runs.withLock { $0 }
        }
        tidying.wrote(2, tidy: tidy)
        #expect(try await settled() == 0, "under the threshold")
        tidying.wrote(1, tidy: tidy)
        #expect(try await settled() == 1, "the burst")
        tidying.wrote(1, tidy: tidy)
        #expect(try await settled() == 2, "its tail, though one card")
        tidying.wrote(1, tidy: tidy)
        #expect(try await settled() == 2, "not the tail's tail")
    }

    @Test func fewerWritesThanTheThresholdAreLeftToAutovacuum() async throws {
        let (fixture, store) = try await Self.open(threshold: 30)
        defer { fixture.close() }
        for index in 0..<20 { _ = try await fixture.put("c\(index).vcf", fn: "Person Number \(index)") }
        // Well past the pause that ends a burst (`BurstTidying.quiet`).
        try await Task.sleep(for: BurstTidying.quiet * 6)
        let state = try await Self.lastVacuumAndAnalyze(store)
        #expect(!state.vacuum && !state.analyze)
        // The pending lists still hold the burst's trigrams: the merge finds pages.
        let merged = try await store.autocommit { connection in
            try #require(try await connection.first("SELECT gin_clean_pending_list('card_index_trigrams')")).decode(Int64.self)
        }
        #expect(merged > 0)
    }
}
