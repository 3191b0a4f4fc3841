import Dispatch
import Foundation
import GRDB
import Testing
@testable import RoloSQLite
@testable import RoloStore

/// Keeps the store's one writer connection busy until `open()`, so that the writes sent
/// meanwhile queue up and are committed together, in the order they were queued.
private final class WriterGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let store: SQLiteStore

    init(_ store: SQLiteStore) {
        self.store = store
        store.pool.asyncWriteWithoutTransaction { [semaphore] _ in semaphore.wait() }
    }

    /// Starts `write` and returns once it is queued behind the gate (so the next one
    /// queues after it).
    func queue<T: Sendable>(_ write: @escaping @Sendable () async throws -> T) async -> Task<T, any Error> {
        let queuedBefore = store.groupCommit.queuedWrites
        let task = Task { try await write() }
        while store.groupCommit.queuedWrites == queuedBefore { await Task.yield() }
        return task
    }

    func open() { semaphore.signal() }
}

@Suite struct GroupCommitTests {
    /// GRDB sets the writer to `synchronous = NORMAL` when it turns WAL on; a 201 must mean
    /// the card is on disk, so the store sets FULL (2) again. Savepoint journals stay in
    /// memory (`temp_store` 2).
    @Test func theWriterSyncsEveryCommitAndKeepsSavepointJournalsInMemory() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let (synchronous, tempStore) = try await fixture.sqlite.pool.write { db in
            (try Int.fetchOne(db, sql: "PRAGMA synchronous"), try Int.fetchOne(db, sql: "PRAGMA temp_store"))
        }
        #expect(synchronous == 2)
        #expect(tempStore == 2)
    }

    @Test func manyConcurrentPutsLandEachWithItsOwnETagAndChangeRow() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let count = 200
        let results = try await withThrowingTaskGroup(of: (String, PutResult).self) { group in
            for index in 0..<count {
                group.addTask { ("c\(index).vcf", try await fixture.put("c\(index).vcf", fn: "Card \(index)")) }
            }
            return try await group.reduce(into: [String: PutResult]()) { $0[$1.0] = $1.1 }
        }
        #expect(results.count == count)
        #expect(Set(results.values.map(\.etag)).count == count, "every card has its own ETag")
        #expect(results.values.filter(\.created).count == count)
        #expect(Set(results.values.map(\.seq)) == Set(1...Int64(count)), "seqs 1...count, each once")

        let stored = try await fixture.sqlite.allResources(collectionID: fixture.book.id)
        #expect(stored.count == count)
        for resource in stored {
            let result = try #require(results[resource.info.name])
            #expect(resource.info.etag == result.etag)
            #expect(resource.info.seq == result.seq)
            #expect(resource.info.etag == ETag.of(resource.data))
        }
        let changes = try await fixture.sqlite.changes(collectionID: fixture.book.id, since: 0, limit: nil)
        #expect(Dictionary(uniqueKeysWithValues: changes.changes.map { ($0.name, $0.seq) })
                == results.mapValues(\.seq))
        #expect(changes.newSeq == Int64(count))
        #expect(fixture.sqlite.groupCommit.batchCount < count, "concurrent puts shared transactions")
    }

    @Test func queuedWritesCommitTogetherInArrivalOrder() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let batchesBefore = fixture.sqlite.groupCommit.batchCount
        let gate = WriterGate(fixture.sqlite)
        var tasks: [Task<PutResult, any Error>] = []
        for index in 0..<10 {
            tasks.append(await gate.queue { try await fixture.put("o\(index).vcf") })
        }
        gate.open()
        var seqs: [Int64] = []
        for task in tasks { seqs.append(try await task.value.seq) }
        #expect(seqs == Array(1...10))
        // One transaction for the ten puts.
        #expect(fixture.sqlite.groupCommit.batchCount == batchesBefore + 1)
    }

    /// After a burst of writes and a quiet moment the writer checkpoints the write-ahead
    /// log; fewer writes than the threshold leave it to SQLite's own checkpoint.
    @Test func aQuietMomentAfterABurstOfWritesCheckpointsTheLog() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let threshold = GroupCommit.IdleCheckpoint().afterWrites
        for index in 0..<(threshold - 1) { try await fixture.put("q\(index).vcf") }
        try await Task.sleep(for: .milliseconds(400))
        #expect(fixture.sqlite.groupCommit.idleCheckpointCount == 0, "fewer writes than the threshold")

        try await fixture.put("last.vcf")
        let deadline = ContinuousClock.now + .seconds(30)
        while fixture.sqlite.groupCommit.idleCheckpointCount == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(fixture.sqlite.groupCommit.idleCheckpointCount == 1)
        // The count starts again: a few more writes do not checkpoint again.
        try await fixture.put("after.vcf")
        try await Task.sleep(for: .milliseconds(400))
        #expect(fixture.sqlite.groupCommit.idleCheckpointCount == 1)
        #expect(try await fixture.sqlite.allResources(collectionID: fixture.book.id).count == threshold + 1)
    }

    /// Once a checkpoint is due, every batch that finds the queue empty is a candidate for it;
    /// one timer waits for the quiet moment at a time, moved on by the writes meanwhile, rather
    /// than a timer (a thread woken, a turn on the writer queue) for each of those batches.
    @Test func oneTimerWaitsForTheQuietMomentWhateverTheBatchesMeanwhile() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let threshold = GroupCommit.IdleCheckpoint().afterWrites
        for index in 0..<threshold { try await fixture.put("a\(index).vcf") }
        let started = ContinuousClock.now
        let later = 60
        for index in 0..<later { try await fixture.put("b\(index).vcf") }
        let writing = ContinuousClock.now - started
        let deadline = ContinuousClock.now + .seconds(30)
        while fixture.sqlite.groupCommit.idleCheckpointCount == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(fixture.sqlite.groupCommit.idleCheckpointCount == 1)
        // A timer fires at most once a quiet interval (100 ms) while writes come, then once more.
        let bound = Int(writing / .milliseconds(100)) + 2
        #expect(fixture.sqlite.groupCommit.idleTimerCount <= min(bound, later / 2),
                "\(fixture.sqlite.groupCommit.idleTimerCount) timers for \(later) batches in \(writing)")
    }

    /// A closed store's pending idle checkpoint finds no connection and does nothing.
    @Test func anIdleCheckpointAfterCloseDoesNothing() async throws {
        let fixture = try await StoreFixture.make()
        for index in 0..<GroupCommit.IdleCheckpoint().afterWrites { try await fixture.put("c\(index).vcf") }
        // Counted once the close is done: on a loaded machine the idle moment may come (and
        // checkpoint, rightly) before or while the store closes (the close's own checkpoint
        // queues behind it on the writer); what must not happen is one after it. On a quiet
        // machine the idle checkpoint is still pending here, and finds no connection.
        fixture.close()
        let afterClose = fixture.sqlite.groupCommit.idleCheckpointCount
        try await Task.sleep(for: .milliseconds(300))
        #expect(fixture.sqlite.groupCommit.idleCheckpointCount == afterClose)
    }

    @Test func aBatchTakesAtMostItsLimitOfWrites() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let limit = SQLiteStore.Tuning.default.maximumWritesPerCommit
        let batchesBefore = fixture.sqlite.groupCommit.batchCount
        let gate = WriterGate(fixture.sqlite)
        var tasks: [Task<PutResult, any Error>] = []
        for index in 0..<(limit * 2 + 1) {
            tasks.append(await gate.queue { try await fixture.put("l\(index).vcf") })
        }
        gate.open()
        for task in tasks { _ = try await task.value }
        #expect(fixture.sqlite.groupCommit.batchCount == batchesBefore + 3)
    }

    @Test func aFailedPreconditionInABatchFailsAloneWhileTheOthersCommit() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let original = try await fixture.put("b.vcf", fn: "Original")
        let gate = WriterGate(fixture.sqlite)
        let first = await gate.queue { try await fixture.put("a.vcf") }
        let stale = await gate.queue { try await fixture.put("b.vcf", fn: "Lost", precondition: .ifMatch(["\"stale\""])) }
        let creation = await gate.queue { try await fixture.put("b.vcf", fn: "Also lost", precondition: .ifNoneMatchAny) }
        let last = await gate.queue { try await fixture.put("c.vcf") }
        let deleteOfMissing = await gate.queue { try await fixture.sqlite.deleteResource(
            collectionID: fixture.book.id, name: "missing.vcf", precondition: .none) }
        let matching = await gate.queue { try await fixture.put("b.vcf", fn: "Updated", precondition: .ifMatch([original.etag])) }
        gate.open()

        #expect(try await first.value.seq == 2)
        await #expect(throws: StoreError.preconditionFailed) { try await stale.value }
        await #expect(throws: StoreError.preconditionFailed) { try await creation.value }
        #expect(try await last.value.seq == 3, "the failed writes took no seq")
        await #expect(throws: StoreError.notFound) { try await deleteOfMissing.value }
        #expect(try await matching.value.seq == 4)

        let b = try #require(try await fixture.sqlite.resource(collectionID: fixture.book.id, name: "b.vcf"))
        #expect(String(decoding: b.data, as: UTF8.self).contains("FN:Updated"))
        let changes = try await fixture.sqlite.changes(collectionID: fixture.book.id, since: 1, limit: nil)
        #expect(changes.changes.map(\.name) == ["a.vcf", "c.vcf", "b.vcf"])
        #expect(changes.newSeq == 4)
    }

    @Test func ofTwoPutsWithOneUIDUnderTwoNamesExactlyOneWins() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        // Queued in one batch: the first in arrival order wins.
        let gate = WriterGate(fixture.sqlite)
        let winner = await gate.queue { try await fixture.put("one.vcf", uid: "shared") }
        let loser = await gate.queue { try await fixture.put("two.vcf", uid: "shared") }
        gate.open()
        _ = try await winner.value
        await #expect(throws: StoreError.uidConflict(existingName: "one.vcf")) { try await loser.value }

        // Racing freely, round after round.
        for round in 0..<20 {
            let outcomes = await withTaskGroup(of: (String, (any Error)?).self) { group in
                for name in ["x\(round).vcf", "y\(round).vcf"] {
                    group.addTask {
                        do { _ = try await fixture.put(name, uid: "race-\(round)"); return (name, nil) }
                        catch { return (name, error) }
                    }
                }
                return await group.reduce(into: [(String, (any Error)?)]()) { $0.append($1) }
            }
            let winners = outcomes.filter { $0.1 == nil }.map(\.0)
            #expect(winners.count == 1, "round \(round)")
            for (_, error) in outcomes where error != nil {
                #expect(error as? StoreError == .uidConflict(existingName: winners.first ?? ""), "round \(round)")
            }
            #expect(try await fixture.sqlite.resourceName(collectionID: fixture.book.id, uid: "race-\(round)") == winners.first)
        }
    }

    @Test func aFailedCommitFailsEveryWriteOfTheBatchAndLeavesNothing() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("kept.vcf", fn: "Kept")
        let before = try await fixture.sqlite.collection(id: fixture.book.id)
        let gate = WriterGate(fixture.sqlite)
        let put = await gate.queue { try await fixture.put("new.vcf") }
        let update = await gate.queue { try await fixture.put("kept.vcf", fn: "Changed") }
        // A change row of a book that does not exist, its foreign key checked only at COMMIT.
        let saboteur = await gate.queue {
            try await fixture.sqlite.groupCommit.write(bytes: 0) { db in
                try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
                try db.execute(sql: "INSERT INTO changes (collection_id, seq, name, deleted, at) VALUES (999999, 1, 'x', 0, 0)")
            }
        }
        let delete = await gate.queue { try await fixture.sqlite.deleteResource(
            collectionID: fixture.book.id, name: "kept.vcf", precondition: .none) }
        gate.open()

        for outcome in [await put.result.map { _ in }, await update.result.map { _ in }, await saboteur.result, await delete.result] {
            #expect(throws: DatabaseError.self) { try outcome.get() }
        }
        #expect(try await fixture.sqlite.collection(id: fixture.book.id) == before)
        let stored = try await fixture.sqlite.allResources(collectionID: fixture.book.id)
        #expect(stored.map(\.info.name) == ["kept.vcf"])
        #expect(String(decoding: stored[0].data, as: UTF8.self).contains("FN:Kept"))

        // The writer goes on with the next batch.
        #expect(try await fixture.put("after.vcf").seq == before!.syncSeq + 1)
    }
}
