import Foundation
import Testing
@testable import RoloSQLite
@testable import RoloStore

/// COPY and MOVE of one resource as one transaction: both places change together or not at all.
@Suite(.closesStores) struct TransferTests {
    static func card(_ uid: String, fn: String = "Someone") -> (data: Data, card: CardMetadata) {
        (Data(vcard(uid: uid, fn: fn).utf8),
         CardMetadata(uid: uid, kind: "individual", indexEntries: [IndexEntry(property: "UID", value: uid)], members: []))
    }

    @Test(arguments: StoreBackend.cardBackends)
    func renameWithinABookMovesBytesAndDeadPropertiesAndLogsBoth(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let put = try await fixture.put("a.vcf", uid: "same")
        let colour = DeadProperty(name: PropertyName(namespace: "urn:x", name: "colour"), xmlValue: "<x:colour xmlns:x=\"urn:x\">red</x:colour>")
        try await fixture.cards.updateDeadProperties(collectionID: fixture.book.id, resource: "a.vcf", set: [colour], remove: [])
        let (data, card) = Self.card("same")
        let moved = try await fixture.cards.transferResource(
            collectionID: fixture.book.id, name: "a.vcf", sourceETag: put.etag, to: fixture.book.id, name: "b.vcf",
            data: data, contentType: "text/vcard", card: card, move: true)
        #expect(moved.created)
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "a.vcf") == nil)
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "b.vcf")?.data == data)
        #expect(try await fixture.cards.deadProperties(collectionID: fixture.book.id, resource: "b.vcf") == [colour])
        #expect(try await fixture.cards.deadProperties(collectionID: fixture.book.id, resource: "a.vcf").isEmpty)
        let changes = try await fixture.cards.changes(collectionID: fixture.book.id, since: put.seq, limit: nil)
        #expect(changes.changes.map(\.name) == ["a.vcf", "b.vcf"])
        #expect(changes.changes.map(\.deleted) == [true, false])
        #expect(try await fixture.integrityCheck() == [])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func aUIDConflictInTheTargetChangesNeitherBook(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let work = try await fixture.cards.createCollection(owner: "alice", path: ["work"], kind: .addressBook,
                                                            displayName: nil, description: nil)
        let source = try await fixture.put("dup.vcf", uid: "dup")
        let (keep, keepCard) = Self.card("keep", fn: "Kept")
        _ = try await fixture.cards.putResource(collectionID: work.id, name: "keep.vcf", data: keep, contentType: "text/vcard",
                                                card: keepCard, precondition: .none)
        let (other, otherCard) = Self.card("dup", fn: "Other")
        _ = try await fixture.cards.putResource(collectionID: work.id, name: "other.vcf", data: other, contentType: "text/vcard",
                                                card: otherCard, precondition: .none)
        let bookSeq = try await fixture.cards.collection(id: fixture.book.id)?.syncSeq
        let workSeq = try await fixture.cards.collection(id: work.id)?.syncSeq
        let (data, card) = Self.card("dup")
        await #expect(throws: StoreError.uidConflict(existingName: "other.vcf")) {
            try await fixture.cards.transferResource(
                collectionID: fixture.book.id, name: "dup.vcf", sourceETag: source.etag, to: work.id, name: "keep.vcf",
                data: data, contentType: "text/vcard", card: card, move: true)
        }
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "dup.vcf") != nil)
        #expect(try await fixture.cards.resource(collectionID: work.id, name: "keep.vcf")?.data == keep)
        #expect(try await fixture.cards.collection(id: fixture.book.id)?.syncSeq == bookSeq)
        #expect(try await fixture.cards.collection(id: work.id)?.syncSeq == workSeq)
    }

    @Test(arguments: StoreBackend.cardBackends)
    func aChangedSourceIsAPreconditionFailure(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let first = try await fixture.put("a.vcf", uid: "a", fn: "First")
        try await fixture.put("a.vcf", uid: "a", fn: "Second")
        let (data, card) = Self.card("a", fn: "First")
        await #expect(throws: StoreError.preconditionFailed) {
            try await fixture.cards.transferResource(
                collectionID: fixture.book.id, name: "a.vcf", sourceETag: first.etag, to: fixture.book.id, name: "b.vcf",
                data: data, contentType: "text/vcard", card: card, move: true)
        }
        #expect(try await fixture.cards.listResources(collectionID: fixture.book.id).map(\.name) == ["a.vcf"])
    }
}
