import Foundation
import GRDB
import Synchronization
import Testing
@testable import RoloSQLite
@testable import RoloStore

/// The single-row reads that block their thread (`readOnCallingThread`) must never wait for
/// a reader of the async pool: a thread blocked there can be the one the holder of that
/// reader needs to resume, and the server stops answering.
@Suite struct RowReaderTests {
    @Test func singleRowReadsAnswerWhileEveryPoolReaderIsHeld() async throws {
        let store = try SQLiteStore.temporary(bcryptCost: 4, tuning: SQLiteStore.Tuning(maximumReaders: 1))
        defer { try? store.close() }
        try await store.createUser(name: "alice", password: "secret")
        let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
        let data = Data(vcard(uid: "u1", fn: "Ann").utf8)
        _ = try await store.putResource(
            collectionID: book.id, name: "ann.vcf", data: data, contentType: "text/vcard",
            card: CardMetadata(uid: "u1", kind: "individual", indexEntries: [], members: []), precondition: .none)

        // Hold the pool's only reader on another thread until released (or 5 s pass).
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let released = Atomic<Bool>(false)
        Thread.detachNewThread {
            try? store.pool.read { _ in
                holding.signal()
                _ = release.wait(timeout: .now() + 5)
                released.store(true, ordering: .sequentiallyConsistent)
            }
        }
        holding.wait()
        defer { release.signal() }

        let found = try await store.resource(owner: "alice", collectionPath: ["default"], name: "ann.vcf")
        #expect(found?.resource.data == data)
        #expect(released.load(ordering: .sequentiallyConsistent) == false,
                "the single-row read waited for the pool's reader")
    }

    @Test func eachLookupSeesTheLatestCommittedWrite() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let store = fixture.sqlite
        for version in 1...5 {
            let written = try await fixture.put("ann.vcf", uid: "u1", fn: "Ann \(version)")
            let located = try #require(try await store.resource(owner: "alice", collectionPath: ["default"], name: "ann.vcf"))
            #expect(located.resource.info.etag == written.etag)
            #expect(located.collection.syncSeq == written.seq)
            #expect(try await store.resourceInfo(collectionID: fixture.book.id, name: "ann.vcf")?.etag == written.etag)
            #expect(try await store.resource(collectionID: fixture.book.id, name: "ann.vcf")?.info.etag == written.etag)
            #expect(try await store.collection(owner: "alice", path: ["default"])?.syncSeq == written.seq)
        }
        try await store.deleteResource(collectionID: fixture.book.id, name: "ann.vcf", precondition: .none)
        #expect(try await store.resource(owner: "alice", collectionPath: ["default"], name: "ann.vcf") == nil)
        #expect(try await store.resourceInfo(collectionID: fixture.book.id, name: "ann.vcf") == nil)
    }

    /// The one-statement lookup that resolves a member path answers what the two lookups
    /// it replaces (the collection, then its resource) answer, for present and absent
    /// collections and members, and after writes and deletes.
    @Test func collectionMemberAgreesWithTheTwoLookups() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let store = fixture.sqlite
        let missing = try #require(try await store.collectionMember(owner: "alice", path: ["default"], name: "ann.vcf"))
        #expect(missing.collection == (try await store.collection(owner: "alice", path: ["default"])))
        #expect(missing.resource == nil)

        let written = try await fixture.put("ann.vcf", uid: "u1", fn: "Ann")
        let found = try #require(try await store.collectionMember(owner: "alice", path: ["default"], name: "ann.vcf"))
        #expect(found.collection == (try await store.collection(owner: "alice", path: ["default"])))
        #expect(found.collection.syncSeq == written.seq)
        #expect(found.resource == (try await store.resourceInfo(collectionID: fixture.book.id, name: "ann.vcf")))
        #expect(found.resource?.etag == written.etag)
        // Another name in the same book, a missing book, a missing user, the home itself.
        #expect(try await store.collectionMember(owner: "alice", path: ["default"], name: "bob.vcf")?.resource == nil)
        #expect(try await store.collectionMember(owner: "alice", path: ["nope"], name: "ann.vcf") == nil)
        #expect(try await store.collectionMember(owner: "nobody", path: ["default"], name: "ann.vcf") == nil)
        #expect(try await store.collectionMember(owner: "alice", path: [], name: "default") == nil)

        try await store.deleteResource(collectionID: fixture.book.id, name: "ann.vcf", precondition: .none)
        let deleted = try #require(try await store.collectionMember(owner: "alice", path: ["default"], name: "ann.vcf"))
        #expect(deleted.resource == nil)
        #expect(deleted.collection.syncSeq == written.seq + 1)
    }

    @Test func lookupsFindNothingOnceTheBookOrItsOwnerIsDeleted() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let store = fixture.sqlite
        try await fixture.put("ann.vcf")
        let other = try await store.createCollection(owner: "alice", path: ["work"], kind: .addressBook,
                                                     displayName: nil, description: nil)
        _ = try await store.putResource(
            collectionID: other.id, name: "bob.vcf", data: Data(vcard(uid: "b", fn: "Bob").utf8), contentType: "text/vcard",
            card: CardMetadata(uid: "b", kind: "individual", indexEntries: [], members: []), precondition: .none)
        #expect(try await store.resource(owner: "alice", collectionPath: ["default"], name: "ann.vcf") != nil)
        #expect(try await store.resource(owner: "alice", collectionPath: ["work"], name: "bob.vcf") != nil)

        try await store.deleteCollection(id: fixture.book.id)
        #expect(try await store.resource(owner: "alice", collectionPath: ["default"], name: "ann.vcf") == nil)
        #expect(try await store.collection(owner: "alice", path: ["default"]) == nil)
        #expect(try await store.resource(collectionID: fixture.book.id, name: "ann.vcf") == nil)
        #expect(try await store.resource(owner: "alice", collectionPath: ["work"], name: "bob.vcf") != nil)

        try await store.deleteUser(name: "alice")
        #expect(try await store.resource(owner: "alice", collectionPath: ["work"], name: "bob.vcf") == nil)
        #expect(try await store.collection(owner: "alice", path: ["work"]) == nil)
    }

    @Test func lookupsWhileCardsAreRewrittenAlwaysReturnAWholeCommittedCard() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let store = fixture.sqlite
        let names = (0..<4).map { "card\($0).vcf" }
        for name in names { try await fixture.put(name, uid: name) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for round in 1...60 {
                    for name in names { try await fixture.put(name, uid: name, fn: "Round \(round) " + String(repeating: "x", count: round * 7)) }
                }
            }
            for reader in 0..<4 {
                group.addTask {
                    for step in 0..<400 {
                        let name = names[(reader + step) % names.count]
                        let found = try #require(try await store.resource(owner: "alice", collectionPath: ["default"], name: name))
                        // The body, its tag and the book's sequence number come from one snapshot.
                        #expect(ETag.of(found.resource.data) == found.resource.info.etag)
                        #expect(found.resource.info.size == found.resource.data.count)
                        #expect(found.collection.syncSeq >= found.resource.info.seq)
                        await Task.yield()
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test func lookupsAfterCloseThrowInsteadOfUsingClosedConnections() async throws {
        let fixture = try await StoreFixture.make()
        try await fixture.put("ann.vcf")
        #expect(try await fixture.sqlite.resource(owner: "alice", collectionPath: ["default"], name: "ann.vcf") != nil)
        fixture.close()
        await #expect(throws: DatabaseError.self) {
            try await fixture.sqlite.resource(owner: "alice", collectionPath: ["default"], name: "ann.vcf")
        }
    }
}
