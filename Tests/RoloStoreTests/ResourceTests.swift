import Foundation
import Testing
@testable import RoloStore

@Suite(.closesStores) struct ResourceTests {
    @Test(arguments: StoreBackend.cardBackends)
    func putStoresBytesVerbatimWithAStrongContentETag(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        // CRLF, a trailing space and an odd byte order must all come back unchanged.
        let bytes = Data("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Zoë \r\nUID:u1\r\nEND:VCARD\r\n".utf8)
        let result = try await fixture.cards.putResource(
            collectionID: fixture.book.id, name: "u1.vcf", data: bytes, contentType: "text/vcard",
            card: CardMetadata(uid: "u1", kind: "individual", indexEntries: [], members: []), precondition: .none)
        #expect(result.created)
        #expect(result.etag == ETag.of(bytes))
        #expect(result.etag.count == 34 && result.etag.hasPrefix("\"") && result.etag.hasSuffix("\""))
        let stored = try #require(try await fixture.cards.resource(collectionID: fixture.book.id, name: "u1.vcf"))
        #expect(stored.data == bytes)
        #expect(stored.info.etag == result.etag)
        #expect(stored.info.size == bytes.count)
        #expect(stored.info.contentType == "text/vcard")
        #expect(stored.info.seq == result.seq)
    }

    @Test(arguments: StoreBackend.cardBackends)
    func replacingChangesETagAndSeqButNotCreation(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let first = try await fixture.put("a.vcf", fn: "One")
        let second = try await fixture.put("a.vcf", fn: "Two")
        #expect(!second.created)
        #expect(second.etag != first.etag)
        #expect(second.seq == first.seq + 1)
        #expect(try await fixture.cards.collection(id: fixture.book.id)?.syncSeq == second.seq)
        #expect(try await fixture.cards.listResources(collectionID: fixture.book.id).count == 1)
    }

