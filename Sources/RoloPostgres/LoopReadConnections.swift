import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import RoloStore
import Synchronization

/// The inline GET's reads, and the other requests' sign-ins, on a connection of the calling
/// event loop's own, outside the pool, gathered: a GET on PostgreSQL runs on one thread from
/// the request's bytes to the answer's, and the GETs that arrive while a read is out go
/// together in the next one.
///
/// Through the pool a GET hopped between threads four times (a task for the lease, the
/// pool's event loop, the connection's, the continuation back, the answer to the request's
/// loop), and woke a PostgreSQL backend for each; `perf` of a GET-only load showed the
/// kernel's task switches and wake-ups as the largest cost, about 300 µs of Rolo's CPU a GET
/// where SQLite's whole GET takes 90. Here the statement is written and its rows read on the
/// loop that asks, through postgres-nio's future interface, one statement for a batch.
///
/// A gathered statement (`GatheredSQL`) takes `columns` text arrays, the batch's values
/// column by column, and answers one row per element in their order; each kind gathers its
/// own reads (the GETs', and the other requests' sign-ins with their first lookup). Each
/// event loop gets one connection, opened at its first GET (that GET and any while it opens
/// take the pool's way) to the current primary, with the statements prepared on it. A
/// failed or late read answers an error, and the server's full path answers those GETs (and
/// its 503 when the database is away); the connection is then dropped, and a new one is
/// tried at the next GET, at most once a second.
/// One more connection per event loop than `pool_size`, then (Docs/configuration.md).
///
/// Other short reads that every request of a kind makes take the same connection one by one
/// (`run`: a request's book, a multiget's count of it, a PUT's book and member and its
/// home's locks, a sync's changes when they are few, a listing's pages, a multiget's cards
/// probed by name), prepared on it beside the gathered statements: a request's reads before
/// its write, and most reads of a listing or a multiget, then cost no hop through the pool.
final class LoopReadConnections: Sendable {
    /// How these connections show in `pg_stat_activity`, beside the pool's "rolo".
    static let applicationName = "rolo GET"
    /// The most reads one statement carries: bounds a batch's answer (cards are up to the
    /// body limit each) and the wait of the last read in it.
    static let largestBatch = 32
    /// How long the reads queued when a batch is answered wait for the answered readers' next
    /// reads (`sendQueued`), for the statements that wait (`GatheredSQL.waitsForItsReaders`).
    /// Under `get-bench --postgres`'s eight connections: 15,300-15,600 GETs/s at 107-108 µs of
    /// CPU a GET without waiting, 17,100-17,200 at 96 µs with 250 µs, no better with 2 ms.
    static let readersReturnWithin: TimeAmount = .microseconds(250)

    typealias Done = @Sendable (Result<PostgresRow?, any Error>) -> Void

    private struct Pending: Sendable {
        let values: [String]
        let done: CallOnce<Result<PostgresRow?, any Error>>
    }

    /// A gathered statement on a loop's connection and the reads waiting for it. A class, its
    /// state changed in place under `slots`' lock only (as a value copied out of the slot and
    /// back, each read copied the queue it appended to; `get-bench` showed no difference).
    private final class Gathering: @unchecked Sendable {
        let prepared: PreparedQuery
        let columns: Int
        /// `GatheredSQL.waitsForItsReaders`.
        let waits: Bool
        /// A batch is out, or the queue waits (`holding`); new reads wait in `queue`.
        var sending = false
        var queue: [Pending] = []
        /// The queue waits for the readers the last batch answered (`sendQueued`): it goes
        /// once it holds `target` reads, or when `timer` fires; `id` tells this wait's timer
        /// from an earlier one's.
        var holding: (target: Int, timer: Scheduled<Void>, id: Int)?
        var waitsSoFar = 0

        init(prepared: PreparedQuery, columns: Int, waits: Bool) {
            self.prepared = prepared
            self.columns = columns
            self.waits = waits
        }
    }

    /// A loop's connection and the reads on it.
    private final class Reader: Sendable {
        let connection: PostgresConnection
        /// The gathered statements, by type.
        let gatherings: [ObjectIdentifier: Gathering]
        /// The single statements (`run`), by type.
        let statements: [ObjectIdentifier: PreparedQuery]
        let server: Int

