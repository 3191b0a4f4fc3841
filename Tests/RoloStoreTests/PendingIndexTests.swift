import Foundation
import GRDB
import Testing
@testable import RoloSQLite
@testable import RoloStore

/// Index entries of PUTs wait in `card_index_pending` and move into `card_index` in
/// batches: at the threshold between two batches, after a burst once the writer is idle,
/// and when a store opens. Queries see an entry wherever it is; a card's entries are
/// always all in one table; deletes and replacements reach both.
@Suite struct PendingIndexTests {
    /// Entries (merged, pending) in the two tables.
    static func counts(_ store: SQLiteStore) async throws -> (merged: Int, pending: Int) {
        try await store.pool.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM card_index") ?? -1,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM card_index_pending") ?? -1)
        }
    }

    static func fn(_ text: String) -> IndexPredicate {
        .textMatch(property: "FN", text: text, collation: .unicodeCasemap, match: .equals, negate: false)
    }

    @Test func putsLeaveTheirEntriesPendingUntilTheThresholdThenTheWriterMergesThem() async throws {
        // Each card has two entries (UID and FN): the fifth PUT reaches 10.
        let fixture = try await StoreFixture.make(tuning: SQLiteStore.Tuning(pendingIndexEntries: 10))
        defer { fixture.close() }
        for index in 0..<4 { try await fixture.put("c\(index).vcf", fn: "Person \(index)") }
        #expect(try await Self.counts(fixture.sqlite) == (merged: 0, pending: 8))
        try await fixture.put("c4.vcf", fn: "Person 4")
        // The writer merges right after the batch, once its callers are answered.
        let deadline = ContinuousClock.now + .seconds(30)
        while try await Self.counts(fixture.sqlite).pending > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(try await Self.counts(fixture.sqlite) == (merged: 10, pending: 0), "merged after the batch")
        try await fixture.put("c5.vcf", fn: "Person 5")
        #expect(try await Self.counts(fixture.sqlite) == (merged: 10, pending: 2))
        for index in 0..<6 {
            #expect(try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: Self.fn("person \(index)"), limit: nil)
                == ["c\(index).vcf"])
        }
        #expect(try await fixture.sqlite.integrityCheck().isEmpty)
    }

    @Test func aQuietMomentAfterABurstMergesEverythingPending() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let burst = GroupCommit.IdleCheckpoint().afterWrites
        for index in 0..<burst { try await fixture.put("c\(index).vcf", fn: "Person \(index)") }
        let deadline = ContinuousClock.now + .seconds(30)
        while fixture.sqlite.groupCommit.idleCheckpointCount == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await Self.counts(fixture.sqlite) == (merged: 2 * burst, pending: 0))
        #expect(try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: Self.fn("person 42"), limit: nil)
            == ["c42.vcf"])
    }

    @Test func replacingOrDeletingACardReachesItsEntriesInEitherTable() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("a.vcf", fn: "Old Name")
        try await fixture.put("b.vcf", fn: "Bea")
        try await fixture.sqlite.mergePendingIndex()
        // a's old entries are merged, its new ones pending.
        try await fixture.put("a.vcf", fn: "New Name")
        #expect(try await Self.counts(fixture.sqlite) == (merged: 2, pending: 2))
        #expect(try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: Self.fn("old name"), limit: nil).isEmpty)
        #expect(try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: Self.fn("new name"), limit: nil) == ["a.vcf"])
        #expect(try await fixture.sqlite.integrityCheck().isEmpty)
        // b merged, a pending: both deletes remove their entries.
        try await fixture.sqlite.deleteResource(collectionID: fixture.book.id, name: "a.vcf", precondition: .none)
        try await fixture.sqlite.deleteResource(collectionID: fixture.book.id, name: "b.vcf", precondition: .none)
        #expect(try await Self.counts(fixture.sqlite) == (merged: 0, pending: 0))
        #expect(try await fixture.sqlite.integrityCheck().isEmpty)
    }

    /// An update whose card keeps its index entries (a note, an address, a photo edited)
    /// leaves them where they are, merged or pending; one that changes an entry, or the list
    /// row's search text, writes them again (issue 34).
    @Test func anUpdateThatKeepsTheEntriesLeavesThemWhereTheyAre() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        func put(note: String, email: String, search: String = "anna") async throws {
            let data = Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:a\r\nFN:Anna\r\nEMAIL:\(email)\r\nNOTE:\(note)\r\nEND:VCARD\r\n".utf8)
            let listing = CardListingFields(displayName: "Anna", sortKey: "anna", organization: nil, email: email, phone: nil,
                                            hasPhoto: false, searchText: search)
            _ = try await fixture.cards.putResource(
                collectionID: fixture.book.id, name: "a.vcf", data: data, contentType: "text/vcard; charset=utf-8",
                card: CardMetadata(uid: "a", kind: "individual",
                                   indexEntries: [IndexEntry(property: "UID", value: "a"), IndexEntry(property: "FN", value: "Anna"),
                                                  IndexEntry(property: "EMAIL", value: email)],
                                   members: [], listing: listing),
                precondition: .none)
        }
        func email(_ text: String) async throws -> [String] {
            try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: .textMatch(
                property: "EMAIL", text: text, collation: .unicodeCasemap, match: .equals, negate: false), limit: nil)
        }
        try await put(note: "one", email: "Anna@Example.com")
        try await fixture.sqlite.mergePendingIndex()
        #expect(try await Self.counts(fixture.sqlite) == (merged: 3, pending: 0))
        try await put(note: "two", email: "Anna@Example.com")
        #expect(try await Self.counts(fixture.sqlite) == (merged: 3, pending: 0), "kept where they were merged")
        #expect(try await email("anna@example.com") == ["a.vcf"])
        // An entry differs by case alone: its verbatim value is another.
        try await put(note: "two", email: "anna@example.com")
        #expect(try await Self.counts(fixture.sqlite) == (merged: 0, pending: 3), "written again")
        try await put(note: "three", email: "anna@example.com")
        #expect(try await Self.counts(fixture.sqlite) == (merged: 0, pending: 3), "kept where they wait")
        // The same entries with another search text: written again, so that the merge
        // refreshes the list's trigrams.
        try await fixture.sqlite.mergePendingIndex()
        try await put(note: "three", email: "anna@example.com", search: "anna\nnew")
        #expect(try await Self.counts(fixture.sqlite) == (merged: 0, pending: 3))
        try await fixture.sqlite.mergePendingIndex()
        #expect(try await email("ANNA@example.com") == ["a.vcf"])
        #expect(try await fixture.sqlite.integrityCheck().isEmpty)
    }

    /// `defined` and `not defined` look in both tables: a card with the property merged
    /// and one with it pending are both defined, and neither is "not defined".
    @Test func definedAndNotDefinedSeeBothTables() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("merged.vcf", extra: [IndexEntry(property: "EMAIL", value: "m@example.com")])
        try await fixture.sqlite.mergePendingIndex()
        try await fixture.put("pending.vcf", extra: [IndexEntry(property: "EMAIL", value: "p@example.com")])
        try await fixture.put("none.vcf")
        let book = fixture.book.id
        #expect(try await fixture.sqlite.query(collectionID: book, predicate: .defined(property: "EMAIL"), limit: nil)
            == ["merged.vcf", "pending.vcf"])
        #expect(try await fixture.sqlite.query(collectionID: book, predicate: .notDefined(property: "EMAIL"), limit: nil)
            == ["none.vcf"])
    }

    @Test func openingAStoreMergesWhatWasLeftPending() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-pending-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("rolo.sqlite").path
        let store = try SQLiteStore(path: path, bcryptCost: 4)
        try await store.createUser(name: "alice", password: "secret")
        let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
        let fixture = StoreFixture(sqlite: store, book: book)
        for index in 0..<3 { try await fixture.put("c\(index).vcf") }
        #expect(try await Self.counts(store) == (merged: 0, pending: 6))
        try store.close()

        let reopened = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? reopened.close() }
        #expect(try await Self.counts(reopened) == (merged: 6, pending: 0))
    }

    /// A crash between the merge's two statements leaves a card's entries in both tables:
    /// the integrity check says so, queries still find the card once, and the next merge
    /// finishes the job.
    @Test func entriesLeftInBothTablesAreReportedAndTheNextMergeClearsThem() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("a.vcf", fn: "Ann")
        try await fixture.sqlite.mergePendingIndex()
        #expect(try await fixture.sqlite.integrityCheck().isEmpty)
        try await fixture.sqlite.pool.write { db in
            try db.execute(sql: """
                INSERT INTO card_index_pending (id, collection_id, property, value_unicode, value_ascii, value)
                SELECT (resource_id << \(SQLiteStore.pendingPositionBits)) + position, collection_id, property, value_unicode,
                       value_ascii, value
                FROM card_index
                """)
        }
        #expect(try await fixture.sqlite.integrityCheck().contains { $0.hasPrefix("index rows both merged and pending") })
        #expect(try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: Self.fn("ann"), limit: nil) == ["a.vcf"])
        try await fixture.sqlite.mergePendingIndex()
        #expect(try await Self.counts(fixture.sqlite) == (merged: 2, pending: 0))
        #expect(try await fixture.sqlite.integrityCheck().isEmpty)
    }

    /// A pending entry's key is its resource's id above its position (schema v19); a
    /// position the key has no room for is refused, never folded into the next resource's.
    @Test func aPendingEntrysKeyHoldsItsResourceAndPosition() throws {
        #expect(try SQLiteStore.pendingEntryID(resource: 5, position: 3) == 5 << 24 + 3)
        #expect(try SQLiteStore.pendingEntryID(resource: 5, position: SQLiteStore.pendingPositionLimit - 1) < 6 << 24)
        #expect(throws: StoreError.self) { try SQLiteStore.pendingEntryID(resource: 5, position: SQLiteStore.pendingPositionLimit) }
        #expect(throws: StoreError.self) { try SQLiteStore.pendingEntryID(resource: 1 << 40, position: 0) }
    }
}
