import Foundation
import PostgresNIO
import RoloStore
import Synchronization

/// Group commit for PUTs on PostgreSQL, as `GroupCommit` is for SQLite. A write to a book
/// locks the book's row (it hands out the sync seq) until its COMMIT is on disk, so writes
/// to one book take turns, and with one transaction each the turn was the look-up, the
/// write and a COMMIT with its WAL flush. Here a PUT joins its book's queue; one task per
/// book with queued writes takes everything that queued while the last batch ran (bounded
/// by `Limits`) and writes it (`PostgresStore.putBatch`), then answers every caller once
/// the commit is back.
///
/// - A batch of cards goes to one statement that is its own transaction and takes the
///   book's row itself (`PostgresStore.putTogether`): its look-up runs before (or is what
///   the requests read with their sign-in), and the statement writes only on the cards as
///   the look-up found them, else fails whole.
/// - Otherwise, or when that statement failed, the batch is one transaction that locks the
///   book's row first and writes one write at a time; a write takes the next seq only when
///   it writes. The book's row is updated once, by the last write's statement (by one of its
///   own when that write was refused).
/// - Either way the other processes hear of the batch once (the trigger on `collections`),
///   with its last seq and the Push-Dont-Notify its writes share, and seqs come out as with
///   one transaction each.
/// - A write whose precondition or UID check fails is refused before it writes anything
///   (`WriteRules`, decided on what the batch sees): it fails alone and the others commit.
/// - A statement the server refuses aborts the whole transaction: then every write of the
///   batch runs again in a transaction of its own, so that only the faulty one fails.
/// - A failed COMMIT or a lost connection fails every write of the batch, and nobody is
///   answered before the commit: nothing acknowledged is lost.
/// - A lone write waits for nothing: the batch is whatever queued meanwhile.
/// - While its writes keep coming, in a process alone on its database, a book's batches
///   hold one pooled connection (`BookConnection`; half the pool at most,
///   `Limits.heldConnections`). Once as many writes have queued as the running batch holds,
///   the next batch's statement is sent behind it, on the same connection: the backend
///   starts it as soon as the last one commits, where it waited for Rolo to answer and to
///   send the next. Never more than two: the next batch is
///   taken once the one before the running one has ended. (A second batch under way on
///   another connection, waiting for the book's row inside the database, was tried, and was
///   slower: 957-984 against 1,083-1,195 cards/s, and 1,482 against 1,744 with this
///   threshold.) A batch's seqs still follow the book's row; a batch that fails and goes
///   write by write takes its seqs after the batch behind it.
/// - Other processes, and the other writes of this one (deletes, imports), take the same
///   row lock, so they interleave with batches and every precondition is still decided on
///   what is committed by then.
final class WriteBatches: Sendable {
    struct Limits: Sendable {
        var maximumWrites = 64
        var maximumBytes = 4 << 20
        /// Books whose batches may hold a pooled connection at once (`BookConnection`); the
        /// others lease one for each batch.
        var heldConnections = 5
    }

    /// One queued PUT, with what its request's task knew (the push exclusion is a task local
    /// the batch's task does not have).
    struct Pending: Sendable {
        let write: ResourceWrite
        let precondition: WritePrecondition
        /// The card as the request's lookup found it, when it read its row
        /// (`LookupAhead.takeMemberRow`): the batch's look-up then need not read it again.
        var found: LookupAhead.MemberRow? = nil
        /// The one ETag an update's If-Match names when its request read nothing of the card
        /// (`LookupAhead.takeUnreadWrite`): the batch's statement judges it on the row.
        var byETag: String? = nil
        let exclusion: PushExclusion
        let answer: @Sendable (Result<PutResult, any Error>) -> Void
    }

    private struct State {
        /// Queued writes per book; a book is a key while its task runs, even with none queued.
        var queues: [Int64: [Pending]] = [:]
        /// The batches of the books holding a connection (`BookConnection`).
        var turns: [Int64: Turns] = [:]
        var heldConnections: Int
        var held = 0
        var batches = 0
        var together = 0
        var unread = 0
        var overlapped = 0
    }