        init(connection: PostgresConnection, gatherings: [ObjectIdentifier: Gathering],
             statements: [ObjectIdentifier: PreparedQuery], server: Int) {
            self.connection = connection
            self.gatherings = gatherings
            self.statements = statements
            self.server = server
        }

        /// Every read waiting in a queue, taken out of them (under `slots`' lock).
        func takeQueued() -> [Pending] {
            var taken: [Pending] = []
            for gathering in gatherings.values {
                taken += gathering.queue
                gathering.queue = []
            }
            return taken
        }
    }

    private enum Slot: Sendable {
        case opening
        case ready(Reader)
        /// The last open failed, or a read did: no new try before this.
        case resting(until: NIODeadline)
    }

    private let slots = Mutex<[ObjectIdentifier: Slot]>([:])
    private let closed = Mutex(false)
    /// The gathered statements' texts and column counts, by their type.
    private let gathered: [(key: ObjectIdentifier, sql: String, columns: Int, waits: Bool)]
    /// The single statements' texts, by their type.
    private let statements: [(key: ObjectIdentifier, sql: String)]
    private let logger: Logger
    private let readersReturnWithin: TimeAmount

    /// `gathered` are the statements `read` gathers reads for; `statements` those run one by
    /// one (`run`).
    init(gathered: [any GatheredSQL.Type], statements: [any PreparedSQL.Type], logger: Logger,
         readersReturnWithin: TimeAmount = LoopReadConnections.readersReturnWithin) {
        self.readersReturnWithin = readersReturnWithin
        self.gathered = gathered.map { (key: ObjectIdentifier($0), sql: $0.sql, columns: $0.columns, waits: $0.waitsForItsReaders) }
        self.statements = statements.map { (key: ObjectIdentifier($0), sql: $0.sql) }
        self.logger = logger
    }

    /// Reads `values` (one per column of `statement`, one of the `gathered` these connections
    /// were made with) on `loop`'s connection, calling `done` once on `loop` with its row, or
    /// with an error when the read failed or its batch took longer than `bound`. False when
    /// this loop has no connection ready: `done` is then never called and the caller reads
    /// another way.
    func read(_ statement: any GatheredSQL.Type, on loop: any EventLoop, server: Int, bound: TimeAmount,
              open: @escaping @Sendable () throws -> PostgresConnection.Configuration,
              values: [String], done: @escaping Done) -> Bool {
        precondition(values.count == statement.columns)
        let pending = Pending(values: values, done: CallOnce(done))
        let kind = ObjectIdentifier(statement)
        let starts = withReader(on: loop, server: server, open: open) { reader -> PostgresConnection? in
            guard let gathering = reader.gatherings[kind] else {
                preconditionFailure("\(statement) is not one of the loop's gathered statements")
            }
            gathering.queue.append(pending)
            if let holding = gathering.holding {
                guard gathering.queue.count >= holding.target else { return nil }
                gathering.holding = nil
                holding.timer.cancel()
                return reader.connection
            }
            if gathering.sending { return nil }
            gathering.sending = true
            return reader.connection
        }
        guard let starts else { return false }
        // The batch goes once the loop has handled everything its last wake-up found: the
        // GETs read from other connections in the same wake-up go with it. Sent at once, the
        // first went alone and the others waited for its answer (1.5 GETs a statement under
        // `get-bench`'s eight connections).
        if let connection = starts {
            loop.execute { [weak self] in
                self?.sendQueued(kind, after: connection, key: ObjectIdentifier(loop), loop: loop, bound: bound)
            }
        }
        return true
    }

