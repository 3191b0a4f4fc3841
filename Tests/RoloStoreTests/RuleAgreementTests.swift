import Foundation
import Testing
@testable import RoloStore

/// The domain rules live once, in the core (`WriteRules`, `CollectionRules`, `AccountRules`,
/// the `StoreError` reasons), and each back end asks them: so every refusal below is the
/// same error, text included, on SQLite, on PostgreSQL and (for the card rules) on the
/// in-memory double, and leaves the store unchanged.
@Suite(.closesStores) struct RuleAgreementTests {
    typealias Case = (what: String, expected: StoreError, attempt: @Sendable () async throws -> Void)

    @Test(arguments: StoreBackend.cardBackends)
    func everyCardRuleRefusesTheSameInputWithTheSameError(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let cards = fixture.cards
        try await fixture.put("ada.vcf", uid: "ada-1")
        let seq = try #require(try await cards.collection(id: fixture.book.id)).syncSeq

        let cases: [Case] = [
            ("a collection with no path", .alreadyExists,
             { _ = try await cards.createCollection(owner: "alice", path: [], kind: .addressBook, displayName: nil, description: nil) }),
            ("a '~' at the top of a home", .tildeInHomeCollection,
             { _ = try await cards.createCollection(owner: "alice", path: ["a~b"], kind: .addressBook, displayName: nil, description: nil) }),
            ("a collection inside an address book", .addressBookHoldsNoCollections,
             { _ = try await cards.createCollection(owner: "alice", path: ["default", "x"], kind: .plain, displayName: nil, description: nil) }),
            ("a collection name with a line break", .invalidName("collection name contains a control character"),
             { _ = try await cards.createCollection(owner: "alice", path: ["a\nb"], kind: .addressBook, displayName: nil, description: nil) }),
            ("a card whose UID another card holds", .uidConflict(existingName: "ada.vcf"),
             { _ = try await fixture.put("other.vcf", uid: "ada-1") }),
            ("a card that changes its UID in place", .uidConflict(existingName: "ada.vcf"),
             { _ = try await fixture.put("ada.vcf", uid: "someone-else") }),
            ("a stale If-Match", .preconditionFailed,
             { _ = try await fixture.put("ada.vcf", uid: "ada-1", precondition: .ifMatch(["\"stale\""])) }),
            ("a resource name with NUL", .invalidName("resource name contains NUL"),
             { _ = try await fixture.put("ada\0.vcf", uid: "nul") }),
        ]
        for (what, expected, attempt) in cases {
            await #expect(throws: expected, "\(what)") { try await attempt() }
        }
        // Nothing was written by any of them.
        #expect(try await cards.collection(id: fixture.book.id)?.syncSeq == seq)
        #expect(try await cards.childCollections(owner: "alice", parentPath: []).map(\.path) == [["default"]])
        #expect(try await fixture.integrityCheck() == [])
    }

    @Test(arguments: StoreBackend.allCases)
    func everyAccountSharingAndBatchRuleRefusesTheSameInputWithTheSameError(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createUser(name: "bob", password: "secret")
        try await fixture.put("ada.vcf", uid: "ada-1")
        let seq = try #require(try await store.collection(id: fixture.book.id)).syncSeq

        let cases: [Case] = [
            ("an app password without a name", .appPasswordNameLength,
             { _ = try await store.createAppPassword(user: "alice", name: "  ", readOnly: false, books: nil) }),
            ("an app password named like the account's", .appPasswordNameReserved,
             { _ = try await store.createAppPassword(user: "alice", name: "Account Password", readOnly: false, books: nil) }),
            ("an app password name with NUL", .appPasswordNameControl,
             { _ = try await store.createAppPassword(user: "alice", name: "phone\u{0}", readOnly: false, books: nil) }),
            ("an app password for a book that is not there", .noAddressBook(user: "alice", book: "nope"),
             { _ = try await store.createAppPassword(user: "alice", name: "phone", readOnly: false, books: ["nope"]) }),
            ("a share with the owner", .shareWithOwner,
             { _ = try await store.shareBook(owner: "alice", book: "default", with: "alice", access: .readOnly, accepted: false) }),
            ("a share with nobody", .noSuchSharee("carol"),
             { _ = try await store.shareBook(owner: "alice", book: "default", with: "carol", access: .readOnly, accepted: false) }),
            ("a card batch changing a UID", .uidConflict(existingName: "ada.vcf"),
             { _ = try await store.applyCardBatch(collectionID: fixture.book.id, writes: [
                 .put(name: "ada.vcf", data: Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:x\r\nFN:X\r\nEND:VCARD\r\n".utf8),
                      contentType: "text/vcard", card: CardMetadata(uid: "x", kind: "individual", indexEntries: [], members: []),
                      precondition: .none, keepPrevious: false)]) }),
        ]
        for (what, expected, attempt) in cases {
            await #expect(throws: expected, "\(what)") { try await attempt() }
        }
        // Nothing was written by any of them.
        #expect(try await store.collection(id: fixture.book.id)?.syncSeq == seq)
        #expect(try await store.appPasswords(user: "alice").isEmpty)
        #expect(try await store.shares(of: "alice").isEmpty)
    }
}