    /// A book's batches on its held connection: how many were sent and have ended, and the
    /// book's task waiting to send the next.
    private struct Turns {
        var sent = 0
        var ended = 0
        var waiting: (writes: Int, continuation: CheckedContinuation<Void, Never>)?
    }

    let limits: Limits
    private let state: Mutex<State>

    init(limits: Limits = Limits()) {
        self.limits = limits
        state = Mutex(State(heldConnections: limits.heldConnections))
    }

    /// How many books may hold a connection from now on (`Limits.heldConnections`). Tests set
    /// 0 where each batch must take what queued while the last one ran, whatever its size.
    func allowHeldConnections(_ books: Int) { state.withLock { $0.heldConnections = books } }

    /// Writes queued for `collectionID` and not yet taken by a batch.
    func queuedWrites(collectionID: Int64) -> Int { state.withLock { $0.queues[collectionID]?.count ?? 0 } }

    /// Transactions run so far by the batches (committed or not), each of one write or more.
    var batchCount: Int { state.withLock { $0.batches } }

    /// Counts a batch's transaction (`batchCount`).
    func counted() { state.withLock { $0.batches += 1 } }

    /// Batches of several writes that went to one statement together (`putTogether`).
    var togetherCount: Int { state.withLock { $0.together } }

    /// Counts a batch written by one statement (`togetherCount`).
    func countedTogether() { state.withLock { $0.together += 1 } }

    /// Writes whose requests read nothing before their batch, neither their card nor their
    /// book (`LookupAhead.takeUnreadBook`): judged by their batch's statement (an update by
    /// `Pending.byETag`), and, when it failed, one by one after.
    var unreadCount: Int { state.withLock { $0.unread } }

    /// Counts one such write (`unreadCount`).
    func countedUnread() { state.withLock { $0.unread += 1 } }

    /// Batches sent on a held connection while the one before them was still under way.
    var overlappedCount: Int { state.withLock { $0.overlapped } }

