import Foundation
import Testing
@testable import RoloSQLite
@testable import RoloStore

@Suite(.closesStores) struct ChangeLogTests {
    @Test(arguments: StoreBackend.cardBackends)
    func changesListTheLatestStatePerNameInSeqOrder(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let id = fixture.book.id
        try await fixture.put("a.vcf")                                      // 1
        try await fixture.put("b.vcf")                                      // 2
        let token = try await fixture.cards.collection(id: id)!.syncSeq
        try await fixture.put("a.vcf", fn: "Edited")                        // 3
        try await fixture.put("c.vcf")                                      // 4
        try await fixture.cards.deleteResource(collectionID: id, name: "b.vcf", precondition: .none) // 5
        try await fixture.put("a.vcf", fn: "Edited again")                  // 6
        let since = try await fixture.cards.changes(collectionID: id, since: token, limit: nil)
        #expect(since.changes == [
            .init(name: "c.vcf", deleted: false, seq: 4),
            .init(name: "b.vcf", deleted: true, seq: 5),
            .init(name: "a.vcf", deleted: false, seq: 6),
        ])
        #expect(since.newSeq == 6)
        #expect(!since.truncated)
        let none = try await fixture.cards.changes(collectionID: id, since: 6, limit: nil)
        #expect(none.changes.isEmpty && none.newSeq == 6)
    }

    /// A store that reads the changed cards with the changes (`ChangeSet.cards`) gives each
    /// one that still exists exactly as `resourceInfos` reads it, and no deleted one. PostgreSQL
    /// must: a sync of ETags answers from them without reading the cards again.
    @Test(arguments: StoreBackend.cardBackends)
    func cardsReadWithTheChangesAreTheStoresRows(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let id = fixture.book.id
        try await fixture.put("a.vcf")
        try await fixture.put("b.vcf")
        let token = try await fixture.cards.collection(id: id)!.syncSeq
        try await fixture.put("a.vcf", fn: "Edited")
        try await fixture.put("c.vcf")
        try await fixture.cards.deleteResource(collectionID: id, name: "b.vcf", precondition: .none)
        let since = try await fixture.cards.changes(collectionID: id, since: token, limit: nil)
        if backend == .postgres { #expect(since.cards != nil, "PostgreSQL reads the cards with the changes") }
        if let cards = since.cards {
            let current = try await fixture.cards.resourceInfos(collectionID: id, names: ["a.vcf", "c.vcf"])
            #expect(cards == Dictionary(uniqueKeysWithValues: current.map { ($0.name, $0) }))
        }
        let truncated = try await fixture.cards.changes(collectionID: id, since: 0, limit: 1)
        if let cards = truncated.cards {
            #expect(cards["b.vcf"] == nil && cards[truncated.changes[0].name] != nil)
        }
    }

    @Test(arguments: StoreBackend.cardBackends)
    func initialSyncLeavesOutDeletions(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await fixture.put("a.vcf")
        try await fixture.put("b.vcf")
        try await fixture.cards.deleteResource(collectionID: fixture.book.id, name: "a.vcf", precondition: .none)
        let initial = try await fixture.cards.changes(collectionID: fixture.book.id, since: 0, limit: nil)
        #expect(initial.changes.map(\.name) == ["b.vcf"])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func deleteThenRecreateShowsAsPut(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let id = fixture.book.id
        try await fixture.put("a.vcf")
        try await fixture.cards.deleteResource(collectionID: id, name: "a.vcf", precondition: .none)
        try await fixture.put("a.vcf", fn: "Back")
        let changes = try await fixture.cards.changes(collectionID: id, since: 1, limit: nil)
        #expect(changes.changes == [.init(name: "a.vcf", deleted: false, seq: 3)])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func limitTruncatesAndTheNewSeqContinues(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        for index in 0..<5 { try await fixture.put("c\(index).vcf") }
        let first = try await fixture.cards.changes(collectionID: fixture.book.id, since: 0, limit: 2)
        #expect(first.truncated && first.changes.map(\.name) == ["c0.vcf", "c1.vcf"] && first.newSeq == 2)
        let second = try await fixture.cards.changes(collectionID: fixture.book.id, since: first.newSeq, limit: 3)
        #expect(!second.truncated && second.changes.map(\.name) == ["c2.vcf", "c3.vcf", "c4.vcf"] && second.newSeq == 5)
    }

    @Test(arguments: StoreBackend.cardBackends)
    func futureTokenIsInvalid(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await fixture.put("a.vcf")
        await #expect(throws: StoreError.invalidSyncToken) {
            _ = try await fixture.cards.changes(collectionID: fixture.book.id, since: 2, limit: nil)
        }
        await #expect(throws: StoreError.invalidSyncToken) {
            _ = try await fixture.cards.changes(collectionID: fixture.book.id, since: -1, limit: nil)
        }
    }

    @Test(arguments: StoreBackend.cardBackends)
    func compactionMakesTokensBeforeDroppedTombstonesTooOld(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let id = fixture.book.id
        try await fixture.put("a.vcf")                                                        // 1
        try await fixture.put("b.vcf")                                                        // 2
        try await fixture.cards.deleteResource(collectionID: id, name: "a.vcf", precondition: .none) // 3
        try await fixture.put("c.vcf")                                                        // 4
        try await fixture.cards.compactChanges(olderThan: Date().addingTimeInterval(60))
        for old in [Int64(1), 2] {
            await #expect(throws: StoreError.syncTokenTooOld) {
                _ = try await fixture.cards.changes(collectionID: id, since: old, limit: nil)
            }
        }
        let fromThree = try await fixture.cards.changes(collectionID: id, since: 3, limit: nil)
        #expect(fromThree.changes.map(\.name) == ["c.vcf"])
        #expect(try await fixture.cards.changes(collectionID: id, since: 0, limit: nil).changes.map(\.name) == ["b.vcf", "c.vcf"])
        #expect(try await fixture.integrityCheck() == [])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func compactionKeepsRecentTombstones(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await fixture.put("a.vcf")
        try await fixture.cards.deleteResource(collectionID: fixture.book.id, name: "a.vcf", precondition: .none)
        try await fixture.cards.compactChanges(olderThan: Date().addingTimeInterval(-3600))
        let changes = try await fixture.cards.changes(collectionID: fixture.book.id, since: 1, limit: nil)
        #expect(changes.changes == [.init(name: "a.vcf", deleted: true, seq: 2)])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func plainCollectionsLogChangesToo(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let files = try await fixture.cards.createCollection(owner: "alice", path: ["files"], kind: .plain,
                                                             displayName: nil, description: nil)
        _ = try await fixture.cards.putResource(collectionID: files.id, name: "x.txt", data: Data("x".utf8),
                                                contentType: "text/plain", card: nil, precondition: .none)
        let changes = try await fixture.cards.changes(collectionID: files.id, since: 0, limit: nil)
        #expect(changes.changes == [.init(name: "x.txt", deleted: false, seq: 1)])
    }
}