    @Test(arguments: StoreBackend.cardBackends)
    func preconditionsAreHonouredOnPut(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        await #expect(throws: StoreError.preconditionFailed) { try await fixture.put("a.vcf", precondition: .ifMatchAny) }
        await #expect(throws: StoreError.preconditionFailed) { try await fixture.put("a.vcf", precondition: .ifMatch(["\"x\""])) }
        let created = try await fixture.put("a.vcf", precondition: .ifNoneMatchAny)
        await #expect(throws: StoreError.preconditionFailed) { try await fixture.put("a.vcf", precondition: .ifNoneMatchAny) }
        await #expect(throws: StoreError.preconditionFailed) {
            try await fixture.put("a.vcf", precondition: .ifNoneMatch([created.etag]))
        }
        await #expect(throws: StoreError.preconditionFailed) { try await fixture.put("a.vcf", precondition: .ifMatch(["\"old\""])) }
        let updated = try await fixture.put("a.vcf", fn: "New", precondition: .ifMatch(["\"old\"", created.etag]))
        try await fixture.put("a.vcf", fn: "Newer", precondition: .ifMatchAny)
        try await fixture.put("a.vcf", fn: "Newest", precondition: .ifNoneMatch([updated.etag]))
        // Failed writes changed nothing: three successful puts after the creation.
        #expect(try await fixture.cards.collection(id: fixture.book.id)?.syncSeq == 4)
    }

    @Test(arguments: StoreBackend.cardBackends)
    func uidBelongingToAnotherNameIsAConflictNamingTheOwner(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await fixture.put("first.vcf", uid: "same-uid")
        await #expect(throws: StoreError.uidConflict(existingName: "first.vcf")) {
            try await fixture.put("second.vcf", uid: "same-uid")
        }
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "second.vcf") == nil)
        #expect(try await fixture.cards.resourceName(collectionID: fixture.book.id, uid: "same-uid") == "first.vcf")
        // The owner itself may be rewritten with its UID, and a UID can be reused after a delete.
        try await fixture.put("first.vcf", uid: "same-uid", fn: "Changed")
        try await fixture.cards.deleteResource(collectionID: fixture.book.id, name: "first.vcf", precondition: .none)
        try await fixture.put("second.vcf", uid: "same-uid")
        #expect(try await fixture.cards.resourceName(collectionID: fixture.book.id, uid: "same-uid") == "second.vcf")
    }

    @Test(arguments: StoreBackend.cardBackends)
    func sameUIDInAnotherBookIsNoConflict(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let other = try await fixture.cards.createCollection(owner: "alice", path: ["work"], kind: .addressBook,
                                                             displayName: nil, description: nil)
        try await fixture.put("a.vcf", uid: "u")
        _ = try await fixture.cards.putResource(
            collectionID: other.id, name: "b.vcf", data: Data(vcard(uid: "u", fn: "x").utf8), contentType: "text/vcard",
            card: CardMetadata(uid: "u", kind: "individual", indexEntries: [], members: []), precondition: .none)
        #expect(try await fixture.cards.resourceName(collectionID: other.id, uid: "u") == "b.vcf")
    }

    @Test(arguments: StoreBackend.cardBackends)
    func multigetListAndAllReturnWhatExists(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        for index in 0..<1_200 { try await fixture.put(String(format: "c%04d.vcf", index)) }
        let names = (0..<1_300).map { String(format: "c%04d.vcf", $0) }
        let found = try await fixture.cards.resources(collectionID: fixture.book.id, names: names)
        #expect(found.count == 1_200)
        #expect(Set(found.map(\.info.name)) == Set(names.prefix(1_200)))
        let listed = try await fixture.cards.listResources(collectionID: fixture.book.id)
        #expect(listed.map(\.name) == Array(names.prefix(1_200)))
        let all = try await fixture.cards.allResources(collectionID: fixture.book.id)
        #expect(all.first?.data == Data(vcard(uid: "c0000.vcf", fn: "Someone").utf8))
        #expect(try await fixture.cards.resourceInfo(collectionID: fixture.book.id, name: "c0005.vcf")?.size == all[5].data.count)
        #expect(try await fixture.cards.resourceInfo(collectionID: fixture.book.id, name: "nope.vcf") == nil)
    }

    @Test(arguments: StoreBackend.cardBackends)
    func lookupByPathFindsTheResourceWithItsBookInOneRead(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await fixture.put("a.vcf", fn: "Ann")
        try await fixture.addUser("bob")
        let found = try #require(try await fixture.cards.resource(owner: "alice", collectionPath: ["default"], name: "a.vcf"))
        // The same answer as the two calls the protocol's default implementation makes.
        #expect(found.collection == (try await fixture.cards.collection(owner: "alice", path: ["default"])))
        #expect(found.collection.syncSeq == 1)
        #expect(found.resource == (try await fixture.cards.resource(collectionID: fixture.book.id, name: "a.vcf")))
        #expect(found.resource.data == Data(vcard(uid: "a.vcf", fn: "Ann").utf8))
        #expect(try await fixture.cards.resource(owner: "alice", collectionPath: ["default"], name: "b.vcf") == nil)
        #expect(try await fixture.cards.resource(owner: "alice", collectionPath: ["other"], name: "a.vcf") == nil)
        #expect(try await fixture.cards.resource(owner: "bob", collectionPath: ["default"], name: "a.vcf") == nil)
        #expect(try await fixture.cards.resource(owner: "alice", collectionPath: [], name: "a.vcf") == nil)
    }

    @Test(arguments: StoreBackend.cardBackends)
    func deleteHonoursPreconditionsAndReportsMissing(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let put = try await fixture.put("a.vcf")
        let id = fixture.book.id
        await #expect(throws: StoreError.preconditionFailed) {
            try await fixture.cards.deleteResource(collectionID: id, name: "a.vcf", precondition: .ifMatch(["\"nope\""]))
        }
        try await fixture.cards.deleteResource(collectionID: id, name: "a.vcf", precondition: .ifMatch([put.etag]))
        #expect(try await fixture.cards.resource(collectionID: id, name: "a.vcf") == nil)
        await #expect(throws: StoreError.notFound) {
            try await fixture.cards.deleteResource(collectionID: id, name: "a.vcf", precondition: .none)
        }
        await #expect(throws: StoreError.preconditionFailed) {
            try await fixture.cards.deleteResource(collectionID: id, name: "a.vcf", precondition: .ifMatchAny)
        }
    }

    /// A card named after a UID with a line break (or any control character) is kept under
    /// exactly that name; NUL and '/' are refused.
    @Test(arguments: StoreBackend.cardBackends)
    func resourceNamesKeepControlCharactersExactly(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let names = ["a\nb.vcf", "tab\t.vcf", "cr\r\n.vcf", "bell\u{07}\u{7F}.vcf", "%41.vcf"]
        for (index, name) in names.enumerated() { _ = try await fixture.put(name, uid: "u\(index)") }
        #expect(Set(try await fixture.cards.listResources(collectionID: fixture.book.id).map(\.name)) == Set(names))
        for name in names {
            #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: name)?.info.name == name)
        }
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "ab.vcf") == nil)
        await #expect(throws: StoreError.self) { try await fixture.put("nul\0.vcf", uid: "n") }
        // User and collection names stay free of control characters.
        await #expect(throws: StoreError.self) { try await fixture.addUser("eve\n") }
    }

    @Test(arguments: StoreBackend.cardBackends)
    func invalidNamesAndMissingCollectionsAreRefused(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        for bad in ["", "..", "a/b.vcf"] {
            await #expect(throws: StoreError.self) { try await fixture.put(bad, uid: "u") }
        }
        await #expect(throws: StoreError.notFound) {
            _ = try await fixture.cards.putResource(collectionID: 4242, name: "a.vcf", data: Data(), contentType: "text/vcard",
                                                    card: nil, precondition: .none)
        }
        #expect(try await fixture.cards.listResources(collectionID: fixture.book.id).isEmpty)
    }
}
