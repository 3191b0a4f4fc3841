import Foundation
import Testing
@testable import RoloSQLite
@testable import RoloStore

@Suite(.closesStores) struct ImportTests {
    static func card(_ name: String, uid: String, fn: String) -> CardImport {
        CardImport(name: name, data: Data(vcard(uid: uid, fn: fn).utf8),
                   card: CardMetadata(uid: uid, kind: "individual", indexEntries: [IndexEntry(property: "FN", value: fn)], members: []))
    }

    @Test(arguments: StoreBackend.cardBackends)
    func importWritesEveryCardInBatchesAndReportsProgress(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let cards = (0..<250).map { Self.card("c\($0).vcf", uid: "u\($0)", fn: "Person \($0)") }
        let reports = Reports()
        try await fixture.cards.importCards(collectionID: fixture.book.id, cards: cards, batchSize: 100) { reports.append($0) }
        #expect(reports.values == [100, 200, 250])
        #expect(try await fixture.cards.listResources(collectionID: fixture.book.id).count == 250)
        #expect(try await fixture.cards.collection(id: fixture.book.id)?.syncSeq == 250)
        let found = try await fixture.cards.query(collectionID: fixture.book.id,
                                                  predicate: .textMatch(property: "FN", text: "person 249", collation: .asciiCasemap,
                                                                        match: .equals, negate: false), limit: nil)
        #expect(found == ["c249.vcf"])
        #expect(try await fixture.integrityCheck() == [])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func importReplacesSameNameAndMovesAnExistingUID(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let id = fixture.book.id
        try await fixture.put("same.vcf", uid: "s")
        try await fixture.put("old-name.vcf", uid: "moved")
        try await fixture.cards.importCards(collectionID: id, cards: [
            Self.card("same.vcf", uid: "s", fn: "Replaced"),
            Self.card("new-name.vcf", uid: "moved", fn: "Moved"),
        ], batchSize: 10, progress: nil)
        #expect(try await fixture.cards.listResources(collectionID: id).map(\.name) == ["new-name.vcf", "same.vcf"])
        #expect(try await fixture.cards.resource(collectionID: id, name: "same.vcf")?.data == Data(vcard(uid: "s", fn: "Replaced").utf8))
        #expect(try await fixture.cards.resourceName(collectionID: id, uid: "moved") == "new-name.vcf")
        let changes = try await fixture.cards.changes(collectionID: id, since: 2, limit: nil)
        #expect(changes.changes.map(\.name) == ["same.vcf", "old-name.vcf", "new-name.vcf"])
        #expect(changes.changes.map(\.deleted) == [false, true, false])
        #expect(try await fixture.integrityCheck() == [])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func withinOneBatchALaterCardReplacesAnEarlierOneWithItsNameOrUID(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let id = fixture.book.id
        try await fixture.cards.importCards(collectionID: id, cards: [
            Self.card("a.vcf", uid: "ua", fn: "First A"),
            Self.card("b.vcf", uid: "ub", fn: "B"),
            Self.card("a.vcf", uid: "ua", fn: "Second A"),
            Self.card("b2.vcf", uid: "ub", fn: "B moved"),
        ], batchSize: 10, progress: nil)
        #expect(try await fixture.cards.listResources(collectionID: id).map(\.name) == ["a.vcf", "b2.vcf"])
        #expect(try await fixture.cards.resource(collectionID: id, name: "a.vcf")?.data == Data(vcard(uid: "ua", fn: "Second A").utf8))
        let fnFirst = IndexPredicate.textMatch(property: "FN", text: "first", collation: .asciiCasemap, match: .contains, negate: false)
        #expect(try await fixture.cards.query(collectionID: id, predicate: fnFirst, limit: nil).isEmpty)
        let changes = try await fixture.cards.changes(collectionID: id, since: 0, limit: nil)
        #expect(changes.changes.map(\.name) == ["a.vcf", "b2.vcf"])
        #expect(try await fixture.cards.collection(id: id)?.syncSeq == 5)
        #expect(try await fixture.integrityCheck() == [])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func batchesPreparedAheadAreWrittenInOrder(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        // Enough cards per batch to be prepared in parallel chunks, and several batches.
        let cards = (0..<3000).map { Self.card("c\($0).vcf", uid: "u\($0 % 2500)", fn: "Person \($0)") }
        try await fixture.cards.importCards(collectionID: fixture.book.id, cards: cards, batchSize: 1200, progress: nil)
        let listed = try await fixture.cards.listResources(collectionID: fixture.book.id)
        // Cards 2500..<3000 reuse the UIDs of cards 0..<500, which they replace.
        #expect(listed.count == 2500)
        #expect(try await fixture.cards.resourceName(collectionID: fixture.book.id, uid: "u7") == "c2507.vcf")
        #expect(try await fixture.cards.resourceName(collectionID: fixture.book.id, uid: "u600") == "c600.vcf")
        #expect(try await fixture.integrityCheck() == [])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func anInvalidNameImportsNothing(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        await #expect(throws: StoreError.self) {
            try await fixture.cards.importCards(collectionID: fixture.book.id,
                                                cards: [Self.card("ok.vcf", uid: "1", fn: "a"), Self.card("bad/name", uid: "2", fn: "b")],
                                                batchSize: 10, progress: nil)
        }
        #expect(try await fixture.cards.listResources(collectionID: fixture.book.id).isEmpty)
    }
}

/// Progress values collected from a `@Sendable` callback.
final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Int] = []
    func append(_ value: Int) { lock.withLock { storage.append(value) } }
    var values: [Int] { lock.withLock { storage } }
}
