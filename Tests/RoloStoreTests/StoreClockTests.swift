import Foundation
@testable import RoloStore
import Testing

/// The injected clock: a fixed one stamps every user, collection, resource and change row
/// with its instant, and leaves other stores on wall-clock time.
@Suite(.closesStores) struct StoreClockTests {
    @Test(arguments: StoreBackend.allCases)
    func aFixedClockStampsCollectionsResourcesAndImports(_ backend: StoreBackend) async throws {
        let epoch = StoreClock.deterministicEpoch
        let (store, cleanup) = try await StoreFixture.openStore(backend, clock: .fixed())
        defer { StoreCleanups.schedule(cleanup) }
        try await store.createUser(name: "ann", password: "pw")
        let book = try #require(try await store.collection(owner: "ann", path: ["default"]))
        #expect(book.created == epoch && book.modified == epoch)
        #expect(try await store.account(name: "ann")?.created == epoch)

        let card = CardMetadata(uid: "u1", kind: "individual", indexEntries: [], members: [])
        _ = try await store.putResource(collectionID: book.id, name: "u1.vcf", data: Data(vcard(uid: "u1", fn: "One").utf8),
                                        contentType: "text/vcard", card: card, precondition: .none)
        try await store.importCards(collectionID: book.id, cards: [
            CardImport(name: "u2.vcf", data: Data(vcard(uid: "u2", fn: "Two").utf8),
                       card: CardMetadata(uid: "u2", kind: "individual", indexEntries: [], members: [])),
        ], batchSize: 1, progress: nil)
        let modified = try await store.listResources(collectionID: book.id).map(\.modified)
        #expect(modified == [epoch, epoch])
        #expect(try await store.collection(id: book.id)?.modified == epoch)
    }

    @Test(arguments: StoreBackend.allCases)
    func theSystemClockIsTheDefault(_ backend: StoreBackend) async throws {
        let (store, cleanup) = try await StoreFixture.openStore(backend)
        defer { StoreCleanups.schedule(cleanup) }
        let before = Date()
        try await store.createUser(name: "ann", password: "pw")
        let book = try #require(try await store.collection(owner: "ann", path: ["default"]))
        #expect(abs(book.created.timeIntervalSince(before)) < 60)
    }
}
