import CardIndexing
import Foundation
import PostgresNIO
import PostgresTestSupport
@testable import RoloPostgres
import RoloStore
import Testing
import VCard

/// Holds a book's row locked from a transaction of its own, as a write of another process
/// does, until `release()`: a batch started meanwhile waits for the row, and the writes
/// sent after it queue up for the next batch.
///
/// `connections` says which connections the store's batches run on meanwhile (`Connections`).
private final class BookRowHold: Sendable {
    enum Connections {
        /// Each batch takes a connection of its own from then on
        /// (`WriteBatches.allowHeldConnections(0)`), so that the next batch waits for the
        /// running one to end and takes everything queued meanwhile, whatever its size: the
        /// tests of what a batch decides need its writes in one batch.
        case eachBatchItsOwn
        /// The book holds a connection, so the next batch goes once as many writes queued as
        /// the running one holds (the tests of `BookConnection`). Waits until the store finds
        /// itself alone on its database, which holding needs.
        case heldByTheBook
        /// Whatever the store decides (the test of when it holds none).
        case asTheStoreDecides
    }

    private let releaser: AsyncStream<Void>.Continuation
    private let holder: Task<Void, any Error>

    /// `beforeCommit` runs in the holding transaction once released, before it commits (as
    /// another process's write of the book would change it).
    init(_ store: PostgresStore, bookID: Int64, beforeCommit: String? = nil,
         connections: Connections = .eachBatchItsOwn) async throws {
        switch connections {
        case .eachBatchItsOwn:
            store.writeBatches.allowHeldConnections(0)
        case .heldByTheBook:
            // Batches hold a connection only in a process alone on its database.
            let deadline = ContinuousClock.now + .seconds(20)
            while !store.cardCache.isAlone && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            try #require(store.cardCache.isAlone, "the store never found itself alone on its database")
        case .asTheStoreDecides:
            break
        }
        let (locked, lockedSignal) = AsyncStream.makeStream(of: Void.self)
        let (released, releaser) = AsyncStream.makeStream(of: Void.self)
        self.releaser = releaser
        holder = Task {
            defer { lockedSignal.finish() }
            try await store.transaction { connection in
                try await connection.execute("SELECT 1 FROM collections WHERE id = \(bookID) FOR UPDATE")
                lockedSignal.yield()
                for await _ in released { break }
                if let beforeCommit { try await connection.execute(PostgresQuery(unsafeSQL: beforeCommit)) }
            }
        }
        for await _ in locked { break }
    }

    func release() async throws {
        releaser.yield()
        releaser.finish()
        try await holder.value
    }
}

@Suite(.closesStores) struct PostgresWriteBatchTests {
    /// Starts `write` and returns once the store's batches took it (`batches` grew) or queued
    /// it (`queued` grew), so that the next write queues after it. Fails when neither happened
    /// within 20 s (a write that went the other way).
    private static func send(_ store: PostgresStore, bookID: Int64, taken: Bool,
                             _ write: @escaping @Sendable () async throws -> PutResult) async throws -> Task<PutResult, any Error> {
        let batches = store.writeBatches
        let before = (batches.batchCount, batches.queuedWrites(collectionID: bookID))
        let task = Task { try await write() }
        let deadline = ContinuousClock.now + .seconds(20)
        while taken ? batches.batchCount == before.0 : batches.queuedWrites(collectionID: bookID) == before.1 {
            try #require(ContinuousClock.now < deadline, taken ? "the write was not taken into a batch" : "the write did not queue")
            try await Task.sleep(for: .milliseconds(2))
        }
        return task
    }

    private static func card(_ uid: String, fn: String) -> (Data, CardMetadata) {
        (Data(vcard(uid: uid, fn: fn).utf8),
         CardMetadata(uid: uid, kind: "individual", indexEntries: [IndexEntry(property: "FN", value: fn)], members: []))
    }

    private static func put(_ store: PostgresStore, _ bookID: Int64, _ name: String, fn: String,
                            _ precondition: WritePrecondition) async throws -> PutResult {
        let (data, card) = card(name, fn: fn)
        return try await store.putResource(collectionID: bookID, name: name, data: data, contentType: "text/vcard",
                                           card: card, precondition: precondition)
    }

    /// Writes queued while the book's row is taken commit in one transaction, in the order
    /// they came; one whose If-Match or If-None-Match fails is refused alone, its seq not
    /// taken, and the others commit with consecutive seqs.
    @Test func queuedPutsCommitTogetherAndARefusedOneFailsAlone() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        let a = try await fixture.put("a.vcf", fn: "A")
        let b = try await fixture.put("b.vcf", fn: "B")
        let batchesBefore = store.writeBatches.batchCount

