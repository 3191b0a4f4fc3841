import Foundation
import Testing
@testable import RoloSQLite
@testable import RoloStore
import RoloStoreTesting

@Suite(.closesStores) struct CollectionTests {
    @Test(arguments: StoreBackend.cardBackends)
    func collectionsNestOnlyAsPlainUnderPlain(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.cards
        let files = try await store.createCollection(owner: "alice", path: ["files"], kind: .plain,
                                                     displayName: "Files", description: "misc")
        let sub = try await store.createCollection(owner: "alice", path: ["files", "sub"], kind: .plain,
                                                   displayName: nil, description: nil)
        #expect(sub.path == ["files", "sub"])
        #expect(try await store.collection(owner: "alice", path: ["files", "sub"])?.id == sub.id)
        #expect(try await store.collection(id: files.id)?.description == "misc")
        await #expect(throws: StoreError.self) {
            try await store.createCollection(owner: "alice", path: ["files", "book"], kind: .addressBook,
                                             displayName: nil, description: nil)
        }
        await #expect(throws: StoreError.self) {
            try await store.createCollection(owner: "alice", path: ["default", "inner"], kind: .plain,
                                             displayName: nil, description: nil)
        }
        await #expect(throws: StoreError.parentNotFound) {
            try await store.createCollection(owner: "alice", path: ["nowhere", "x"], kind: .plain,
                                             displayName: nil, description: nil)
        }
        await #expect(throws: StoreError.alreadyExists) {
            try await store.createCollection(owner: "alice", path: ["files"], kind: .plain, displayName: nil, description: nil)
        }
        await #expect(throws: StoreError.noSuchUser) {
            try await store.createCollection(owner: "zed", path: ["x"], kind: .plain, displayName: nil, description: nil)
        }
        let home = try await store.childCollections(owner: "alice", parentPath: [])
        #expect(home.map(\.path) == [["default"], ["files"]])
        #expect(try await store.childCollections(owner: "alice", parentPath: ["files"]).map(\.id) == [sub.id])
    }

    /// A REPORT looks its book up once, with the request, and reads the cards by that id:
    /// a book deleted in between reads as empty (every href of a multiget 404, a query no
    /// card), never as an error or another book's cards.
    @Test(arguments: StoreBackend.cardBackends)
    func aDeletedBooksIdReadsAsAnEmptyBook(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.cards
        let book = try await store.createCollection(owner: "alice", path: ["work"], kind: .addressBook,
                                                    displayName: nil, description: nil)
        for name in ["a.vcf", "b.vcf"] {
            let data = Data(vcard(uid: name, fn: "Maja Lindqvist").utf8)
            try await store.putResource(collectionID: book.id, name: name, data: data, contentType: "text/vcard",
                                        card: CardMetadata(uid: name, kind: "individual",
                                                           indexEntries: [IndexEntry(property: "FN", value: "Maja Lindqvist")],
                                                           members: []),
                                        precondition: .none)
        }
        try await fixture.put("a.vcf", fn: "Maja Lindqvist")
        #expect(try await store.resources(collectionID: book.id, names: ["a.vcf", "b.vcf"], bodyLimit: 1 << 16).count == 2)
        try await store.deleteCollection(id: book.id)
        #expect(try await store.resources(collectionID: book.id, names: ["a.vcf", "b.vcf"], bodyLimit: 1 << 16).isEmpty)
        #expect(try await store.resourceInfos(collectionID: book.id, names: ["a.vcf", "b.vcf"]).isEmpty)
        #expect(try await store.resourceCount(collectionID: book.id, cap: 10) == 0)
        let lindqvist = IndexPredicate.textMatch(property: "FN", text: "lindqvist", collation: .unicodeCasemap,
                                                 match: .contains, negate: false)
        #expect(try await store.query(collectionID: book.id, predicate: lindqvist, limit: nil).isEmpty)
        // The other book's card of the same name is untouched.
        #expect(try await store.query(collectionID: fixture.book.id, predicate: lindqvist, limit: nil) == ["a.vcf"])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func collectionNamesAreValidated(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        for bad in ["", ".", "..", "a/b", "x\0y", String(repeating: "é", count: 200)] {
            await #expect(throws: StoreError.self) {
                try await fixture.cards.createCollection(owner: "alice", path: [bad], kind: .plain,
                                                         displayName: nil, description: nil)
            }
        }
        #expect(try await fixture.cards.childCollections(owner: "alice", parentPath: []).count == 1)
    }

    @Test(arguments: StoreBackend.cardBackends)
    func updateSetsClearsOrKeepsEachField(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let id = fixture.book.id
        try await fixture.cards.updateCollection(id: id, displayName: .some("Work"), description: .some("team"))
        try await fixture.cards.updateCollection(id: id, displayName: nil, description: .some(nil))
        let book = try await fixture.cards.collection(id: id)
        #expect(book?.displayName == "Work")
        #expect(book?.description == nil)
        await #expect(throws: StoreError.notFound) {
            try await fixture.cards.updateCollection(id: 9999, displayName: .some("x"), description: nil)
        }
    }

    @Test(arguments: StoreBackend.cardBackends)
    func deletingNestedPlainCollectionsCascadesToEverythingBelow(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.cards
        let top = try await store.createCollection(owner: "alice", path: ["a"], kind: .plain, displayName: nil, description: nil)
        let middle = try await store.createCollection(owner: "alice", path: ["a", "b"], kind: .plain, displayName: nil, description: nil)
        let bottom = try await store.createCollection(owner: "alice", path: ["a", "b", "c"], kind: .plain, displayName: nil, description: nil)
        for collection in [top, middle, bottom] {
            _ = try await store.putResource(collectionID: collection.id, name: "f.txt", data: Data("hi".utf8),
                                            contentType: "text/plain", card: nil, precondition: .none)
            try await store.updateDeadProperties(collectionID: collection.id, resource: nil,
                                                 set: [DeadProperty(name: PropertyName(namespace: "urn:x", name: "p"), xmlValue: "v")],
                                                 remove: [])
        }
        try await store.deleteCollection(id: top.id)
        for collection in [top, middle, bottom] {
            #expect(try await store.collection(id: collection.id) == nil)
        }
        if let memory = fixture.memory {
            let tally = await memory.tally
            #expect(tally.resources + tally.changeRows + tally.deadProperties + tally.plainCollections == 0)
        } else {
            let rows = try await fixture.integer("""
                SELECT (SELECT COUNT(*) FROM resources) + (SELECT COUNT(*) FROM changes)
                     + (SELECT COUNT(*) FROM dead_properties) + (SELECT COUNT(*) FROM collections WHERE kind = 'plain')
                """)
            #expect(rows == 0)
        }
        #expect(try await fixture.integrityCheck() == [])
        await #expect(throws: StoreError.notFound) { try await store.deleteCollection(id: top.id) }
    }

    @Test(arguments: StoreBackend.cardBackends)
    func usedBytesSumsTheOwnersResources(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let first = try await fixture.put("a.vcf")
        try await fixture.put("b.vcf")
        _ = first
        let expected = Int64(vcard(uid: "a.vcf", fn: "Someone").utf8.count + vcard(uid: "b.vcf", fn: "Someone").utf8.count)
        #expect(try await fixture.cards.usedBytes(owner: "alice") == expected)
        #expect(try await fixture.cards.usedBytes(owner: "nobody") == 0)
    }
}
