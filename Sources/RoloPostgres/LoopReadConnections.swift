import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import RoloStore
import Synchronization

/// The inline GET's reads on a connection of the calling event loop's own, outside the
/// pool, gathered: a GET on PostgreSQL runs on one thread from the request's bytes to the
/// answer's, and the GETs that arrive while a read is out go together in the next one.
///
/// Through the pool a GET hopped between threads four times (a task for the lease, the
/// pool's event loop, the connection's, the continuation back, the answer to the request's
/// loop), and woke a PostgreSQL backend for each; `perf` of a GET-only load showed the
/// kernel's task switches and wake-ups as the largest cost, about 300 µs of Rolo's CPU a GET
/// where SQLite's whole GET takes 90. Here the statement is written and its rows read on the
/// loop that asks, through postgres-nio's future interface, one statement for a batch.
///
/// The statement takes `columns` text arrays, the batch's values column by column, and
/// answers one row per element in their order. Each event loop gets one connection, opened
/// at its first GET (that GET and any while it opens take the pool's way) to the current
/// primary, with the statement prepared on it. A failed or late read answers an error, and
/// the server's full path answers those GETs (and its 503 when the database is away); the
/// connection is then dropped, and a new one is tried at the next GET, at most once a second.
/// One more connection per event loop than `pool_size`, then (Docs/configuration.md).
final class LoopReadConnections: Sendable {
    /// How these connections show in `pg_stat_activity`, beside the pool's "rolo".
    static let applicationName = "rolo GET"
    /// The most reads one statement carries: bounds a batch's answer (cards are up to the
    /// body limit each) and the wait of the last read in it.
    static let largestBatch = 32

    typealias Done = @Sendable (Result<PostgresRow?, any Error>) -> Void

    private struct Pending: Sendable {
        let values: [String]
        let done: CallOnce<Result<PostgresRow?, any Error>>
    }

    /// A loop's connection and the reads on it.
    private struct Reader: Sendable {
        let connection: PostgresConnection
        let prepared: PreparedQuery
        let server: Int
        /// A batch is out; new reads wait in `queue` for its answer.
        var sending = false
        var queue: [Pending] = []
    }

    private enum Slot: Sendable {
        case opening
        case ready(Reader)
        /// The last open failed, or a read did: no new try before this.
        case resting(until: NIODeadline)
    }

    private let slots = Mutex<[ObjectIdentifier: Slot]>([:])
    private let closed = Mutex(false)
    private let sql: String
    private let columns: Int
    private let logger: Logger

    init(sql: String, columns: Int, logger: Logger) {
        self.sql = sql
        self.columns = columns
        self.logger = logger
    }

    /// Reads `values` (one per column of the statement) on `loop`'s connection, calling `done`
    /// once on `loop` with its row, or with an error when the read failed or its batch took
    /// longer than `bound`. False when this loop has no connection ready: `done` is then never
    /// called and the caller reads another way.
    func read(on loop: any EventLoop, server: Int, bound: TimeAmount,
              open: @escaping @Sendable () throws -> PostgresConnection.Configuration,
              values: [String], done: @escaping Done) -> Bool {
        precondition(values.count == columns)
        let key = ObjectIdentifier(loop)
        let pending = Pending(values: values, done: CallOnce(done))
        enum Next { case send(Reader), queued, opens(stale: Reader?), elsewhere }
        let next: Next = slots.withLock { slots in
            switch slots[key] {
            case nil:
                slots[key] = .opening
                return .opens(stale: nil)
            case .resting(let until)? where until <= .now():
                slots[key] = .opening
                return .opens(stale: nil)
            case .opening?, .resting?:
                return .elsewhere
            case .ready(var reader)?:
                // Closed by the server, or the primary moved (`PrimaryChoice`).
                if reader.connection.isClosed || reader.server != server {
                    slots[key] = .opening
                    return .opens(stale: reader)
                }
                if reader.sending {
                    reader.queue.append(pending)
                    slots[key] = .ready(reader)
                    return .queued
                }
                reader.sending = true
                slots[key] = .ready(reader)
                return .send(reader)
            }
        }
        switch next {
        case .send(let reader):
            send([pending], on: reader, key: key, loop: loop, bound: bound)
            return true
        case .queued:
            return true
        case .opens(let stale):
            if let stale { end(stale) }
            if !closed.withLock({ $0 }) { connect(on: loop, key: key, server: server, open: open) }
            return false
        case .elsewhere:
            return false
        }
    }