        let hold = try await BookRowHold(store, bookID: book)
        let first = try await Self.send(store, bookID: book, taken: true) { try await Self.put(store, book, "c.vcf", fn: "C", .none) }
        let matching = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "a.vcf", fn: "A2", .ifMatch([a.etag]))
        }
        let stale = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "b.vcf", fn: "B2", .ifMatch(["\"stale\""]))
        }
        let new = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "d.vcf", fn: "D", .ifNoneMatchAny)
        }
        let taken = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "a.vcf", fn: "A3", .ifNoneMatchAny)
        }
        #expect(store.writeBatches.queuedWrites(collectionID: book) == 4)
        try await hold.release()

        #expect(try await first.value.seq == 3)
        #expect(try await matching.value.seq == 4)
        await #expect(throws: StoreError.preconditionFailed) { try await stale.value }
        let created = try await new.value
        #expect(created.seq == 5 && created.created)
        await #expect(throws: StoreError.preconditionFailed) { try await taken.value }
        #expect(store.writeBatches.batchCount - batchesBefore == 2, "the four queued writes shared one transaction")

        #expect(try await store.collection(id: book)?.syncSeq == 5)
        let changes = try await store.changes(collectionID: book, since: 2, limit: nil)
        #expect(Dictionary(uniqueKeysWithValues: changes.changes.map { ($0.name, $0.seq) }) == ["c.vcf": 3, "a.vcf": 4, "d.vcf": 5])
        #expect(try await store.resourceInfo(collectionID: book, name: "b.vcf")?.etag == b.etag)
        #expect(try await store.resource(collectionID: book, name: "a.vcf")?.data == Data(vcard(uid: "a.vcf", fn: "A2").utf8))
        #expect(try await fixture.integrityCheck() == [])
    }

    /// Updates and new cards queued together get the answers they get one by one (a stale
    /// If-Match, a UID held by another card refused; the rest written, in order).
    @Test func updatesQueuedTogetherAreJudgedAsOneByOne() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        let a = try await fixture.put("a.vcf", fn: "A")
        let b = try await fixture.put("b.vcf", fn: "B")
        try await fixture.put("held.vcf", uid: "held-uid", fn: "Held")

        let hold = try await BookRowHold(store, bookID: book)
        let first = try await Self.send(store, bookID: book, taken: true) { try await Self.put(store, book, "c.vcf", fn: "C", .none) }
        let matching = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "a.vcf", fn: "A2", .ifMatch([a.etag]))
        }
        let stale = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "b.vcf", fn: "B2", .ifMatch(["\"stale\""]))
        }
        let conflicting = try await Self.send(store, bookID: book, taken: false) {
            let (data, card) = Self.card("held-uid", fn: "Other")
            return try await store.putResource(collectionID: book, name: "other.vcf", data: data, contentType: "text/vcard",
                                               card: card, precondition: .none)
        }
        let plain = try await Self.send(store, bookID: book, taken: false) { try await Self.put(store, book, "e.vcf", fn: "E", .none) }
        try await hold.release()

        #expect(try await first.value.seq == 4)
        let updated = try await matching.value
        #expect(updated.seq == 5 && !updated.created)
        await #expect(throws: StoreError.preconditionFailed) { try await stale.value }
        await #expect(throws: StoreError.uidConflict(existingName: "held.vcf")) { try await conflicting.value }
        let created = try await plain.value
        #expect(created.seq == 6 && created.created)
        #expect(try await store.collection(id: book)?.syncSeq == 6)
        #expect(try await store.resourceInfo(collectionID: book, name: "b.vcf")?.etag == b.etag)
        #expect(try await store.resourceInfo(collectionID: book, name: "other.vcf") == nil)
        #expect(try await fixture.integrityCheck() == [])
    }

    /// With the book's connection held (`BookConnection`), the next batch is sent once as many
    /// writes queued as the running batch holds, and waits behind it on that connection: the
    /// running batch (c) waits for the book's row, the second write goes at once as a batch of
    /// its own (overlapped), and the three after queue, with no third batch while two are under
    /// way. Seqs follow the order the batches reach the book's row; a refused write fails alone.
    @Test func theNextBatchWaitsOnTheBooksConnectionBehindTheRunningOne() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        let a = try await fixture.put("a.vcf", fn: "A")
        let batchesBefore = store.writeBatches.batchCount, overlappedBefore = store.writeBatches.overlappedCount

        let hold = try await BookRowHold(store, bookID: book, connections: .heldByTheBook)
        let first = try await Self.send(store, bookID: book, taken: true) {
            try await Self.put(store, book, "c.vcf", fn: "C", .ifNoneMatchAny)
        }
        // Its statement sent: a batch taken later could otherwise reach the connection first.
        try await Self.waitForALockWait(store)
        let second = try await Self.send(store, bookID: book, taken: true) {
            try await Self.put(store, book, "d.vcf", fn: "D", .ifNoneMatchAny)
        }
        #expect(store.writeBatches.overlappedCount - overlappedBefore == 1, "sent while the first waited for the book's row")
        let matching = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "a.vcf", fn: "A2", .ifMatch([a.etag]))
        }
        let taken = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "c.vcf", fn: "C2", .ifNoneMatchAny)
        }
        let new = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "e.vcf", fn: "E", .ifNoneMatchAny)
        }
        #expect(store.writeBatches.queuedWrites(collectionID: book) == 3)
        #expect(store.writeBatches.batchCount - batchesBefore == 2)
        try await hold.release()

        #expect(try await first.value.seq == 2)
        #expect(try await second.value.seq == 3)
        #expect(try await matching.value.seq == 4)
        await #expect(throws: StoreError.preconditionFailed) { try await taken.value }
        #expect(try await new.value.seq == 5)
        #expect(store.writeBatches.batchCount - batchesBefore == 3, "the three queued writes shared the third batch")
        #expect(try await store.collection(id: book)?.syncSeq == 5)
        let changes = try await store.changes(collectionID: book, since: 1, limit: nil)
        #expect(Dictionary(uniqueKeysWithValues: changes.changes.map { ($0.name, $0.seq) })
            == ["c.vcf": 2, "d.vcf": 3, "a.vcf": 4, "e.vcf": 5])
        #expect(try await store.resource(collectionID: book, name: "c.vcf")?.data == Data(vcard(uid: "c.vcf", fn: "C").utf8))
        #expect(try await fixture.integrityCheck() == [])
    }

    /// With another process on the database the book's batches hold no connection: the next
    /// batch waits for the running one to end and takes every write queued meanwhile. (Two
    /// processes each sending their next batch behind their running one waited for each
    /// other's turns of the book's row: If-Match 10-18 % slower.)
    @Test func aProcessNotAloneOnItsDatabaseSendsNoBatchBehindTheRunningOne() async throws {
        let (fixture, other) = try await CoordinationTests.twoStores()
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        // A store that counted the processes before the other listened took itself to be alone
        // until it heard the other announce itself: wait until both listen and this one knows.
        let deadline = ContinuousClock.now + .seconds(20)
        while !(store.cardCache.isListening && other.cardCache.isListening && !store.cardCache.isAlone),
              ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(store.cardCache.isListening && other.cardCache.isListening)
        try #require(!store.cardCache.isAlone, "the store took itself to be alone beside another process")
        let batchesBefore = store.writeBatches.batchCount, overlappedBefore = store.writeBatches.overlappedCount

        let hold = try await BookRowHold(store, bookID: book, connections: .asTheStoreDecides)
        let first = try await Self.send(store, bookID: book, taken: true) {
            try await Self.put(store, book, "a.vcf", fn: "A", .ifNoneMatchAny)
        }
        try await Self.waitForALockWait(store)
        // Alone, this one would go at once as a batch of its own behind the first.
        let second = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "b.vcf", fn: "B", .ifNoneMatchAny)
        }
        let third = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "c.vcf", fn: "C", .ifNoneMatchAny)
        }
        #expect(store.writeBatches.queuedWrites(collectionID: book) == 2)
        #expect(store.writeBatches.batchCount - batchesBefore == 1)
        try await hold.release()

        #expect(try await first.value.seq == 1)
        #expect(try await second.value.seq == 2)
        #expect(try await third.value.seq == 3)
        #expect(store.writeBatches.batchCount - batchesBefore == 2, "the two queued writes shared the second batch")
        #expect(store.writeBatches.overlappedCount == overlappedBefore, "no batch was sent behind a running one")
        #expect(try await fixture.integrityCheck() == [])
    }

    /// A batch on the book's held connection whose statement fails (a name taken) goes write by
    /// write in a transaction there, alone (`ConnectionTurns`), while the batch after it was sent
    /// behind it: every write is answered as one by one, the seqs have no gap and no repeat
    /// whichever went first, and nothing else is written.
    @Test func aBatchGoingWriteByWriteOnTheBooksHeldConnectionLeavesTheBatchBehindItWhole() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        let a = try await fixture.put("a.vcf", fn: "A")
        let hold = try await BookRowHold(store, bookID: book, connections: .heldByTheBook)
        let first = try await Self.send(store, bookID: book, taken: true) {
            try await Self.put(store, book, "c.vcf", fn: "C", .ifNoneMatchAny)
        }
        try await Self.waitForALockWait(store)
        let overlappedBefore = store.writeBatches.overlappedCount
        // The second batch: a taken name beside a new card, as one statement that must fail.
        let takenName = try await Self.send(store, bookID: book, taken: true) {
            try await Self.put(store, book, "a.vcf", fn: "A2", .ifNoneMatchAny)
        }
        let beside = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "g.vcf", fn: "G", .ifNoneMatchAny)
        }
        let after = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "e.vcf", fn: "E", .ifNoneMatchAny)
        }
        try await hold.release()

        #expect(try await first.value.seq == 2)
        await #expect(throws: StoreError.preconditionFailed) { try await takenName.value }
        let seqs = [try await beside.value.seq, try await after.value.seq]
        #expect(Set(seqs) == [3, 4])
        #expect(store.writeBatches.overlappedCount > overlappedBefore)
        #expect(try await store.collection(id: book)?.syncSeq == 4)
        let changes = try await store.changes(collectionID: book, since: 1, limit: nil)
        #expect(Dictionary(uniqueKeysWithValues: changes.changes.map { ($0.name, $0.seq) })
            == ["c.vcf": 2, "g.vcf": seqs[0], "e.vcf": seqs[1]])
        #expect(try await store.resourceInfo(collectionID: book, name: "a.vcf")?.etag == a.etag)
        #expect(try await fixture.integrityCheck() == [])
    }

    /// Turns on a book's held connection: a transaction waits for the statements in their turn,
    /// and a statement that comes after it waits for it, first come first in.
    @Test func aTransactionOnAHeldConnectionWaitsForTheStatementsAndKeepsOutThoseAfterIt() async throws {
        let turns = ConnectionTurns()
        await turns.enter(alone: false)
        await turns.enter(alone: false)
        let transaction = Task { await turns.enter(alone: true) }
        while turns.counts.waiting < 1 { try await Task.sleep(for: .milliseconds(1)) }
        let statement = Task { await turns.enter(alone: false) }
        while turns.counts.waiting < 2 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(turns.counts == (2, 2), "a statement after a waiting transaction waits too")
        turns.leave(alone: false)
        #expect(turns.counts == (1, 2), "the transaction waits for the last statement")
        turns.leave(alone: false)
        await transaction.value
        #expect(turns.counts == (1, 1), "the transaction alone, the statement after it waiting")
        turns.leave(alone: true)
        await statement.value
        #expect(turns.counts == (1, 0))
        turns.leave(alone: false)
        await turns.enter(alone: true)
        #expect(turns.counts == (1, 0))
    }

    /// Another process hears of a batch once it committed, with the batch's last seq (a
    /// refused write of it took none) and the Push-Dont-Notify its writes share (the
    /// refused one, which left out nobody, is not among them).
    @Test func anotherProcessHearsABatchWithItsLastSeq() async throws {
        try await Self.withAnotherProcessListening { store, book, other, exclusion in
            let hold = try await BookRowHold(store, bookID: book)
            let (first, good1, refused) = try await Self.sendWrittenWrittenRefused(store, book, exclusion: exclusion)
            let good2 = try await Self.send(store, bookID: book, taken: false) {
                try await PushExclusion.$current.withValue(exclusion) { try await Self.put(store, book, "c.vcf", fn: "C", .none) }
            }
            try await hold.release()
            #expect(try await first.value.seq == 1)
            #expect(try await good1.value.seq == 2)
            await #expect(throws: StoreError.preconditionFailed) { try await refused.value }
            #expect(try await good2.value.seq == 3)

            let heard = try await Self.heard(by: other, upTo: 3)
            #expect(heard.last == BookChange(collectionID: book, seq: 3, exclusion: exclusion))
            #expect(heard.allSatisfy { $0.seq <= 3 })
        }
    }

    /// The last write's statement moves the book's seq; when that write is refused, a
    /// statement of its own does, and the other process still hears the batch's last seq with
    /// the Push-Dont-Notify of the writes written (not the refused one's, which left out nobody).
    @Test func aBatchWhoseLastWriteIsRefusedIsHeardWithItsWrittenWritesExclusion() async throws {
        try await Self.withAnotherProcessListening { store, book, other, exclusion in
            let hold = try await BookRowHold(store, bookID: book)
            let (first, good, refused) = try await Self.sendWrittenWrittenRefused(store, book, exclusion: exclusion)
            try await hold.release()
            #expect(try await first.value.seq == 1)
            #expect(try await good.value.seq == 2)
            await #expect(throws: StoreError.preconditionFailed) { try await refused.value }
            #expect(try await store.collection(id: book)?.syncSeq == 2)

            let heard = try await Self.heard(by: other, upTo: 2)
            #expect(heard.last == BookChange(collectionID: book, seq: 2, exclusion: exclusion))
            #expect(heard.allSatisfy { $0.seq <= 2 })
        }
    }

    /// Two stores on one database, `other` following the book's changes as another process
    /// does, and the Push-Dont-Notify the writes of the test share.
    private static func withAnotherProcessListening(
        _ body: (PostgresStore, Int64, PostgresStore, PushExclusion) async throws -> Void) async throws {
        let (fixture, other) = try await CoordinationTests.twoStores()
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let listening = try await follow(other)
        defer { listening.cancel(); other.bookChanges.close() }
        try await body(store, fixture.book.id, other, PushExclusion.registrations(user: "alice", ids: ["r1"]))
    }

    /// Behind a held book row: a.vcf (the batch's first, taken) and b.vcf written with
    /// `exclusion`, then a stale If-Match on a.vcf that will be refused (leaving out nobody).
    private static func sendWrittenWrittenRefused(_ store: PostgresStore, _ book: Int64, exclusion: PushExclusion) async throws
        -> (Task<PutResult, any Error>, Task<PutResult, any Error>, Task<PutResult, any Error>) {
        let first = try await send(store, bookID: book, taken: true) {
            try await PushExclusion.$current.withValue(exclusion) { try await put(store, book, "a.vcf", fn: "A", .none) }
        }
        let written = try await send(store, bookID: book, taken: false) {
            try await PushExclusion.$current.withValue(exclusion) { try await put(store, book, "b.vcf", fn: "B", .none) }
        }
        let refused = try await send(store, bookID: book, taken: false) {
            try await put(store, book, "a.vcf", fn: "A2", .ifMatch(["\"stale\""]))
        }
        return (first, written, refused)
    }

    /// `other` following the book changes (`followBookChanges`) until the task is cancelled;
    /// LISTEN is in place when this returns.
    private static func follow(_ other: PostgresStore) async throws -> Task<Void, Never> {
        other.bookChanges.open()
        let listening = Task { await other.followBookChanges() }
        // LISTEN is in place once the initial sweep has run; give it a moment.
        try await Task.sleep(for: .milliseconds(500))
        return listening
    }

    /// What `other` hears, until it heard of `seq` (each take merges what came).
    private static func heard(by other: PostgresStore, upTo seq: Int64) async throws -> [BookChange] {
        var heard: [BookChange] = []
        while heard.last.map({ $0.seq < seq }) ?? true {
            heard += try await CoordinationTests().withTimeout { await other.bookChanges.take() }
        }
        return heard
    }

    /// A batch whose every write is refused commits nothing: the book's seq stays.
    @Test func aBatchOfRefusedWritesLeavesTheBookAsItWas() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        try await fixture.put("a.vcf", fn: "A")
        let before = try #require(try await store.collection(id: book))
        await #expect(throws: StoreError.preconditionFailed) {
            try await Self.put(store, book, "a.vcf", fn: "A2", .ifMatch(["\"stale\""]))
        }
        let after = try #require(try await store.collection(id: book))
        #expect(after.syncSeq == before.syncSeq)
        #expect(after.modified == before.modified)
    }

    /// A statement the server refuses aborts the batch's transaction: its writes then run one
    /// by one, so that only the refused one fails and its neighbours commit.
    @Test func aWriteTheServerRefusesFailsAloneAndItsBatchCommitsWithoutIt() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        try await store.autocommit { connection in
            try await connection.execute("""
                CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.name = 'bad.vcf' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$
                """)
            try await connection.execute("CREATE TRIGGER refuse_bad BEFORE INSERT ON resources FOR EACH ROW EXECUTE FUNCTION refuse_bad()")
        }
        let batchesBefore = store.writeBatches.batchCount
        let hold = try await BookRowHold(store, bookID: book)
        let first = try await Self.send(store, bookID: book, taken: true) { try await Self.put(store, book, "a.vcf", fn: "A", .none) }
        let good1 = try await Self.send(store, bookID: book, taken: false) { try await Self.put(store, book, "b.vcf", fn: "B", .none) }
        let bad = try await Self.send(store, bookID: book, taken: false) { try await Self.put(store, book, "bad.vcf", fn: "X", .none) }
        let good2 = try await Self.send(store, bookID: book, taken: false) { try await Self.put(store, book, "c.vcf", fn: "C", .none) }
        try await hold.release()

        #expect(try await first.value.seq == 1)
        #expect(try await good1.value.seq == 2)
        await #expect(throws: (any Error).self) { try await bad.value }
        #expect(try await good2.value.seq == 3)
        // The first write's batch, the batch of three that failed, and each of the three again.
        #expect(store.writeBatches.batchCount - batchesBefore == 5)
        #expect(try await store.collection(id: book)?.syncSeq == 3)
        #expect(try await store.resourceInfo(collectionID: book, name: "bad.vcf") == nil)
        try await store.autocommit { connection in try await connection.execute("DROP TRIGGER refuse_bad ON resources") }
        #expect(try await fixture.integrityCheck() == [])
    }

    /// A batch is judged by one statement and written by another (`putTogether`): what it
    /// leaves in every table is what the same writes leave one by one. The batch replaces a
    /// card with a photo (the old photo moves into the history), a group (its members
    /// change), adds a listed card sharing the new photo, and has a stale If-Match and a
    /// taken UID refused.
    @Test func aBatchWrittenTogetherLeavesWhatItsWritesLeaveOneByOne() async throws {
        let batched = try await StoreFixture.make(.postgres)
        defer { batched.close() }
        let oneByOne = try await StoreFixture.make(.postgres)
        defer { oneByOne.close() }
        let photo1 = "PHOTO;ENCODING=b;TYPE=JPEG:" + String(repeating: "QUJD", count: 400) + "\r\n"
        let photo2 = "PHOTO;ENCODING=b;TYPE=JPEG:" + String(repeating: "REVG", count: 400) + "\r\n"
        @Sendable func card(_ uid: String, _ fn: String, _ extra: String = "") -> Data {
            Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(uid)\r\nFN:\(fn)\r\n\(extra)END:VCARD\r\n".utf8)
        }
        @Sendable func group(_ members: [String]) -> Data {
            card("group", "Team", "KIND:group\r\n" + members.map { "MEMBER:urn:uuid:\($0)\r\n" }.joined())
        }
        @Sendable func put(_ fixture: StoreFixture, _ name: String, _ data: Data, _ precondition: WritePrecondition,
                           as author: ChangeAuthor? = nil) async throws -> PutResult {
            let metadata = try VCardParser.parse(Array(data), mode: .lenient).first.map(CardMetadata.init(card:))
            return try await ChangeAuthor.$current.withValue(author) {
                try await fixture.cards.putResource(collectionID: fixture.book.id, name: name, data: data,
                                                    contentType: "text/vcard; charset=utf-8",
                                                    card: metadata, precondition: precondition)
            }
        }
        let phone = ChangeAuthor(user: "alice", credentialID: 7)
        var before: [String: String] = [:]
        for fixture in [batched, oneByOne] {
            before["photo.vcf"] = try await put(fixture, "photo.vcf", card("photo", "Photo", "ORG:Acme\r\n" + photo1), .none).etag
            before["group.vcf"] = try await put(fixture, "group.vcf", group(["x", "y"]), .none).etag
            before["plain.vcf"] = try await put(fixture, "plain.vcf", card("plain", "Plain"), .none).etag
        }
        let first: @Sendable (StoreFixture) async throws -> PutResult = { try await put($0, "first.vcf", card("first", "First"), .none) }
        let etags = before
        let writes: [@Sendable (StoreFixture) async throws -> PutResult] = [
            { try await put($0, "photo.vcf", card("photo", "Photo Two", "ORG:Acme\r\n" + photo2), .ifMatch([etags["photo.vcf"]!]), as: phone) },
            { try await put($0, "group.vcf", group(["x", "z"]), .ifMatch([etags["group.vcf"]!])) },
            { try await put($0, "new.vcf", card("new", "New", "EMAIL:new@example.com\r\nTEL:+49 1\r\n" + photo2), .ifNoneMatchAny, as: phone) },
            { try await put($0, "plain.vcf", card("plain", "Plain Two"), .ifMatch(["\"stale\""])) },
            { try await put($0, "taken.vcf", card("first", "Taken"), .none) },
        ]

        // Batched: queued behind the held book row, then written as one batch after `first`.
        let store = try #require(batched.store as? PostgresStore)
        let book = batched.book.id
        let batchesBefore = store.writeBatches.batchCount
        let hold = try await BookRowHold(store, bookID: book)
        var tasks = [try await Self.send(store, bookID: book, taken: true) { try await first(batched) }]
        for write in writes { tasks.append(try await Self.send(store, bookID: book, taken: false) { try await write(batched) }) }
        try await hold.release()
        var together: [String] = []
        for task in tasks { together.append(await Self.outcome { try await task.value }) }
        #expect(store.writeBatches.batchCount - batchesBefore == 2, "the five queued writes shared one transaction")
        #expect(store.writeBatches.togetherCount == 1, "and were written by one statement")
        #expect(store.writeBatches.togetherCount == 1, "and were written by one statement")

        var alone = [await Self.outcome { try await first(oneByOne) }]
        for write in writes { alone.append(await Self.outcome { try await write(oneByOne) }) }
        #expect(together == alone)
        #expect(alone.filter { $0.hasPrefix("written") }.count == 4)

        try await Self.expectSameRows(batched, oneByOne)
        // The replaced photo is in the history with its own photo.
        let history = try #require(batched.cards as? any CardHistoryStore)
        let versions = try await history.cardVersions(collectionID: book, name: "photo.vcf")
        #expect(versions.map(\.data) == [card("photo", "Photo", "ORG:Acme\r\n" + photo1), card("photo", "Photo Two", "ORG:Acme\r\n" + photo2)])
        #expect(try await batched.integrityCheck() == [])
    }

    /// Every table a card's write touches holds the same rows in both (ids aside), and none
    /// is empty but those named in `empty` (new cards alone keep no history parts apart).
    private static func expectSameRows(_ a: StoreFixture, _ b: StoreFixture, empty: Set<String> = [],
                                       sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let tables = [
            ("resources", "SELECT concat_ws('|', name, content_type, etag, size, seq, coalesce(uid, '-'), coalesce(kind, '-'), md5(data)) FROM resources ORDER BY name"),
            ("card_index", """
                SELECT concat_ws('|', r.name, i.position, i.property, i.value, coalesce(i.value_ascii, '-'), i.value_unicode)
                FROM card_index i JOIN resources r ON r.id = i.resource_id ORDER BY r.name, i.position
                """),
            ("group_members", "SELECT concat_ws('|', r.name, m.position, m.member_uid) FROM group_members m JOIN resources r ON r.id = m.resource_id ORDER BY 1"),
            ("card_listings", """
                SELECT concat_ws('|', name, is_group, sort_key, display_name, coalesce(organization, '-'), coalesce(email, '-'),
                                 coalesce(phone, '-'), has_photo, search_text) FROM card_listings ORDER BY name
                """),
            ("changes", """
                SELECT concat_ws('|', name, seq, deleted, coalesce(actor_user, '-'), coalesce(actor_credential, -1), coalesce(etag, '-'),
                                 coalesce(content_type, '-')) FROM changes ORDER BY name
                """),
            ("card_versions", """
                SELECT concat_ws('|', name, seq, coalesce(etag, '-'), coalesce(content_type, '-'), coalesce(actor_user, '-'),
                                 coalesce(actor_credential, -1)) FROM card_versions ORDER BY seq
                """),
            ("card_version_bodies", "SELECT concat_ws('|', etag, md5(data)) FROM card_version_bodies ORDER BY 1"),
            ("card_version_parts", "SELECT concat_ws('|', hash, md5(data)) FROM card_version_parts ORDER BY 1"),
            ("card_version_part_refs", "SELECT concat_ws('|', etag, hash, coalesce(start, -1), coalesce(length, -1)) FROM card_version_part_refs ORDER BY 1"),
            ("collections", "SELECT sync_seq::TEXT FROM collections WHERE id = \(a.book.id)"),
        ]
        for (name, table) in tables {
            let rows = try await a.texts(table)
            #expect(rows.isEmpty == empty.contains(name), "\(name)", sourceLocation: sourceLocation)
            #expect(rows == (try await b.texts(table)), "\(name)", sourceLocation: sourceLocation)
        }
    }

    /// Two writes of one batch to the same name: the second's If-Match names the first's
    /// ETag, which it sees, as it would one by one (such a batch goes one write at a time).
    @Test func twoWritesOfOneBatchToOneNameSeeEachOther() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        let a = try await fixture.put("a.vcf", fn: "A")
        let hold = try await BookRowHold(store, bookID: book)
        let first = try await Self.send(store, bookID: book, taken: true) { try await Self.put(store, book, "b.vcf", fn: "B", .none) }
        let second = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "a.vcf", fn: "A2", .ifMatch([a.etag]))
        }
        let third = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "a.vcf", fn: "A3", .ifMatch([ETag.of(Data(vcard(uid: "a.vcf", fn: "A2").utf8))]))
        }
        let fourth = try await Self.send(store, bookID: book, taken: false) { try await Self.put(store, book, "c.vcf", fn: "C", .none) }
        try await hold.release()
        #expect(try await first.value.seq == 2)
        #expect(try await second.value.seq == 3)
        #expect(try await third.value.seq == 4)
        #expect(try await fourth.value.seq == 5)
        #expect(try await store.resource(collectionID: book, name: "a.vcf")?.data == Data(vcard(uid: "a.vcf", fn: "A3").utf8))
        #expect(store.writeBatches.togetherCount == 0)
        #expect(try await fixture.integrityCheck() == [])
    }

    /// A batch of new cards only (If-None-Match: *) is written without a look-up; when a name
    /// or a UID of it is taken, its statement writes fewer rows than it has writes, and each
    /// write goes again on its own: the new card is written, the taken name and UID refused.
    @Test func aBatchOfNewCardsWithATakenNameOrUIDGoesAgainWriteByWrite() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        let a = try await fixture.put("a.vcf", fn: "A")
        try await fixture.put("b.vcf", fn: "B")
        let batchesBefore = store.writeBatches.batchCount
        let hold = try await BookRowHold(store, bookID: book)
        let first = try await Self.send(store, bookID: book, taken: true) { try await Self.put(store, book, "c.vcf", fn: "C", .none) }
        let new = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "d.vcf", fn: "D", .ifNoneMatchAny)
        }
        let takenName = try await Self.send(store, bookID: book, taken: false) {
            try await Self.put(store, book, "a.vcf", fn: "A2", .ifNoneMatchAny)
        }
        let takenUID = try await Self.send(store, bookID: book, taken: false) {
            let (data, card) = Self.card("b.vcf", fn: "Other B")
            return try await store.putResource(collectionID: book, name: "e.vcf", data: data, contentType: "text/vcard",
                                               card: card, precondition: .ifNoneMatchAny)
        }
        try await hold.release()
        #expect(try await first.value.seq == 3)
        #expect(try await new.value.seq == 4)
        await #expect(throws: StoreError.preconditionFailed) { try await takenName.value }
        await #expect(throws: StoreError.uidConflict(existingName: "b.vcf")) { try await takenUID.value }
        #expect(store.writeBatches.togetherCount == 1)
        // The first write; the batch of three, given up at its statement, then judged write by
        // write in the book's turn.
        #expect(store.writeBatches.batchCount - batchesBefore == 2)
        #expect(try await store.collection(id: book)?.syncSeq == 4)
        #expect(try await store.resourceInfo(collectionID: book, name: "a.vcf")?.etag == a.etag)
        #expect(try await store.resourceInfo(collectionID: book, name: "e.vcf") == nil)
        #expect(try await fixture.integrityCheck() == [])
    }

    /// A batch of new cards only is one statement that takes the book's turn itself
    /// (`putNewTogether`): it leaves in every table what the same writes leave one by one
    /// (a card with a photo and an author, a group, a card sharing the photo).
    @Test func aBatchOfNewCardsLeavesWhatItsWritesLeaveOneByOne() async throws {
        let batched = try await StoreFixture.make(.postgres)
        defer { batched.close() }
        let oneByOne = try await StoreFixture.make(.postgres)
        defer { oneByOne.close() }
        let photo = "PHOTO;ENCODING=b;TYPE=JPEG:" + String(repeating: "QUJD", count: 400) + "\r\n"
        @Sendable func put(_ fixture: StoreFixture, _ name: String, _ text: String, as author: ChangeAuthor? = nil) async throws -> PutResult {
            let data = Data("BEGIN:VCARD\r\nVERSION:4.0\r\n\(text)END:VCARD\r\n".utf8)
            let metadata = try VCardParser.parse(Array(data), mode: .lenient).first.map(CardMetadata.init(card:))
            return try await ChangeAuthor.$current.withValue(author) {
                try await fixture.cards.putResource(collectionID: fixture.book.id, name: name, data: data,
                                                    contentType: "text/vcard; charset=utf-8", card: metadata, precondition: .ifNoneMatchAny)
            }
        }
        let phone = ChangeAuthor(user: "alice", credentialID: 7)
        let first: @Sendable (StoreFixture) async throws -> PutResult = { try await put($0, "first.vcf", "UID:first\r\nFN:First\r\n") }
        let writes: [@Sendable (StoreFixture) async throws -> PutResult] = [
            { try await put($0, "anna.vcf", "UID:anna\r\nFN:Anna Åberg\r\nEMAIL:anna@example.com\r\nTEL:+49 170 1\r\nORG:Acme\r\n" + photo, as: phone) },
            { try await put($0, "team.vcf", "UID:team\r\nKIND:group\r\nFN:Team\r\nMEMBER:urn:uuid:anna\r\nMEMBER:urn:uuid:first\r\n") },
            { try await put($0, "björn.vcf", "UID:björn\r\nFN:Björn\r\n" + photo, as: phone) },
        ]
        let store = try #require(batched.store as? PostgresStore)
        let hold = try await BookRowHold(store, bookID: batched.book.id)
        var tasks = [try await Self.send(store, bookID: batched.book.id, taken: true) { try await first(batched) }]
        for write in writes {
            tasks.append(try await Self.send(store, bookID: batched.book.id, taken: false) { try await write(batched) })
        }
        try await hold.release()
        var together: [String] = []
        for task in tasks { together.append(await Self.outcome { try await task.value }) }
        #expect(store.writeBatches.togetherCount == 1, "the three new cards were written by one statement")

        var alone = [await Self.outcome { try await first(oneByOne) }]
        for write in writes { alone.append(await Self.outcome { try await write(oneByOne) }) }
        #expect(together == alone)
        #expect(alone.allSatisfy { $0.hasPrefix("written") })
        // New cards: each one's version is its change row (v13), none is a row of card_versions.
        try await Self.expectSameRows(batched, oneByOne, empty: ["card_version_parts", "card_versions"])
        #expect(try await batched.integrityCheck() == [])
    }

    /// A batch of new cards waits for the book's row inside its statement; its seqs follow the
    /// book's seq as it finds it once its turn comes (here moved by another process's write
    /// meanwhile, with the same Push-Dont-Notify, which the other process's notifications then
    /// share), and the other process hears the batch's last seq with its Push-Dont-Notify.
    @Test func aBatchOfNewCardsTakesItsSeqsFromTheBookAsItsTurnFindsIt() async throws {
        try await Self.withAnotherProcessListening { store, book, other, exclusion in
            let hold = try await BookRowHold(store, bookID: book,
                                             beforeCommit: """
                                                 UPDATE collections SET sync_seq = sync_seq + 5 WHERE id = \(book)
                                                 AND set_config('rolo.push_exclusion', '\(exclusion.encoded)', true) IS NOT NULL
                                                 """)
            let batch = (1...3).map { index in
                let (data, card) = Self.card("n\(index).vcf", fn: "New \(index)")
                return WriteBatches.Pending(write: ResourceWrite(name: "n\(index).vcf", data: data, contentType: "text/vcard", card: card),
                                            precondition: .ifNoneMatchAny, exclusion: exclusion, answer: { _ in })
            }
            let written = Task { try await store.putBatch(collectionID: book, batch) }
            try await Self.waitForALockWait(store)
            try await hold.release()
            let seqs = try await written.value.map { try $0.get().seq }
            #expect(seqs == [6, 7, 8])
            #expect(store.writeBatches.togetherCount == 1)
            #expect(try await store.collection(id: book)?.syncSeq == 8)
            let changes = try await store.changes(collectionID: book, since: 0, limit: nil)
            #expect(changes.changes.map(\.seq).sorted() == [6, 7, 8])
            let heard = try await Self.heard(by: other, upTo: 8)
            #expect(heard.last == BookChange(collectionID: book, seq: 8, exclusion: exclusion))
        }
    }

    /// A batch's look-up runs before the book's turn; a card written between the two, even
    /// back to the same bytes (here by another process, with its index rows written anew),
    /// fails the batch's statement, and the batch goes write by write in the book's turn: the
    /// card's index then holds the new e-mail alone, not the rows the other write made.
    @Test func anUpdateBatchWhoseCardIsWrittenAfterItsLookUpGoesWriteByWrite() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        @Sendable func pending(_ name: String, email: String, ifMatch etag: String) throws -> WriteBatches.Pending {
            let data = Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(name)\r\nFN:\(name)\r\nEMAIL:\(email)\r\nEND:VCARD\r\n".utf8)
            let card = try VCardParser.parse(Array(data), mode: .lenient).first.map(CardMetadata.init(card:))
            return WriteBatches.Pending(write: ResourceWrite(name: name, data: data, contentType: "text/vcard", card: card),
                                        precondition: .ifMatch([etag]), exclusion: .nobody, answer: { _ in })
        }
        var etags: [String] = []
        for name in ["a.vcf", "b.vcf"] {
            let data = Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(name)\r\nFN:\(name)\r\nEMAIL:old@example.com\r\nEND:VCARD\r\n".utf8)
            let card = try VCardParser.parse(Array(data), mode: .lenient).first.map(CardMetadata.init(card:))
            etags.append(try await store.putResource(collectionID: book, name: name, data: data, contentType: "text/vcard",
                                                     card: card, precondition: .none).etag)
        }
        let hold = try await BookRowHold(store, bookID: book, beforeCommit: """
            WITH rewritten AS (UPDATE resources SET seq = seq + 100 WHERE collection_id = \(book) AND name = 'a.vcf' RETURNING id),
                 old AS (DELETE FROM card_index WHERE resource_id IN (SELECT id FROM rewritten) RETURNING *)
            INSERT INTO card_index SELECT * FROM old
            """)
        let batch = [try pending("a.vcf", email: "new@example.com", ifMatch: etags[0]),
                     try pending("b.vcf", email: "new@example.com", ifMatch: etags[1])]
        let written = Task { try await store.putBatch(collectionID: book, batch) }
        try await Self.waitForALockWait(store)
        try await hold.release()
        let seqs = try await written.value.map { try $0.get().seq }
        #expect(seqs == [3, 4])
        #expect(store.writeBatches.togetherCount == 1, "the batch went to its statement")
        #expect(try await fixture.texts("""
            SELECT i.value FROM card_index i JOIN resources r ON r.id = i.resource_id
            WHERE r.name = 'a.vcf' AND i.property = 'EMAIL' ORDER BY 1
            """) == ["new@example.com"])
        #expect(try await fixture.integrityCheck() == [])
    }

    /// An update batch takes what its requests' lookups read of their cards
    /// (`LookupAhead.MemberRow`) instead of a look-up of its own when that covers every write,
    /// and still writes only on the cards as found:
    /// - rows for both cards: no look-up (a row whose ETag the test changed decides the
    ///   If-Match, which a look-up would have read from the card), one statement;
    /// - a row read before its card was written again (an older seq): write by write, each
    ///   judged on the card as it is, so the If-Match of the older ETag is refused and the
    ///   other write commits;
    /// - a write that changes its card's UID, or has no row, is looked up.
    @Test func anUpdateBatchTakesTheRowsItsRequestsLookupsReadAndChecksThem() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        @Sendable func data(_ name: String, _ email: String, uid: String? = nil) -> Data {
            Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(uid ?? name)\r\nFN:\(name)\r\nEMAIL:\(email)\r\nEND:VCARD\r\n".utf8)
        }
        @Sendable func pending(_ name: String, email: String, uid: String? = nil, ifMatch etag: String,
                               found: LookupAhead.MemberRow?) throws -> WriteBatches.Pending {
            let body = data(name, email, uid: uid)
            let card = try VCardParser.parse(Array(body), mode: .lenient).first.map(CardMetadata.init(card:))
            return WriteBatches.Pending(write: ResourceWrite(name: name, data: body, contentType: "text/vcard", card: card),
                                        precondition: .ifMatch([etag]), found: found, exclusion: .nobody, answer: { _ in })
        }
        /// The card's row as a request's lookup reads it.
        func row(_ name: String) async throws -> LookupAhead.MemberRow {
            let found = try await store.autocommit { connection in
                try await connection.rows(PostgresQuery(unsafeSQL: """
                    SELECT id, etag, uid, seq FROM resources WHERE collection_id = \(book) AND name = '\(name)'
                    """)).first?.decode((Int64, String, String, Int64).self)
            }
            let (id, etag, uid, seq) = try #require(found)
            return LookupAhead.MemberRow(collectionID: book, id: id, name: name, etag: etag, uid: uid, seq: seq)
        }
        for name in ["a.vcf", "b.vcf"] {
            let body = data(name, "old@example.com")
            let card = try VCardParser.parse(Array(body), mode: .lenient).first.map(CardMetadata.init(card:))
            _ = try await store.putResource(collectionID: book, name: name, data: body, contentType: "text/vcard",
                                            card: card, precondition: .none)
        }
        let a1 = try await row("a.vcf"), b1 = try await row("b.vcf")
        var altered = a1
        altered.etag = "\"read-ahead\""
        let first = [try pending("a.vcf", email: "new@example.com", ifMatch: altered.etag, found: altered),
                     try pending("b.vcf", email: "new@example.com", ifMatch: b1.etag, found: b1)]
        #expect(PostgresStore.targetsReadAhead(first) != nil)
        let seqs = try await store.putBatch(collectionID: book, first).map { try $0.get().seq }
        #expect(seqs == [3, 4])
        #expect(store.writeBatches.togetherCount == 1, "the batch went to its statement")

        // a.vcf's row as read before that batch: its seq is an older one.
        let b2 = try await row("b.vcf")
        let second = [try pending("a.vcf", email: "newer@example.com", ifMatch: a1.etag, found: a1),
                      try pending("b.vcf", email: "newer@example.com", ifMatch: b2.etag, found: b2)]
        let outcomes = try await store.putBatch(collectionID: book, second)
        guard case .failure(StoreError.preconditionFailed) = outcomes[0] else {
            Issue.record("the write on the older row was answered \(outcomes[0])")
            return
        }
        #expect(try outcomes[1].get().seq == 5)
        #expect(store.writeBatches.togetherCount == 2, "the second batch went to its statement first")
        #expect(try await fixture.texts("""
            SELECT r.name || ' ' || i.value FROM card_index i JOIN resources r ON r.id = i.resource_id
            WHERE i.property = 'EMAIL' ORDER BY 1
            """) == ["a.vcf new@example.com", "b.vcf newer@example.com"])

        let a3 = try await row("a.vcf")
        #expect(PostgresStore.targetsReadAhead([try pending("a.vcf", email: "x@example.com", uid: "other", ifMatch: a3.etag,
                                                            found: a3)]) == nil, "a changed UID is looked up")
        #expect(PostgresStore.targetsReadAhead([try pending("a.vcf", email: "x@example.com", ifMatch: a3.etag,
                                                            found: nil)]) == nil, "a write without a row is looked up")
        #expect(try await fixture.integrityCheck() == [])
    }

    /// A batch of new cards whose connection ends while its statement runs (here the server
    /// ends it, as a restart does, while the statement waits for the book's row): every write
    /// is answered unavailable and the statement is not run again (a lost connection cannot
    /// tell whether it committed), so nothing is written once the row is free. The next write
    /// goes through.
    @Test func aBatchOfNewCardsWhoseConnectionEndsIsAnsweredUnavailableAndNotRunAgain() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        let hold = try await BookRowHold(store, bookID: book)
        let batch = (1...2).map { index in
            let (data, card) = Self.card("n\(index).vcf", fn: "New \(index)")
            return WriteBatches.Pending(write: ResourceWrite(name: "n\(index).vcf", data: data, contentType: "text/vcard", card: card),
                                        precondition: .ifNoneMatchAny, exclusion: .nobody, answer: { _ in })
        }
        let written = Task { try await store.putBatch(collectionID: book, batch) }
        try await Self.waitForALockWait(store)
        _ = try await fixture.texts("SELECT pg_terminate_backend(pid)::TEXT FROM pg_stat_activity WHERE \(Self.waitingForARow)")
        // Freed before the answer is awaited: a statement run again would now write.
        try await hold.release()
        let outcome = await written.result
        guard case .failure(let error) = outcome, case .unavailable? = error as? StoreError else {
            Issue.record("answered \(outcome), not unavailable")
            return
        }
        #expect(try await store.collection(id: book)?.syncSeq == 0)
        #expect(try await store.resourceInfo(collectionID: book, name: "n1.vcf") == nil)
        #expect(try await fixture.put("after.vcf", fn: "After").seq == 1)
        #expect(try await fixture.integrityCheck() == [])
    }

    /// A database from before `v12-batch-all-or-nothing` gets the check its batches need,
    /// keeping its cards, ETags and sync tokens; a batch of two updates then goes to one
    /// statement and a batch whose card changed after its look-up goes write by write.
    @Test func aVersion11DatabaseGetsTheBatchCheckKeepingCardsETagsAndSyncTokens() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        let card = try await AccountSourceTests.putCard(store, book: book)
        try await store.autocommit { connection in
            for statement in [
                "DROP FUNCTION rolo_all_written(BIGINT, BIGINT)",
                "DELETE FROM schema_migrations WHERE version = 'v12-batch-all-or-nothing'",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        let listed = try await upgraded.listResources(collectionID: book, after: nil, limit: 10)
        #expect(listed.map(\.name) == ["kept.vcf"] && listed.first?.etag == card.etag)
        let changes = try await upgraded.changes(collectionID: book, since: 0, limit: nil)
        #expect(changes.newSeq == card.seq && changes.changes.map(\.name) == ["kept.vcf"])

        let batch = ["kept.vcf", "new.vcf"].map { name in
            let (data, metadata) = Self.card(name == "kept.vcf" ? "kept" : name, fn: "Written \(name)")
            return WriteBatches.Pending(write: ResourceWrite(name: name, data: data, contentType: "text/vcard", card: metadata),
                                        precondition: name == "kept.vcf" ? .ifMatch([card.etag]) : .ifNoneMatchAny,
                                        exclusion: .nobody, answer: { _ in })
        }
        let seqs = try await upgraded.putBatch(collectionID: book, batch).map { try $0.get().seq }
        #expect(seqs == [card.seq + 1, card.seq + 2])
        #expect(upgraded.writeBatches.togetherCount == 1)
        // Fewer rows written than writes: the check fails the statement with its own state.
        do {
            _ = try await upgraded.autocommit { try await $0.rows(PostgresQuery(unsafeSQL: "SELECT rolo_all_written(1, 2)")).count }
            Issue.record("rolo_all_written(1, 2) did not fail")
        } catch {
            #expect(PostgresStore.sqlState(error) == PostgresStore.batchMismatchState)
        }
        #expect(try await upgraded.autocommit {
            try await $0.rows(PostgresQuery(unsafeSQL: "SELECT rolo_all_written(2, 2)")).first?.decode(Int64.self)
        } == 2)
    }

    /// The backends of the test's database waiting for a row's lock (a batch waiting for the
    /// book's row). Not any lock: a commit that notifies waits for the cluster's one notify
    /// lock (`Lock`, `object`), and on a loaded run a notices connection waiting for it was
    /// taken for the batch, terminated in its place, and the batch then went through.
    private static let waitingForARow = """
        datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')
        AND application_name <> '\(PostgresStore.noticesApplicationName)'
        """

    /// Until a statement of the test's database waits for a row's lock (`waitingForARow`).
    private static func waitForALockWait(_ store: PostgresStore) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let waiting = try await store.autocommit {
                try await $0.rows(PostgresQuery(unsafeSQL: "SELECT count(*) FROM pg_stat_activity WHERE \(waitingForARow)"))
                    .first?.decode(Int64.self) ?? 0
            }
            if waiting > 0 { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("no statement waited for the book's row")
    }

    /// An update keeps the index rows its card still has and the list row when the list shows
    /// nothing new: an edit of a field that is not indexed (a NOTE) writes no index or list
    /// row, and an edit of the e-mail replaces that row alone. Alone and in a batch.
    @Test func anUpdateRewritesOnlyTheIndexRowsThatChanged() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        @Sendable func card(_ name: String, email: String, note: String) -> Data {
            Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(name)\r\nFN:Anna \(name)\r\nEMAIL:\(email)\r\nTEL:+49 170 1\r\nNOTE:\(note)\r\nEND:VCARD\r\n".utf8)
        }
        @Sendable func put(_ name: String, _ data: Data, _ precondition: WritePrecondition = .none) async throws -> PutResult {
            let metadata = try VCardParser.parse(Array(data), mode: .lenient).first.map(CardMetadata.init(card:))
            return try await store.putResource(collectionID: book, name: name, data: data, contentType: "text/vcard",
                                               card: metadata, precondition: precondition)
        }
        /// Each index row of the card (its physical place: a row written anew gets a new one), and its list row's.
        func rows(_ name: String) async throws -> (index: [String: String], listing: String) {
            let index = try await fixture.texts("""
                SELECT i.property || '=' || i.value || ' ' || i.ctid::TEXT FROM card_index i JOIN resources r ON r.id = i.resource_id
                WHERE r.name = '\(name)'
                """)
            let listing = try await fixture.texts("SELECT ctid::TEXT FROM card_listings WHERE name = '\(name)'")
            let pairs = index.map { row in
                let place = row.lastIndex(of: " ")!
                return (String(row[..<place]), String(row[row.index(after: place)...]))
            }
            return (Dictionary(uniqueKeysWithValues: pairs), listing.joined())
        }
        for name in ["a", "b", "c"] { _ = try await put(name, card(name, email: "\(name)@old.example", note: "one")) }
        let before = [try await rows("a"), try await rows("b"), try await rows("c")]
        #expect(before[0].index.keys.map { $0.prefix { $0 != "=" } }.sorted() == ["EMAIL", "FN", "TEL", "UID"])

        // Alone: a.
        _ = try await put("a", card("a", email: "a@old.example", note: "two"))
        // In a batch: b's note and c's e-mail.
        let hold = try await BookRowHold(store, bookID: book)
        let first = try await Self.send(store, bookID: book, taken: true) { try await Self.put(store, book, "d.vcf", fn: "D", .none) }
        let noteEdit = try await Self.send(store, bookID: book, taken: false) { try await put("b", card("b", email: "b@old.example", note: "two")) }
        let emailEdit = try await Self.send(store, bookID: book, taken: false) { try await put("c", card("c", email: "c@new.example", note: "one")) }
        try await hold.release()
        _ = try await (first.value, noteEdit.value, emailEdit.value)
        #expect(store.writeBatches.togetherCount == 1)

        let after = [try await rows("a"), try await rows("b"), try await rows("c")]
        #expect(after[0].index == before[0].index, "a NOTE edit alone keeps every index row")
        #expect(after[0].listing == before[0].listing, "and the list row")
        #expect(after[1].index == before[1].index, "in a batch too")
        #expect(after[1].listing == before[1].listing)
        #expect(after[2].index.filter { !$0.key.hasPrefix("EMAIL=") } == before[2].index.filter { !$0.key.hasPrefix("EMAIL=") })
        #expect(Set(after[2].index.keys.filter { $0.hasPrefix("EMAIL=") }) == ["EMAIL=c@new.example"])
        #expect(after[2].listing != before[2].listing, "the list shows the e-mail")
        #expect(try await fixture.integrityCheck() == [])
    }

    /// A file that is no card, in a batch, could free a card's UID for the writes after it:
    /// such a batch goes one write at a time.
    @Test func aBatchWithAFileThatIsNoCardGoesOneAtATime() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        try await fixture.put("a.vcf", fn: "A")
        let hold = try await BookRowHold(store, bookID: book)
        let first = try await Self.send(store, bookID: book, taken: true) { try await Self.put(store, book, "b.vcf", fn: "B", .none) }
        let file = try await Self.send(store, bookID: book, taken: false) {
            try await store.putResource(collectionID: book, name: "a.vcf", data: Data("no card".utf8), contentType: "text/plain",
                                        card: nil, precondition: .none)
        }
        let card = try await Self.send(store, bookID: book, taken: false) {
            let (data, card) = Self.card("a.vcf", fn: "A again")
            return try await store.putResource(collectionID: book, name: "c.vcf", data: data, contentType: "text/vcard",
                                               card: card, precondition: .none)
        }
        try await hold.release()
        #expect(try await first.value.seq == 2)
        #expect(try await file.value.seq == 3)
        // One by one, a.vcf no longer holds the UID when c.vcf takes it.
        #expect(try await card.value.seq == 4)
        #expect(store.writeBatches.togetherCount == 0)
        #expect(try await fixture.integrityCheck() == [])
    }

    /// A write's outcome as text, to compare two runs: its seq and whether it created, or
    /// its error.
    private static func outcome(_ write: () async throws -> PutResult) async -> String {
        do {
            let result = try await write()
            return "written \(result.seq) \(result.created) \(result.etag)"
        } catch {
            return "failed \(error)"
        }
    }

    /// Many PUTs to one book at once: each gets its own seq (1...n, each once), every one is
    /// in the change log with that seq, and they shared transactions.
    @Test func concurrentPutsToOneBookEachGetTheirOwnSeqAndAllAppearInTheChangeLog() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let count = 100
        let batchesBefore = store.writeBatches.batchCount
        let results = try await withThrowingTaskGroup(of: (String, PutResult).self) { group in
            for index in 0..<count {
                group.addTask { ("c\(index).vcf", try await fixture.put("c\(index).vcf", fn: "Card \(index)")) }
            }
            return try await group.reduce(into: [String: PutResult]()) { $0[$1.0] = $1.1 }
        }
        #expect(results.count == count)
        #expect(Set(results.values.map(\.seq)) == Set(1...Int64(count)), "seqs 1...count, each once")
        let changes = try await store.changes(collectionID: fixture.book.id, since: 0, limit: nil)
        #expect(Dictionary(uniqueKeysWithValues: changes.changes.map { ($0.name, $0.seq) }) == results.mapValues(\.seq))
        #expect(changes.newSeq == Int64(count))
        #expect(store.writeBatches.batchCount - batchesBefore < count, "concurrent puts shared transactions")
        #expect(try await fixture.integrityCheck() == [])
    }
}