    /// Runs `statement` (one of the `statements` these connections were made with) alone on
    /// `loop`'s connection, with `binds`, calling `done` once on `loop` with its rows, or with
    /// an error when it failed or took longer than `bound` (the connection is then replaced,
    /// as for a failed read). False, and `done` never called, when this loop has no connection
    /// ready. Not gathered: the statement goes out at once, and postgres-nio sends it after
    /// whatever the connection is running.
    func run(_ statement: any PreparedSQL.Type, binds: [PostgresData], on loop: any EventLoop, server: Int,
             bound: TimeAmount, open: @escaping @Sendable () throws -> PostgresConnection.Configuration,
             done: @escaping @Sendable (Result<[PostgresRow], any Error>) -> Void) -> Bool {
        guard let reader = withReader(on: loop, server: server, open: open, { $0 }) else { return false }
        guard let prepared = reader.statements[ObjectIdentifier(statement)] else {
            preconditionFailure("\(statement) is not one of the loop's statements")
        }
        let connection = reader.connection, key = ObjectIdentifier(loop)
        let answer = CallOnce(done)
        let timer = loop.scheduleTask(in: bound) { [weak self] in
            let late = StoreError.unavailable("no answer from the database within \(bound)")
            answer.call(.failure(late))
            self?.fail(connection, key: key, late)
        }
        prepared.execute(binds).whenComplete { [weak self] result in
            timer.cancel()
            answer.call(result)
            if case .failure(let error) = result { self?.fail(connection, key: key, error) }
        }
        return true
    }

    /// What `withReader` found for a loop.
    private enum Lookup<Value: Sendable>: Sendable {
        case ready(Value)
        /// A connection replaced, with the reads that were queued on it.
        case opens(stale: (Reader, [Pending])?)
        case elsewhere
    }

    /// `body`'s value with the loop's ready connection, under the lock; nil when the loop has
    /// none ready, and then one opens unless one is opening or the last try failed less than
    /// a second ago.
    private func withReader<Value: Sendable>(on loop: any EventLoop, server: Int,
                                             open: @escaping @Sendable () throws -> PostgresConnection.Configuration,
                                             _ body: (Reader) -> Value) -> Value? {
        let key = ObjectIdentifier(loop)
        let lookup: Lookup<Value> = slots.withLock { slots in
            switch slots[key] {
            case nil:
                slots[key] = .opening
                return .opens(stale: nil)
            case .resting(let until)? where until <= .now():
                slots[key] = .opening
                return .opens(stale: nil)
            case .opening?, .resting?:
                return .elsewhere
            case .ready(let reader)?:
                // Closed by the server, or the primary moved (`PrimaryChoice`).
                if reader.connection.isClosed || reader.server != server {
                    slots[key] = .opening
                    return .opens(stale: (reader, reader.takeQueued()))
                }
                return .ready(body(reader))
            }
        }
        switch lookup {
        case .ready(let value):
            return value
        case .opens(let stale):
            if let (reader, queued) = stale { end(reader, queued) }
            if !closed.withLock({ $0 }) { connect(on: loop, key: key, server: server, open: open) }
            return nil
        case .elsewhere:
            return nil
        }
    }

    /// Sends `batch` as one `kind` statement; answers each read when its rows come, then
    /// sends what queued meanwhile.
    private func send(_ batch: [Pending], _ kind: ObjectIdentifier, on reader: Reader, key: ObjectIdentifier,
                      loop: any EventLoop, bound: TimeAmount) {
        let connection = reader.connection
        let gathering = reader.gatherings[kind]!
        let binds = (0..<gathering.columns).map { column in
            PostgresData(array: batch.map { PostgresData(string: $0.values[column]) }, elementType: .text)
        }
        let rows = Mutex<[PostgresRow]>([])
        // A batch late past `bound` ends the connection: the reads queued behind it would wait as long.
        let timer = loop.scheduleTask(in: bound) { [weak self] in
            self?.fail(connection, key: key, StoreError.unavailable("no answer from the database within \(bound)"))
        }
        gathering.prepared.execute(binds) { row in rows.withLock { $0.append(row) } }
            .whenComplete { [weak self] result in
                timer.cancel()
                guard let self else { return }
                let rows = rows.withLock { $0 }
                switch result {
                case .success where rows.count == batch.count:
                    for (pending, row) in zip(batch, rows) { pending.done.call(.success(row)) }
                    sendQueued(kind, after: connection, key: key, loop: loop, bound: bound, answered: batch.count)
                case .success:
                    fail(connection, key: key, StoreError.unavailable("\(rows.count) rows for \(batch.count) reads"), batch: batch)
                case .failure(let error):
                    fail(connection, key: key, error, batch: batch)
                }
            }
    }

