import Foundation
import RoloStore
import GRDB

/// Group commit for single-resource writes. With `synchronous = FULL` every COMMIT waits for
/// the disk, so one transaction per PUT would cap writes at one per fsync. Here a write joins
/// a queue; the writer takes everything that queued while it was busy (bounded by `Limits`),
/// runs each write in its own SAVEPOINT inside one transaction, commits once, and only then
/// answers every caller with its own result.
///
/// - A write whose body throws (a failed precondition, a UID conflict) is rolled back to its
///   savepoint and fails alone; the others of its batch still commit.
/// - A failed COMMIT (or an error that ends the whole transaction) fails every write of the
///   batch and leaves nothing of it visible; nobody is answered before the commit finished.
/// - Writes run in arrival order, each seeing the ones before it, so change-log seqs and
///   sync tokens come out as with one transaction each.
/// - A lone write waits for nothing: no timer, the batch is whatever queued meanwhile.
/// - Each batch is one turn on GRDB's writer queue, so other writes (imports, collection
///   changes) interleave with batches rather than wait for the queue to drain.
/// - After a burst of writes (`IdleCheckpoint`), once no write came for a moment, the writer
///   checkpoints the write-ahead log. Until then every read looks its pages up in the log
///   first: right after a 10,000-card PUT import, a 100-card multiget took twice as long as
///   after a checkpoint (Docs/performance.md, "Reads after a burst of writes").
final class GroupCommit: @unchecked Sendable {
    /// How much one transaction takes at most; the first queued write is always taken.
    struct Limits: Sendable {
        var maximumWrites = 64
        var maximumBytes = 4 << 20
    }

    /// One queued write: `run` performs it inside its savepoint and returns how to answer
    /// its caller once the batch is committed; `fail` answers it with an error.
    private struct Pending {
        let bytes: Int
        let run: @Sendable (Database) throws -> @Sendable () -> Void
        let fail: @Sendable (any Error) -> Void
    }

    /// When to checkpoint the write-ahead log without waiting for SQLite's automatic
    /// checkpoint (`SQLiteStore.Tuning.checkpointBytes`), which only a commit sets off.
    struct IdleCheckpoint: Sendable {
        /// Writes committed since the last idle checkpoint that make one worth it; 0 never
        /// checkpoints. A few writes leave a short log that costs reads nothing.
        var afterWrites = 100
        /// How long no write may come before the checkpoint starts: longer than the gaps
        /// of one client uploading cards one after another.
        var quietFor: DispatchTimeInterval = .milliseconds(100)
    }

    /// Work the store has the writer do between batches, outside any transaction (`run`
    /// opens its own if it needs one): after a batch when `isDue(false)`, and before an
    /// idle checkpoint when `isDue(true)`. A failure leaves it for the next time.
    struct Upkeep: Sendable {
        var isDue: @Sendable (_ idle: Bool) -> Bool
        var run: @Sendable (Database) throws -> Void
    }

    private let pool: DatabasePool
    private let limits: Limits
    private let idleCheckpoint: IdleCheckpoint
    private let upkeep: Upkeep?
    /// Let go before every batch, merge and idle checkpoint, held again after them.
    private let readAnchor: ReadAnchor?
    /// Guards `queue` and `turnScheduled`; never held while SQLite works.
    private let lock = NSLock()
    private var queue: [Pending] = []
    /// True from the moment a turn is handed to the writer queue until a turn finds the
    /// queue empty: at most one turn is ever scheduled.
    private var turnScheduled = false
    private var finishedBatches = 0
    /// When the last batch ended: the quiet moment an idle checkpoint waits for counts from it.
    private var lastBatchEnded = DispatchTime.now()
    /// True while a timer waits for the quiet moment: at most one at a time.
    private var idleTimerArmed = false
    private var idleTimersFired = 0
    /// Writes committed since the last idle checkpoint.
    private var writesSinceCheckpoint = 0
    private var idleCheckpoints = 0

    init(pool: DatabasePool, limits: Limits = Limits(), idleCheckpoint: IdleCheckpoint = IdleCheckpoint(),
         upkeep: Upkeep? = nil, readAnchor: ReadAnchor? = nil) {
        self.pool = pool
        self.limits = limits
        self.idleCheckpoint = idleCheckpoint
        self.upkeep = upkeep
        self.readAnchor = readAnchor
    }

    /// Writes queued and not yet taken by a turn.
    var queuedWrites: Int { lock.withLock { queue.count } }

    /// Transactions run so far (committed or failed), each holding one or more writes.
    var batchCount: Int { lock.withLock { finishedBatches } }

    /// Idle checkpoints run so far.
    var idleCheckpointCount: Int { lock.withLock { idleCheckpoints } }

    /// Times the idle checkpoint's timer fired so far (each wakes a thread).
    var idleTimerCount: Int { lock.withLock { idleTimersFired } }