    /// Queues `pending`; true when the book had no task running, and the caller starts one.
    func enqueue(_ pending: Pending, collectionID: Int64) -> Bool {
        let (first, ready) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard state.queues[collectionID] != nil else {
                state.queues[collectionID] = [pending]
                return (true, nil)
            }
            state.queues[collectionID]!.append(pending)
            guard let waiting = state.turns[collectionID]?.waiting,
                  state.queues[collectionID]!.count >= waiting.writes else { return (false, nil) }
            state.turns[collectionID]!.waiting = nil
            return (false, waiting.continuation)
        }
        ready?.resume()
        return first
    }

    /// True, and the caller's book holds a connection until `releaseConnection`, while fewer
    /// than `Limits.heldConnections` books do.
    func mayHoldConnection() -> Bool {
        state.withLock { state in
            guard state.held < state.heldConnections else { return false }
            state.held += 1
            return true
        }
    }

    func releaseConnection() { state.withLock { $0.held -= 1 } }

    /// A batch of the book sent on its held connection; its turn, for `ended`.
    func sent(collectionID: Int64) -> Int {
        state.withLock { state in
            var turns = state.turns[collectionID] ?? Turns()
            if turns.ended < turns.sent { state.overlapped += 1 }
            turns.sent += 1
            state.turns[collectionID] = turns
            return turns.sent
        }
    }

    /// The batch of turn `turn` has ended (answered, or failed).
    func ended(turn: Int, collectionID: Int64) {
        let ready = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard var turns = state.turns[collectionID] else { return nil }
            turns.ended = max(turns.ended, turn)
            let waiting = turns.waiting
            turns.waiting = nil
            state.turns[collectionID] = turns
            return waiting?.continuation
        }
        ready?.resume()
    }

    /// Returns once `writes` writes are queued for the book, or the batch of turn `turn` has
    /// ended: time to send the next batch.
    func waitForWrites(collectionID: Int64, atLeast writes: Int, orEndOf turn: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard let turns = state.turns[collectionID], turns.ended < turn,
                      (state.queues[collectionID]?.count ?? 0) < writes else { return true }
                state.turns[collectionID]!.waiting = (writes, continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// The oldest queued writes of the book, as many as `limits` allow (at least one). Empty
    /// when none are queued, and then the book's task ends unless `keepingBook` (a batch of it
    /// is still under way).
    func takeBatch(collectionID: Int64, keepingBook: Bool = false) -> [Pending] {
        state.withLock { state in
            let queue = state.queues[collectionID] ?? []
            guard !queue.isEmpty else {
                if !keepingBook {
                    state.queues[collectionID] = nil
                    state.turns[collectionID] = nil
                }
                return []
            }
            var count = 0, bytes = 0
            for pending in queue {
                if count > 0 && (count == limits.maximumWrites || bytes + pending.write.data.count > limits.maximumBytes) { break }
                count += 1
                bytes += pending.write.data.count
            }
            state.queues[collectionID] = Array(queue.dropFirst(count))
            return Array(queue.prefix(count))
        }
    }
}

extension PostgresStore {
    /// Queues the PUT in its book's batch and returns its result once the batch committed.
    func putBatched(collectionID: Int64, write: ResourceWrite, precondition: WritePrecondition) async throws -> PutResult {
        let exclusion = PushExclusion.current ?? .nobody
        let found = LookupAhead.current?.takeMemberRow(collectionID: collectionID, name: write.name)
        // A write whose request read nothing (`LookupAhead.takeUnreadBook`): the statement
        // judges an update's one ETag (`byETag`), and a new card's name and UID as it judges
        // every new card's.
        var byETag: String?
        if LookupAhead.current?.takeUnreadWrite(collectionID: collectionID, name: write.name) == true {
            writeBatches.countedUnread()
            if case .ifMatch(let tags) = precondition, tags.count == 1, write.card != nil { byETag = tags[0] }
        }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<PutResult, any Error>) in
            let pending = WriteBatches.Pending(write: write, precondition: precondition, found: found, byETag: byETag,
                                               exclusion: exclusion, answer: { continuation.resume(with: $0) })
            guard writeBatches.enqueue(pending, collectionID: collectionID) else { return }
            // Detached: the batch is no one request's, and must not carry the first one's
            // task locals (its push exclusion, its author) into the others.
            Task.detached { [self] in await runBatches(collectionID: collectionID) }
        }
    }

    /// The book's task: its batches until none are queued, on a connection the book holds
    /// while one may (`WriteBatches`), else, or once that connection closed, each batch on a
    /// connection of its own. Only in a process alone on its database: with two processes
    /// writing one book, each one's next batch cut at the running one's size and sent behind
    /// it waited for the other's turns of the book's row, and If-Match ran 10-18 % slower
    /// (carddav-bench's `rolo-pg2`), where a batch that waits takes everything queued
    /// meanwhile.
    private func runBatches(collectionID: Int64) async {
        if cardCache.isAlone, writeBatches.mayHoldConnection() {
            // Nil when no connection came in time: each batch then waits for its own.
            let emptied = try? await leased { connection in
                await self.batchesInTurn(collectionID: collectionID, on: BookConnection(connection.connection))
            }
            writeBatches.releaseConnection()
            if emptied == true { return }
        }
        while true {
            let batch = writeBatches.takeBatch(collectionID: collectionID)
            if batch.isEmpty { return }
            await commit(batch, collectionID: collectionID, on: nil)
        }
    }

    /// The book's batches on `held`, each sent once the one before the running one has ended
    /// and as many writes have queued as the running one holds (or it ended too). True once
    /// none are queued (the book's task ends); false when `held` closed, with every batch taken
    /// answered.
    private func batchesInTurn(collectionID: Int64, on held: BookConnection) async -> Bool {
        var running: (task: Task<Void, Never>, turn: Int)?
        while true {
            if held.isClosed {
                await running?.task.value
                return false
            }
            let batch = writeBatches.takeBatch(collectionID: collectionID, keepingBook: running != nil)
            guard !batch.isEmpty else {
                guard let last = running else { return true }
                await last.task.value
                running = nil
                continue
            }
            let turn = writeBatches.sent(collectionID: collectionID)
            let task = Task {
                await self.commit(batch, collectionID: collectionID, on: held)
                self.writeBatches.ended(turn: turn, collectionID: collectionID)
            }
            await running?.task.value
            await writeBatches.waitForWrites(collectionID: collectionID, atLeast: batch.count, orEndOf: turn)
            running = (task, turn)
        }
    }

    /// Writes the batch in one transaction and answers each write; when the server refused
    /// a statement (the transaction then holds nothing), each write again on its own.
    private func commit(_ batch: [WriteBatches.Pending], collectionID: Int64, on held: BookConnection?) async {
        let results: [Result<PutResult, any Error>]
        do {
            results = try await putBatch(collectionID: collectionID, batch, on: held)
        } catch let error where batch.count > 1 && !(error is StoreError) && !(error is CancellationError) {
            for pending in batch { await commit([pending], collectionID: collectionID, on: held) }
            return
        } catch {
            for pending in batch { pending.answer(.failure(error)) }
            return
        }
        var written: [(WriteBatches.Pending, Result<PutResult, any Error>)] = []
        var last = Int64.min
        for (pending, result) in zip(batch, results) {
            guard case .success(let put) = result else {
                pending.answer(result)
                continue
            }
            written.append((pending, result))
            last = max(last, put.seq)
            committed(BookChange(collectionID: collectionID, seq: put.seq, exclusion: pending.exclusion))
            if put.created { substringIndex.cardCreated(in: collectionID) }
        }
        guard !written.isEmpty else { return }
        wroteCards(written.count)
        // The book's next batch goes meanwhile.
        afterOthersHeard(collectionID: collectionID, seq: last) { [written] in
            for (pending, result) in written { pending.answer(result) }
        }
    }

    /// The writes of a batch, in order: together in one statement when they can go so
    /// (`putTogether`), else one by one in a transaction holding the book's row. Each write's
    /// result, or its own error when its precondition or UID check failed (it wrote nothing).
    /// Throws, and nothing is written, when a statement or the commit failed.
    func putBatch(collectionID: Int64, _ batch: [WriteBatches.Pending],
                  on held: BookConnection? = nil) async throws -> [Result<PutResult, any Error>] {
        let now = self.now
        writeBatches.counted()
        do {
            if let together = try await putTogether(batch, collectionID: collectionID, now: now, on: held) { return together }
        } catch let error where !(error is StoreError) && !(error is CancellationError) {
            // A card was not as the look-up found it, or the server refused a write: each
            // write is judged again in the book's turn, below.
            logger.debug("a batch goes write by write", metadata: ["reason": "\(Self.describe(error))"])
        }
        do {
            return try await transaction(on: held) { connection in
                // The book's row, locked until the commit: the batch's turn.
                guard let row = try await connection.first(LockBookSQL.self, collectionID) else { throw StoreError.notFound }
                let first = try row.decode(Int64.self)
                var announced = PushExclusion.nobody
                var seq = first
                var results: [Result<PutResult, any Error>] = []
                results.reserveCapacity(batch.count)
                // What the written writes left out, and what the transaction says they did.
                var exclusion: PushExclusion?
                var bookSeqMoved = false
                for (index, pending) in batch.enumerated() {
                    // The book's seq moves once for the batch, which notifies the other processes
                    // (the trigger on `collections`) with what every write of it left out: in the
                    // last write's statement, which then needs the exclusion in place.
                    let isLast = index == batch.count - 1
                    let shared = exclusion?.merged(with: pending.exclusion) ?? pending.exclusion
                    if isLast { try await Self.announce(shared, over: &announced, connection) }
                    do {
                        results.append(.success(try await Self.put(connection, pending.write, collectionID: collectionID,
                                                                    precondition: pending.precondition, seq: seq + 1, now: now,
                                                                    movingBookSeq: isLast)))
                        seq += 1
                        exclusion = shared
                        bookSeqMoved = isLast
                    } catch let error as StoreError where !Self.isUnavailable(error) {
                        // Refused by `WriteRules` before its statement: nothing of it was written.
                        results.append(.failure(error))
                    }
                }
                // Nothing written: nothing to commit (the book's seq and time stay as they were).
                guard seq > first else { throw NothingWritten(results: results) }
                // The last write was refused: the seq moves in a statement of its own.
                if !bookSeqMoved {
                    try await Self.announce(exclusion ?? .nobody, over: &announced, connection)
                    _ = try await connection.rows(BookSeqSQL.self, seq, now, collectionID)
                }
                return results
            }
        } catch let nothing as NothingWritten {
            return nothing.results
        }
    }

    /// Makes `exclusion` what the trigger on `collections` puts in the transaction's
    /// notification, unless it is that already (`announced`; nobody when nothing was set).
    static func announce(_ exclusion: PushExclusion, over announced: inout PushExclusion,
                                 _ connection: Connection) async throws {
        guard exclusion != announced else { return }
        // The trigger reads "" as nobody.
        let encoded = exclusion == .nobody ? "" : exclusion.encoded
        try await connection.execute("SELECT set_config('rolo.push_exclusion', \(encoded), true)")
        announced = exclusion
    }

    private static func isUnavailable(_ error: StoreError) -> Bool {
        if case .unavailable = error { return true }
        return false
    }

    /// Every write of a batch was refused: the transaction is rolled back and they answered.
    private struct NothingWritten: Error {
        let results: [Result<PutResult, any Error>]
    }

    /// One PUT inside a transaction holding the book's row, as the seq `seq`; with
    /// `movingBookSeq`, its statement makes `seq` the book's when it writes (it wrote when this
    /// returns).
    static func put(_ connection: Connection, _ write: ResourceWrite, collectionID: Int64, precondition: WritePrecondition,
                    seq: Int64, now: Double, movingBookSeq: Bool) async throws -> PutResult {
        // A write that must create the resource (If-None-Match: *, how clients upload new
        // cards) first simply tries to, and looks only when the name or UID is taken.
        if precondition == .ifNoneMatchAny,
           try await insert(connection, write, collectionID: collectionID, seq: seq, now: now, movingBookSeq: movingBookSeq) != nil {
            return PutResult(etag: write.etag, created: true, seq: seq)
        }
        let existing = try await checkWrite(connection, collectionID: collectionID, name: write.name, card: write.card,
                                            precondition: precondition)
        if let existing {
            try await replace(connection, id: existing.id, with: write, collectionID: collectionID, seq: seq, now: now,
                              movingBookSeq: movingBookSeq)
        } else if try await insert(connection, write, collectionID: collectionID, seq: seq, now: now,
                                   movingBookSeq: movingBookSeq) == nil {
            throw StoreError.alreadyExists // unreachable: name and UID were checked above
        }
        return PutResult(etag: write.etag, created: existing == nil, seq: seq)
    }

    /// Locks the book's row for a batch; its seq. And no sequential scans for the rest of the
    /// batch's transaction: every row a batch reads or writes is found by a key, but while a
    /// book grows faster than autovacuum analyses it, the planner takes the tables for the
    /// few pages they were and joins the batch's arrays to whole tables. Right after an
    /// import of 3,000 cards, an update batch's statement scanned `resources` and hashed all of
    /// `card_index` (14 ms where it takes 1).
    enum LockBookSQL: PreparedSQL {
        static let sql = """
            SELECT sync_seq, set_config('enable_seqscan', 'off', true) FROM collections WHERE id = $1 FOR UPDATE
            """
    }

    /// The book's seq after a batch whose last write was refused (else that write's statement
    /// sets it), set once (its trigger tells the other processes).
    enum BookSeqSQL: PreparedSQL {
        static let sql = "UPDATE collections SET sync_seq = $1, modified = $2 WHERE id = $3"
    }
}