    private func sendQueued(_ kind: ObjectIdentifier, after connection: PostgresConnection, key: ObjectIdentifier,
                            loop: any EventLoop, bound: TimeAmount, answered: Int = 0, endingHold: Int? = nil) {
        let next: (Reader, [Pending])? = slots.withLock { slots in
            guard case .ready(let reader)? = slots[key], reader.connection === connection,
                  let gathering = reader.gatherings[kind] else { return nil }
            if let endingHold {
                guard gathering.holding?.id == endingHold else { return nil }
                gathering.holding = nil
            }
            guard !gathering.queue.isEmpty else {
                gathering.sending = false
                return nil
            }
            // The readers just answered are clients waiting on their answers: under load each
            // asks again at once (a client's next GET). Sent now, the queue would go without
            // them, and they would queue behind it: the loop's readers split into two groups
            // whose batches take turns, half the size (about two GETs a statement among four
            // connections), each statement's cost shared by half as many. So the queue waits
            // for as many more reads as were answered, or `readersReturnWithin`. An empty
            // queue has nothing to hold: a lone reader's next read goes at once.
            if answered > 0, gathering.waits, gathering.queue.count < Self.largestBatch {
                gathering.waitsSoFar += 1
                let id = gathering.waitsSoFar
                let timer = loop.scheduleTask(in: readersReturnWithin) { [weak self] in
                    guard let self else { return }
                    sendQueued(kind, after: connection, key: key, loop: loop, bound: bound, endingHold: id)
                }
                gathering.holding = (min(gathering.queue.count + answered, Self.largestBatch), timer, id)
                return nil
            }
            let batch = Array(gathering.queue.prefix(Self.largestBatch))
            gathering.queue.removeFirst(batch.count)
            return (reader, batch)
        }
        if let (reader, batch) = next { send(batch, kind, on: reader, key: key, loop: loop, bound: bound) }
    }

    /// `connection` failed (or was late): its reads answer `error`, and it is closed and
    /// forgotten (a new one at the next GET).
    private func fail(_ connection: PostgresConnection, key: ObjectIdentifier, _ error: any Error, batch: [Pending] = []) {
        let queued: [Pending]? = slots.withLock { slots in
            guard case .ready(let reader)? = slots[key], reader.connection === connection else { return nil }
            slots[key] = .resting(until: .now())
            return reader.takeQueued()
        }
        for pending in batch { pending.done.call(.failure(error)) }
        for pending in queued ?? [] { pending.done.call(.failure(error)) }
        connection.close().whenComplete { _ in }
    }

    /// Closes a connection taken out of its slot; the reads that were queued on it answer an error.
    private func end(_ reader: Reader, _ queued: [Pending],
                     _ error: any Error = StoreError.unavailable("the read connection was replaced")) {
        for pending in queued { pending.done.call(.failure(error)) }
        reader.connection.close().whenComplete { _ in }
    }