    /// Sends `batch` as one statement; answers each read when its rows come, then sends what
    /// queued meanwhile.
    private func send(_ batch: [Pending], on reader: Reader, key: ObjectIdentifier, loop: any EventLoop, bound: TimeAmount) {
        let connection = reader.connection
        let binds = (0..<columns).map { column in
            PostgresData(array: batch.map { PostgresData(string: $0.values[column]) }, elementType: .text)
        }
        let rows = Mutex<[PostgresRow]>([])
        // A batch late past `bound` ends the connection: the reads queued behind it would wait as long.
        let timer = loop.scheduleTask(in: bound) { [weak self] in
            self?.fail(connection, key: key, StoreError.unavailable("no answer from the database within \(bound)"))
        }
        reader.prepared.execute(binds) { row in rows.withLock { $0.append(row) } }
            .whenComplete { [weak self] result in
                timer.cancel()
                guard let self else { return }
                let rows = rows.withLock { $0 }
                switch result {
                case .success where rows.count == batch.count:
                    for (pending, row) in zip(batch, rows) { pending.done.call(.success(row)) }
                    sendQueued(after: connection, key: key, loop: loop, bound: bound)
                case .success:
                    fail(connection, key: key, StoreError.unavailable("\(rows.count) rows for \(batch.count) reads"), batch: batch)
                case .failure(let error):
                    fail(connection, key: key, error, batch: batch)
                }
            }
    }

    private func sendQueued(after connection: PostgresConnection, key: ObjectIdentifier, loop: any EventLoop, bound: TimeAmount) {
        let next: (Reader, [Pending])? = slots.withLock { slots in
            guard case .ready(var reader)? = slots[key], reader.connection === connection else { return nil }
            guard !reader.queue.isEmpty else {
                reader.sending = false
                slots[key] = .ready(reader)
                return nil
            }
            let batch = Array(reader.queue.prefix(Self.largestBatch))
            reader.queue.removeFirst(batch.count)
            slots[key] = .ready(reader)
            return (reader, batch)
        }
        if let (reader, batch) = next { send(batch, on: reader, key: key, loop: loop, bound: bound) }
    }

    /// `connection` failed (or was late): its reads answer `error`, and it is closed and
    /// forgotten (a new one at the next GET).
    private func fail(_ connection: PostgresConnection, key: ObjectIdentifier, _ error: any Error, batch: [Pending] = []) {
        let reader: Reader? = slots.withLock { slots in
            guard case .ready(let reader)? = slots[key], reader.connection === connection else { return nil }
            slots[key] = .resting(until: .now())
            return reader
        }
        for pending in batch { pending.done.call(.failure(error)) }
        if let reader { end(reader, error) }
        else { connection.close().whenComplete { _ in } }
    }

    /// Closes a connection no longer in its slot; the reads queued on it answer an error.
    private func end(_ reader: Reader, _ error: any Error = StoreError.unavailable("the read connection was replaced")) {
        for pending in reader.queue { pending.done.call(.failure(error)) }
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
        let sql = sql
        PostgresConnection.connect(on: loop, configuration: configuration, id: 3, logger: logger)
            .flatMap { connection in
                connection.prepare(query: sql).map { (connection, $0) }
                    .flatMapError { error in connection.close().flatMapThrowing { throw error } }
            }
            .whenComplete { [weak self] result in
                guard let self else { return }
                switch result {
                case .success(let (connection, prepared)):
                    let keep = !closed.withLock { $0 }
                    if keep { slots.withLock { $0[key] = .ready(Reader(connection: connection, prepared: prepared, server: server)) } }
                    else { connection.close().whenComplete { _ in } }
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
        closed.withLock { $0 = true }
        let readers = slots.withLock { slots in
            defer { slots.removeAll() }
            return slots.values.compactMap { slot -> Reader? in
                if case .ready(let reader) = slot { reader } else { nil }
            }
        }
        for reader in readers {
            for pending in reader.queue { pending.done.call(.failure(StoreError.unavailable("closed"))) }
            try? await reader.connection.close()
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
