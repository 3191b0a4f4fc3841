import Foundation
import Testing
@testable import RoloStore

/// A request's first lookup read ahead (`LookupAhead`): answered once, and only for exactly
/// the lookup it names, so that nothing read before a request was signed in answers another
/// lookup, and nothing the request reads later (after its own write) comes from it.
@Suite(.closesStores) struct LookupAheadTests {
    @Test(arguments: StoreBackend.allCases)
    func whatWasReadAheadAnswersTheLookupItNamesOnce(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let book = try #require(try await fixture.store.collection(owner: "alice", path: ["default"]))
        let found = LookupAhead.Found(member: CollectionMember(collection: book, resource: nil))

        let member = LookupAhead(owner: "alice", path: ["default"], name: "a.vcf")
        #expect(member.isWaiting)
        #expect(member.take(owner: "alice", path: ["default"], name: "a.vcf") == nil, "nothing read yet")
        member.fill(found)
        #expect(!member.isWaiting)
        member.fill(LookupAhead.Found(member: nil))
        #expect(member.take(owner: "alice", path: ["default"], name: nil) == nil, "the collection alone is another lookup")
        #expect(member.take(owner: "alice", path: ["default"], name: "b.vcf") == nil)
        #expect(member.take(owner: "bob", path: ["default"], name: "a.vcf") == nil)
        #expect(member.take(owner: "alice", path: ["other"], name: "a.vcf") == nil)
        #expect(member.take(owner: "alice", path: ["default"], name: "a.vcf") == found, "the first fill is kept")
        #expect(member.take(owner: "alice", path: ["default"], name: "a.vcf") == nil, "once")

        let missing = LookupAhead(owner: "alice", path: ["gone"], name: nil)
        missing.fill(LookupAhead.Found(member: nil))
        #expect(missing.take(owner: "alice", path: ["gone"], name: "x.vcf") == nil)
        #expect(missing.take(owner: "alice", path: ["gone"], name: nil) == LookupAhead.Found(member: nil), "no such book is an answer")
    }

    /// The member's row read with the lookup goes to the request's write of that member, once,
    /// whether or not the lookup was answered from it first.
    @Test func theMembersRowGoesOnceToAWriteOfThatMember() {
        let row = LookupAhead.MemberRow(collectionID: 7, id: 3, name: "a.vcf", etag: "\"e\"", uid: "u", seq: 9)
        let ahead = LookupAhead(owner: "alice", path: ["default"], name: "a.vcf")
        #expect(ahead.takeMemberRow(collectionID: 7, name: "a.vcf") == nil, "nothing read yet")
        ahead.fill(LookupAhead.Found(member: nil, memberRow: row))
        #expect(ahead.take(owner: "alice", path: ["default"], name: "a.vcf") != nil)
        #expect(ahead.takeMemberRow(collectionID: 8, name: "a.vcf") == nil, "another book")
        #expect(ahead.takeMemberRow(collectionID: 7, name: "b.vcf") == nil, "another member")
        #expect(ahead.takeMemberRow(collectionID: 7, name: "a.vcf") == row)
        #expect(ahead.takeMemberRow(collectionID: 7, name: "a.vcf") == nil, "once")
    }

    /// "The home held no locks" answers the first check of the owner's home, and only when
    /// the store read it so.
    @Test func aHomeWithoutLocksSkipsOneCheckOfItsOwnersHome() {
        let none = LookupAhead(owner: "alice", path: ["default"], name: "a.vcf")
        #expect(!none.homeHeldNoLocks("alice"), "not read yet")
        none.fill(LookupAhead.Found(member: nil), homeHasLocks: false)
        #expect(!none.homeHeldNoLocks("bob"), "another home")
        #expect(none.homeHeldNoLocks("alice"))
        #expect(!none.homeHeldNoLocks("alice"), "once")

        let some = LookupAhead(owner: "alice", path: ["default"], name: nil)
        some.fill(LookupAhead.Found(member: nil), homeHasLocks: true)
        #expect(!some.homeHeldNoLocks("alice"))
        let unread = LookupAhead(owner: "alice", path: ["default"], name: nil)
        unread.fill(LookupAhead.Found(member: nil))
        unread.fill(LookupAhead.Found(member: nil), homeHasLocks: false)
        #expect(!unread.homeHeldNoLocks("alice"), "only the first fill counts")
    }

    /// Bound for a request, the store's lookups answer as they would without it, whether the
    /// store reads ahead (PostgreSQL, on an event loop) or not (SQLite, or off a loop).
    @Test(arguments: StoreBackend.allCases)
    func lookupsBoundToAnAheadAnswerAsWithout(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
        let ahead = LookupAhead(owner: "alice", path: ["default"], name: nil)
        let (collection, stamp) = try await LookupAhead.$current.withValue(ahead) {
            let stamp = try await store.accountPasswordStamp(user: "alice")
            return (try await store.collection(owner: "alice", path: ["default"]), stamp)
        }
        #expect(collection == book)
        #expect(stamp == (try await store.accountPasswordStamp(user: "alice")))
        let member = LookupAhead(owner: "alice", path: ["nothing"], name: "a.vcf")
        let none = try await LookupAhead.$current.withValue(member) {
            _ = try await store.accountPasswordStamp(user: "alice")
            return try await store.collectionMember(owner: "alice", path: ["nothing"], name: "a.vcf")
        }
        #expect(none == nil)
    }
}
