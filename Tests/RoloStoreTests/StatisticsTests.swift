import Foundation
import Testing
@testable import RoloStore

/// `statistics()` is what `/metrics` and the admin page show, on every back end.
@Suite(.closesStores) struct StatisticsTests {
    @Test(arguments: StoreBackend.allCases)
    func statisticsCountTheStoreAndSayHowBigTheDatabaseIs(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await fixture.put("a.vcf")
        try await fixture.put("b.vcf")
        let statistics = try await fixture.store.statistics()
        #expect(statistics.users == 1)
        #expect(statistics.addressBooks == 1)
        #expect(statistics.cards == 2)
        // A database holding a schema and two cards takes some pages on either back end
        // (the PostgreSQL gauge used to stay 0).
        let bytes = try #require(statistics.databaseBytes)
        #expect(bytes > 4096)
    }
}