    private func connect(on loop: any EventLoop, key: ObjectIdentifier, server: Int,
                         open: @escaping @Sendable () throws -> PostgresConnection.Configuration) {
        var configuration: PostgresConnection.Configuration
        do { configuration = try open() } catch { return rest(key) }
        // The statement's generic plan, always: PostgreSQL would otherwise plan it anew for
        // every batch, its cost estimate of an array of unknown length being above that of
        // the arrays it was given, and planning cost more than the read.
        configuration.options.additionalStartupParameters = configuration.options.additionalStartupParameters.filter {
            $0.0 != "application_name"
        } + [("application_name", Self.applicationName), ("plan_cache_mode", "force_generic_plan")]
        let gathered = self.gathered
        let texts = gathered.map { $0.sql } + statements.map { $0.sql }
        let keys = statements.map { $0.key }
        PostgresConnection.connect(on: loop, configuration: configuration, id: 3, logger: logger)
            .flatMap { connection in
                EventLoopFuture.whenAllSucceed(texts.map { connection.prepare(query: $0) }, on: loop)
                    .map { (connection, $0) }
                    .flatMapError { error in connection.close().flatMapThrowing { throw error } }
            }
            .whenComplete { [weak self] result in
                guard let self else {
                    // The store went (a short CLI command ends while a connection it asked
                    // for is still starting): close the connection, which nobody else holds.
                    // Dropped open, it is gone without a Terminate message, and postgres-nio's
                    // debug builds stop the process for it.
                    if case .success(let (connection, _)) = result { connection.close().whenComplete { _ in } }
                    return
                }
                switch result {
                case .success(let (connection, prepared)):
                    let gatherings = Dictionary(uniqueKeysWithValues: zip(gathered, prepared).map { statement, prepared in
                        (statement.key, Gathering(prepared: prepared, columns: statement.columns, waits: statement.waits))
                    })
                    let reader = Reader(connection: connection, gatherings: gatherings,
                                        statements: Dictionary(uniqueKeysWithValues: zip(keys, prepared.dropFirst(gathered.count))),
                                        server: server)
                    // Under the slots' lock, as `close()` sets `closed`: a connection that
                    // came up as the store closed is closed here, never left in a slot that
                    // `close()` has already emptied.
                    let kept = slots.withLock { slots in
                        guard !closed.withLock({ $0 }) else { return false }
                        slots[key] = .ready(reader)
                        return true
                    }
                    if !kept { connection.close().whenComplete { _ in } }
                case .failure(let error):
                    logger.debug("inline read connection: \(PostgresStore.describe(error))")
                    rest(key)
                }
            }
    }

    private func rest(_ key: ObjectIdentifier) {
        slots.withLock { $0[key] = .resting(until: .now() + .seconds(1)) }
    }

    /// Closes every connection; reads after this find none.
    func close() async {
        let readers = slots.withLock { slots in
            closed.withLock { $0 = true }
            defer { slots.removeAll() }
            return slots.values.compactMap { slot -> (Reader, [Pending])? in
                if case .ready(let reader) = slot { (reader, reader.takeQueued()) } else { nil }
            }
        }
        for (reader, queued) in readers {
            for pending in queued { pending.done.call(.failure(StoreError.unavailable("closed"))) }
            // At most a few seconds each: in full test runs a connection's close was seen
            // never to complete (its channel's close future never fulfilled, both event loops
            // idle), which held the closing store, and every test after it, for ever.
            let connection = reader.connection
            if !(await withTimeout(.seconds(5)) { try? await connection.close() }) {
                logger.warning("a GET connection did not close within 5 s; left behind")
            }
        }
    }
}

extension PostgresStore {
    /// How long a read on a loop's connection may go unanswered: the connection timeout, as
    /// a lease from the pool may wait.
    var loopReadBound: TimeAmount { .nanoseconds(Int64(configuration.connectionTimeout / .nanoseconds(1))) }

    /// The rows of `statement` (one of those `loopReads` was made with) run on the calling
    /// event loop's own connection (`LoopReadConnections.run`). Nil when the caller is on no
    /// event loop, its loop has no connection ready, or the read failed: the caller then asks
    /// the pool, whose answer (or `unavailable`) is the one that counts.
    func rowsOnLoop(_ statement: any PreparedSQL.Type, _ binds: [PostgresData]) async -> [PostgresRow]? {
        await withCheckedContinuation { continuation in
            guard let loop = MultiThreadedEventLoopGroup.currentEventLoop,
                  loopReads.run(statement, binds: binds, on: loop, server: primary.currentIndex, bound: loopReadBound,
                                open: { [self] in try connectionConfiguration() },
                                done: { continuation.resume(returning: try? $0.get()) })
            else { return continuation.resume(returning: nil) }
        }
    }
}

/// A callback called at most once, by whichever of a read's answer and its failure comes first.
private final class CallOnce<Value: Sendable>: Sendable {
    private let body: Mutex<(@Sendable (Value) -> Void)?>
    init(_ body: @escaping @Sendable (Value) -> Void) { self.body = Mutex(body) }
    /// True when this call was the one.
    @discardableResult
    func call(_ value: Value) -> Bool {
        guard let body = body.withLock({ body in defer { body = nil }; return body }) else { return false }
        body(value)
        return true
    }
}