    /// Runs `body` in the next batch and returns its result once that batch is on disk.
    /// `bytes` (the size of what it writes) bounds how much one batch takes.
    func write<T: Sendable>(bytes: Int, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            enqueue(Pending(
                bytes: bytes,
                run: { db in
                    let value = try body(db)
                    return { continuation.resume(returning: value) }
                },
                fail: { error in continuation.resume(throwing: error) }))
        }
    }

    private func enqueue(_ pending: Pending) {
        let startsTurn = lock.withLock {
            queue.append(pending)
            defer { turnScheduled = true }
            return !turnScheduled
        }
        if startsTurn { scheduleTurn() }
    }

    private func scheduleTurn() {
        pool.asyncWriteWithoutTransaction { db in self.turn(db) }
    }

    /// Commits one batch, then hands the writer queue the next turn if writes are waiting.
    private func turn(_ db: Database) {
        let batch = takeBatch()
        // Let go of the read mark so that this commit may start the log over.
        readAnchor?.release()
        let replies = commit(batch, db)
        readAnchor?.holdNewest()
        let (more, armsTimer) = lock.withLock {
            finishedBatches += 1
            lastBatchEnded = .now()
            writesSinceCheckpoint += batch.count
            if queue.isEmpty { turnScheduled = false }
            let due = !turnScheduled && idleCheckpoint.afterWrites > 0 && writesSinceCheckpoint >= idleCheckpoint.afterWrites
            let armsTimer = due && !idleTimerArmed
            if due { idleTimerArmed = true }
            return (turnScheduled, armsTimer)
        }
        // Answered after the batch is counted, so whoever a reply wakes sees it in
        // `batchCount` (a loaded run once read the count between the two).
        for reply in replies { reply() }
        if let upkeep, upkeep.isDue(false) {
            readAnchor?.release()
            try? upkeep.run(db)
            readAnchor?.holdNewest()
        }
        if more { scheduleTurn() }
        if armsTimer { waitForQuiet(until: .now() + idleCheckpoint.quietFor) }
    }

    /// Checkpoints the log once `idleCheckpoint.quietFor` has passed with no batch; a write
    /// meanwhile defers it to the next quiet moment. One timer waits at a time, and on
    /// waking it waits again, counted from the last batch, if writes came meanwhile: a timer
    /// armed after every batch that found the queue empty woke a thread and took a turn on the
    /// writer queue about every 15 writes of eight clients' import, between their batches
    /// (issue 34). PASSIVE: it copies what no reader still needs and waits for nobody; it runs
    /// on the writer queue, so a write that comes during it waits for it (tens of
    /// milliseconds after a large import). Upkeep that is due runs first, so that its pages
    /// go out with this checkpoint.
    private func waitForQuiet(until deadline: DispatchTime) {
        DispatchQueue.global().asyncAfter(deadline: deadline) { [self] in
            // Either the moment to wait for again, or the batch the quiet moment follows.
            let (later, batch): (DispatchTime?, Int) = lock.withLock {
                idleTimersFired += 1
                let quietFrom = turnScheduled ? DispatchTime.now() + idleCheckpoint.quietFor
                                              : lastBatchEnded + idleCheckpoint.quietFor
                if quietFrom > .now() { return (quietFrom, finishedBatches) }
                idleTimerArmed = false
                return (nil, finishedBatches)
            }
            if let later { return waitForQuiet(until: later) }
            pool.asyncWriteWithoutTransaction { [self] db in
                let quiet = lock.withLock { finishedBatches == batch && !turnScheduled }
                // No connection left: the store was closed meanwhile.
                guard quiet, db.sqliteConnection != nil else { return }
                readAnchor?.release()
                defer { readAnchor?.holdNewest() }
                if let upkeep, upkeep.isDue(true) { try? upkeep.run(db) }
                // Fails only on a closed store or an I/O error; SQLite's own checkpoint and
                // the next idle one take over.
                guard (try? db.checkpoint(.passive)) != nil else { return }
                lock.withLock {
                    writesSinceCheckpoint = 0
                    idleCheckpoints += 1
                }
            }
        }
    }

    /// The oldest queued writes, as many as `limits` allow (always at least one).
    private func takeBatch() -> [Pending] {
        lock.withLock {
            var count = 0
            var bytes = 0
            for pending in queue {
                if count > 0 && (count == limits.maximumWrites || bytes + pending.bytes > limits.maximumBytes) { break }
                count += 1
                bytes += pending.bytes
            }
            let batch = Array(queue.prefix(count))
            queue.removeFirst(count)
            return batch
        }
    }

    /// Runs the batch in one transaction, each write in its savepoint, and returns the
    /// answers to give once it is committed (every write's error if the commit failed).
    private func commit(_ batch: [Pending], _ db: Database) -> [@Sendable () -> Void] {
        guard !batch.isEmpty else { return [] }
        var replies: [@Sendable () -> Void] = []
        replies.reserveCapacity(batch.count)
        do {
            try db.inTransaction(.immediate) {
                for pending in batch {
                    do {
                        try db.inSavepoint {
                            replies.append(try pending.run(db))
                            return .commit
                        }
                    } catch {
                        // Some SQLite errors (I/O, full disk) roll back the whole
                        // transaction: then no write of the batch can commit.
                        guard db.isInsideTransaction else { throw error }
                        let fail = pending.fail
                        replies.append { fail(error) }
                    }
                }
                return .commit
            }
        } catch {
            return batch.map { pending in
                let fail = pending.fail
                return { fail(error) }
            }
        }
        return replies
    }
}
