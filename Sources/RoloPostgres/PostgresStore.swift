import Foundation
import Logging
import PostgresNIO
import RoloStore
import Synchronization

/// `RoloStore` on PostgreSQL (postgres-nio's pooled client), so that several Rolo processes
/// can serve one database. The same semantics as `SQLiteStore`, proven by the same store
/// tests: every write is one transaction that first locks its collection's row (the
/// `UPDATE … sync_seq = sync_seq + 1` that hands out the seq), then decides its
/// preconditions on what is committed by then, so two racing writes to one book are
/// serialised and never both win. PUTs to one book share transactions (`WriteBatches`),
/// under the same lock. Reads are single statements (one snapshot each).
///
/// A lost or unreachable server makes calls throw `StoreError.unavailable` (the server
/// answers 503) after at most `Configuration.connectionTimeout`; the pool reconnects by
/// itself. With several servers in the URL, calls go to the one that accepts writes, and a
/// call that finds the database unavailable starts the search for it again (`PrimaryChoice`),
/// so a promoted replica is served without a restart. Every read is a round trip; the inline
/// GET's (`InlineResourceReads`) is one, on a connection of the asking event loop's own
/// (`LoopReadConnections`), or none when the card is in memory (`CardCache`, kept current by
/// the database's notices).
///
/// Open with `open(_:)`, which runs the migrations (once, under an advisory lock, whatever
/// the number of processes starting), and `close()` when done.
public final class PostgresStore: RoloStore, InlineResourceReads, Sendable {
    public let configuration: Configuration
    /// Time stamped on everything written; `.fixed` for deterministic test servers.
    public let clock: StoreClock
    /// Committed changes of books, for push (published after each commit).
    public let bookChanges = BookChangeFeed()
    /// One pool per server of the URL; calls use the current primary's (`client`).
    private let clients: [PostgresClient]
    /// Which server calls go to, and the search for the writable one.
    let primary: PrimaryChoice
    let logger: Logger
    /// The clients' background work (connections, keep-alives), until `close()`.
    private let running: Task<Void, Never>
    /// Leases still waiting for a connection, failed by `watchdog` once past their deadline.
    private let leaseDeadlines = LeaseDeadlines()
    /// Checks `leaseDeadlines` a few times a second, until `close()`.
    private let watchdog: Task<Void, Never>
    /// The key of app-password hashes, kept in the database (`settings`).
    let pepperValue = Mutex<Data>(Data())
    /// Whether the schema has the trigram index (pg_trgm was available), which the
    /// substring queries then add as a candidate filter.
    private let trigramIndex = Mutex(false)
    /// Whether a substring query of a book uses that index (`SubstringIndexChoice`).
    let substringIndex: SubstringIndexChoice
    /// PUTs to one book gathered into one transaction (group commit).
    let writeBatches: WriteBatches
    /// The inline GET's connections, one per event loop.
    let loopReads: LoopReadConnections
    /// VACUUM and the GIN pending lists merged once a burst of writes ends.
    let tidying: BurstTidying
    /// The addressbook-queries' statements, prepared per connection by their shape.
    let shapedStatements = ShapedStatements()
    /// Reads kept in memory, true by the database's notices.
    let cardCache: CardCache
    /// Lets the card cache answer GETs while other processes use the database.
    let noticesFence: NoticesFence
    /// Lets it answer them without a fence, holding writes until the others heard them.
    let readLeases: ReadLeases
    /// How long the notices connection's heartbeat waits for a count before it takes the
    /// connection for lost (`NoticesHeartbeat`): 5 s; a test that stalls the backend on
    /// purpose, and asserts on that one connection, waits longer.
    var noticesPatience: TimeAmount {
        get { .nanoseconds(noticesPatienceNanoseconds.load(ordering: .relaxed)) }
        set { noticesPatienceNanoseconds.store(newValue.nanoseconds, ordering: .relaxed) }
    }
    private let noticesPatienceNanoseconds = Atomic<Int64>(NoticesHeartbeat.patience.nanoseconds)
    /// `followCacheNotices`, from `open(_:)` until `close()`.
    let cacheNotices = Mutex<Task<Void, Never>?>(nil)
    /// This process's announcement of itself, and the other processes' acknowledgements of
    /// it (`startNotices`).
    let announcement = Announcement()
    /// How many `followBookChanges` run: while any does, the notices connection publishes
    /// each book change into `bookChanges` too.
    let bookChangeFollowers = Mutex(0)

    private init(configuration: Configuration, clock: StoreClock, logger: Logger) throws {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        // Half the pool at most held by books' batches: the other requests keep the rest.
        writeBatches = WriteBatches(limits: WriteBatches.Limits(heldConnections: configuration.poolSize / 2))
        loopReads = LoopReadConnections(gathered: [InlineReadBatchSQL.self, StampAndMemberSQL.self],
                                        statements: [CollectionByPathSQL.self, CollectionMemberSQL.self, HomeLocksSQL.self, ResourceCountSQL.self,
                                                     ChangesSinceSQL.self, InfoPageSQL.self, InfosByNameSQL.self, CardsByNameSQL.self,
                                                     AppPasswordSQL.self, AppPasswordAndMemberSQL.self],
                                        logger: logger)
        substringIndex = SubstringIndexChoice(minimumBookCards: max(configuration.substringIndexMinimumCards, 0))
        tidying = BurstTidying(threshold: max(configuration.tidyAfterWrites, 0))
        cardCache = CardCache(capacity: configuration.cardCacheBytes)
        noticesFence = NoticesFence(logger: logger)
        readLeases = ReadLeases(cardCache: cardCache, timing: configuration.leaseTiming, logger: logger)
        let clients = try configuration.servers.map {
            PostgresClient(configuration: try configuration.clientConfiguration(server: $0), backgroundLogger: logger)
        }
        self.clients = clients
        primary = PrimaryChoice(servers: configuration.servers)
        running = Task {
            await withDiscardingTaskGroup { group in
                for client in clients { group.addTask { await client.run() } }
            }
        }
        watchdog = Task { [leaseDeadlines] in
            var last = ContinuousClock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: LeaseDeadlines.tick)
                let now = ContinuousClock.now
                // Woken late: the host ran none of this store's tasks meanwhile (every thread
                // busy, the process paused), neither the watchdog nor the connection work it
                // watches. That time was the host's, not the database's: the deadlines move by
                // it, so that a stalled host is not reported as an unreachable database.
                let late = now - last - LeaseDeadlines.tick
                if late > LeaseDeadlines.tick { leaseDeadlines.postpone(by: late) }
                leaseDeadlines.expire(at: now)
                last = now
            }
        }
    }

    /// Connects, migrates the schema and loads the server's secrets. Throws
    /// `StoreError.unavailable` when the server cannot be reached within the connection timeout.
    public static func open(_ configuration: Configuration, clock: StoreClock = .system,
                            logger: Logger = PostgresStore.defaultLogger) async throws -> PostgresStore {
        let store = try PostgresStore(configuration: configuration, clock: clock, logger: logger)
        do {
            // Also gives the client's run task time to start before the first lease.
            if configuration.servers.count > 1 {
                store.primary.select(try await store.findPrimary(startingAt: 0).get())
            } else {
                try await store.probe()
            }
            try await store.migrate()
            let pepper = try await store.loadPepper()
            store.pepperValue.withLock { $0 = pepper }
            let trigrams = try await store.hasTrigramIndex()
            store.trigramIndex.withLock { $0 = trigrams }
            await store.startNotices()
        } catch {
            await store.close()
            throw error
        }
        return store
    }

    /// The client's background log: notices and worse (a failed connection attempt, logged
    /// at info by postgres-nio at every retry, would fill the log while the server is away;
    /// the 503 answers say it).
    public static var defaultLogger: Logger {
        var logger = Logger(label: "rolo.postgres")
        logger.logLevel = .notice
        return logger
    }

    /// One connection of its own, at once: a wrong host, password or certificate is told in
    /// words, where the pool would keep retrying until the connection timeout.
    private func probe() async throws {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: try connectionConfiguration(), id: 0, logger: logger)
        } catch {
            throw StoreError.unavailable(Self.describe(error))
        }
        try? await connection.close()
    }

    /// What went wrong, in words: the server's message, else the underlying error (a refused
    /// connection, a certificate), never the query or its values.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }

    /// The settings of a connection of its own to the current primary (LISTEN, snapshots).
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        try configuration.connectionConfiguration(server: primary.current)
    }

    /// The pool of the current primary.
    private var client: PostgresClient { clients[primary.currentIndex] }

    /// The first server that accepts writes, the one at `first` asked first (so a search
    /// after a passing fault stays where it was), then the others in the URL's order; asked
    /// as libpq's `target_session_attrs=read-write` asks, `SHOW transaction_read_only`, each
    /// on a connection of its own. Else what each server said.
    func findPrimary(startingAt first: Int) async -> Result<Int, StoreError> {
        let servers = configuration.servers
        var reasons: [String] = []
        for index in [first] + servers.indices.filter({ $0 != first }) {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: try configuration.connectionConfiguration(server: servers[index]), id: 2, logger: logger)
                let readOnly = try? await connection.query("SHOW transaction_read_only", logger: logger).collect().first?
                    .decode(String.self)
                try? await connection.close()
                if readOnly == "off" { return .success(index) }
                reasons.append("\(servers[index]): \(readOnly == "on" ? "read-only (a standby)" : "no answer")")
            } catch {
                reasons.append("\(servers[index]): \(Self.describe(error))")
            }
        }
        return .failure(.unavailable("no server accepts writes (\(reasons.joined(separator: "; ")))"))
    }

    /// A call found the database unavailable: with several servers, the primary may have
    /// moved, so the search starts (unless one runs).
    private func unavailable(_ error: any Error) -> any Error {
        if clients.count > 1, case .unavailable? = error as? StoreError {
            primary.search(logger: logger) { [weak self] first in
                await self?.findPrimary(startingAt: first) ?? .failure(.unavailable("closed"))
            }
        }
        return error
    }

    /// Closes every connection. Calls made afterwards throw.
    public func close() async {
        if let tidying = tidying.close() {
            tidying.cancel()
            if !(await withTimeout(.seconds(5)) { await tidying.value }) {
                logger.warning("the tidying after writes did not end within 5 s; left behind")
            }
        }
        primary.stop()
        await readLeases.leave()
        if let notices = cacheNotices.withLock({ $0 }) {
            notices.cancel()
            _ = await withTimeout(.seconds(5)) { await notices.value }
        }
        await loopReads.close()
        watchdog.cancel()
        running.cancel()
        // The client's shutdown waits for its leased connections; one whose statement was
        // given up (`Connection.bounded`) may never come back. The process is ending: wait a
        // few seconds, not for ever.
        let running = running
        let ended = await withTimeout(.seconds(5)) { await running.value }
        if !ended { logger.warning("the database client did not shut down within 5 s; left behind") }
    }

    /// Seconds since 1970 by the store's clock, as the tables keep them.
    var now: Double { clock.now.timeIntervalSince1970 }

    var pepper: Data { pepperValue.withLock { $0 } }

    var usesTrigramIndex: Bool { trigramIndex.withLock { $0 } }

    var bcryptCost: UInt8 { configuration.bcryptCost }

    /// The statement timeout and a margin: past it a statement is taken as lost (`Connection.bounded`).
    private var statementBound: StatementBound? {
        configuration.statementTimeout.map { StatementBound(deadlines: leaseDeadlines, limit: $0 + configuration.lostStatementMargin) }
    }

    // MARK: Connections and transactions

    /// Runs `body` on one pooled connection outside a transaction: each statement its own
    /// snapshot, a write committed by itself (reads, and writes of one statement). A
    /// connection found lost is tried again, up to three times in all: the pool may hand
    /// out another of the connections the same outage closed before it has noticed. On `held`
    /// while it is open (a book's batches, `BookConnection`), else on a pooled connection.
    func autocommit<T: Sendable>(on held: BookConnection? = nil,
                                 _ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await leased(on: held, alone: false, body)
            } catch where attempt < 3 && Self.isConnectionLost(error) {
                try? await Task.sleep(for: .milliseconds(10))
                continue
            } catch {
                throw unavailable(Self.mapped(error))
            }
        }
    }

    /// Runs `body`, one statement that is its own transaction (a write of several rows that
    /// must commit together), on one pooled connection. A deadlock or serialization failure
    /// runs it again (nothing was written), and so does a statement never sent (its pooled
    /// connection had closed, `ClosedConnection`); a connection lost while it ran does not:
    /// whether it committed nobody can tell, so the caller answers unavailable, as a lost
    /// COMMIT is. On `held` while it is open, as `autocommit`.
    func standalone<T: Sendable>(on held: BookConnection? = nil,
                                 _ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await leased(on: held, alone: false, body)
            } catch where attempt < 4 && (Self.isRetryable(error) || error is ClosedConnection) {
                if error is ClosedConnection { try? await Task.sleep(for: .milliseconds(10)) }
                continue
            } catch where Self.isConnectionLost(error) {
                throw unavailable(StoreError.unavailable("the connection was lost during a write: \(Self.describe(error))"))
            } catch {
                throw unavailable(Self.mapped(error))
            }
        }
    }

    /// Runs `body` in a transaction (READ COMMITTED) on one connection: committed when it
    /// returns, rolled back when it throws. A deadlock or serialization failure runs it again,
    /// and so does a connection lost before COMMIT was sent (then nothing was committed). On
    /// `held` while it is open, alone there (`BookConnection`), as `autocommit`.
    func transaction<T: Sendable>(on held: BookConnection? = nil,
                                  _ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await leased(on: held, alone: true) { connection in
                    try await connection.execute("BEGIN")
                    let value: T
                    do {
                        try await Self.announceExclusion(connection)
                        value = try await body(connection)
                    } catch {
                        await connection.rollback()
                        throw error
                    }
                    do {
                        try await connection.execute("COMMIT")
                    } catch {
                        // Committed or not: nobody can tell. Never run again.
                        throw CommitFailed(underlying: error)
                    }
                    return value
                }
            } catch let failure as CommitFailed {
                throw unavailable(Self.mapped(failure.underlying))
            } catch where attempt < 4 && (Self.isRetryable(error) || Self.isConnectionLost(error)) {
                continue
            } catch {
                throw unavailable(Self.mapped(error))
            }
        }
    }

    private struct CommitFailed: Error { var underlying: any Error }

    /// `body` on `held` in its turn (`alone` for a transaction), as `leased` runs it on a
    /// pooled connection: a statement that goes unanswered (`Connection.bounded`) answers this
    /// call at once. On a pooled connection when there is no `held`, or it has closed (a
    /// statement written to it would never be sent).
    func leased<T: Sendable>(on held: BookConnection?, alone: Bool,
                             _ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        guard let held, !held.isClosed else { return try await leased(body) }
        await held.turns.enter(alone: alone)
        defer { held.turns.leave(alone: alone) }
        let race = LeaseRace<T>()
        let logger = logger, bound = statementBound
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            guard race.begin(continuation), race.grant() else { return }
            Task.immediate {
                do {
                    race.finish(.success(try await body(Connection(connection: held.connection, logger: logger, bound: bound,
                                                                   failCall: { race.fail($0) }))))
                } catch {
                    race.finish(.failure(error))
                }
            }
        }
    }

    /// `body` with a leased connection, waiting at most `connectionTimeout` for the lease:
    /// the pool keeps a request waiting while it cannot connect (up to a minute), where a
    /// client should get its 503 quickly.
    ///
    /// The wait is a race (`LeaseRace`), not a task group: a group awaits its children, and
    /// the pool's wait for a connection did not end at cancellation while the server was
    /// down, so a request hung until the pool gave up (Tests/interop/scale-out.sh saw 60 s).
    /// A lease granted after the deadline runs nothing: the request was already answered 503.
    ///
    /// The deadline is kept by one watchdog per store (`LeaseDeadlines`), not a sleeping task
    /// per call: at thousands of calls a second those tasks lived 10 s each, and their timers
    /// cost more CPU than the statements and held about 100 MB.
    ///
    /// The task asking for the lease starts on the calling thread (`Task.immediate`), up to
    /// its first wait: a task enqueued like any other waited its turn on a busy event loop
    /// before it asked the pool, 190-240 µs (median) of every write batch's lease under
    /// `put-import --postgres`, against 50 µs now, and a book's batches take turns.
    func leased<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        let race = LeaseRace<T>()
        let timeout = configuration.connectionTimeout
        let deadlines = leaseDeadlines
        let bound = statementBound
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                guard race.begin(continuation) else { return }
                let ticket = deadlines.add(deadline: .now + timeout) {
                    race.expire(StoreError.unavailable("no connection to the database within \(timeout)"))
                }
                let work = Task.immediate { [client, logger] in
                    do {
                        let value = try await client.withConnection { connection in
                            deadlines.remove(ticket)
                            guard race.grant() else { throw CancellationError() }
                            return try await body(Connection(connection: connection, logger: logger, bound: bound,
                                                             failCall: { race.fail($0) }))
                        }
                        race.finish(.success(value))
                    } catch {
                        deadlines.remove(ticket)
                        race.finish(.failure(error))
                    }
                }
                race.onCancel = { work.cancel() }
            }
        } onCancel: {
            race.cancel()
        }
    }

    private func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw Self.mapped(error) }
    }

    /// The SQLSTATE of a server error, nil for other errors. postgres-nio's `PreparedQuery`
    /// (`ShapedStatements`) reports errors in its older form, `PostgresError`.
    static func sqlState(_ error: any Error) -> String? {
        if case .server(let message)? = error as? PostgresError { return message.fields[.sqlState] }
        guard let error = error as? PSQLError, error.code == .server else { return nil }
        return error.serverInfo?[.sqlState]
    }

    /// Server states that mean the database cannot serve now: connection exceptions,
    /// shutdowns, too many connections, statement timeout, a write on a server that is
    /// (again, or still) a standby.
    static func meansUnavailable(sqlState state: String) -> Bool {
        state.hasPrefix("08") || state.hasPrefix("53") || ["57P01", "57P02", "57P03", "57014", "25006"].contains(state)
    }

    static func isUniqueViolation(_ error: any Error) -> Bool { sqlState(error) == "23505" }

    /// Deadlock or serialization failure: the transaction can simply run again.
    static func isRetryable(_ error: any Error) -> Bool {
        guard let state = sqlState(error) else { return false }
        return state == "40001" || state == "40P01"
    }

    /// The connection broke (server restarted, network cut): nothing more can run on it.
    static func isConnectionLost(_ error: any Error) -> Bool {
        if error is ClosedConnection { return true }
        if case .connectionClosed? = error as? PostgresError { return true }
        guard let error = error as? PSQLError else { return false }
        return [.serverClosedConnection, .connectionError, .uncleanShutdown, .clientClosedConnection].contains(error.code)
    }

    /// Errors of reaching the server become `StoreError.unavailable`; others pass unchanged.
    static func mapped(_ error: any Error) -> any Error {
        if error is StoreError || error is CancellationError { return error }
        if error is ClosedConnection { return StoreError.unavailable("\(error)") }
        if let legacy = error as? PostgresError {
            switch legacy {
            case .server: return meansUnavailable(sqlState: sqlState(legacy) ?? "") ? StoreError.unavailable("\(legacy)") : legacy
            case .connectionClosed: return StoreError.unavailable("\(legacy)")
            case .protocol: return legacy
            }
        }
        if let error = error as? PSQLError {
            switch error.code {
            case .server:
                if meansUnavailable(sqlState: error.serverInfo?[.sqlState] ?? "") { return StoreError.unavailable(describe(error)) }
                return error
            case .tooManyParameters, .invalidCommandTag, .messageDecodingFailure, .unexpectedBackendMessage:
                return error
            default:
                return StoreError.unavailable(describe(error))
            }
        }
        // The pool's own errors (its circuit breaker after failed connection attempts) and
        // NIO's connection errors (refused, timed out, reset).
        let type = String(reflecting: Swift.type(of: error))
        if ["ConnectionPoolError", "NIOConnectionError", "IOError", "ChannelError", "NIOSSLError", "BoringSSLError"]
            .contains(where: type.contains) {
            return StoreError.unavailable("\(error)")
        }
        return error
    }
}

/// One leased connection, as the store's extensions use it.
struct Connection: Sendable {
    let connection: PostgresConnection
    let logger: Logger
    /// How long a statement may go unanswered before its connection is closed; nil for no
    /// limit (what `unbounded` gives, for the work that turns the statement timeout off).
    var bound: StatementBound? = nil
    /// Answers the store call holding this connection with an error at once, whatever the
    /// work on the connection still waits for (`LeaseRace.fail`).
    var failCall: (@Sendable (any Error) -> Void)? = nil

    /// This connection without the bound: for migrations and copies, whose statements may
    /// rightly run for minutes.
    var unbounded: Connection { Connection(connection: connection, logger: logger, bound: nil, failCall: failCall) }

    /// Every row of the statement.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await bounded { try await connection.query(query, logger: logger).collect() }
    }

    /// `work` (one statement), given up when its connection closes without answering it, or
    /// past the bound. When PostgreSQL stopped in a PUT storm, a few statements sent as their
    /// connection closed were never answered nor failed (Tests/interop/scale-out.sh: those
    /// PUTs waited for ever, and the process did not stop on SIGTERM; postgres-nio's write of
    /// the statement to a closed channel fails without telling the statement). And the
    /// server's statement timeout cannot end a statement whose server is gone without a
    /// word. Then the store call is answered `unavailable` at once (the server answers 503),
    /// the connection closed if it is not; the work, should it ever end, finds the call
    /// answered.
    func bounded<T>(_ work: () async throws -> T) async throws -> T {
        // A statement written to a connection that has just closed is never answered nor
        // failed by postgres-nio (the write fails with no one to tell): tried again on another,
        // once the close has finished. The pool hears of a close from the same future, by a
        // callback that came first; a retry sent before it could be handed the same connection
        // again (all three of a call's tries, 10 ms apart, in one loaded test run once leases
        // began on the caller's thread).
        if connection.isClosed {
            try? await connection.closeFuture.get()
            throw ClosedConnection()
        }
        guard let bound else { return try await work() }
        let connection = connection, logger = logger, failCall = failCall
        let ticket = bound.deadlines.add(deadline: .now + bound.limit, isLost: { connection.isClosed }) {
            let closed = connection.isClosed
            logger.warning(closed ? "a statement's connection closed and no answer came" :
                                    "a statement went unanswered for \(bound.limit): closing its connection")
            // The call is answered first: closing first let the statement's own failure
            // (`clientClosedConnection`) win the race now and then, and that one is retried
            // on another connection, so the call was not the 503 it is meant to be.
            failCall?(StoreError.unavailable("the database connection was lost"))
            if !closed {
                let closing: EventLoopFuture<Void> = connection.close()
                _ = closing
            }
        }
        defer { bound.deadlines.remove(ticket) }
        return try await work()
    }

    /// Runs a statement, dropping its rows.
    func execute(_ query: PostgresQuery) async throws {
        _ = try await rows(query)
    }

    /// The first row, nil when none.
    func first(_ query: PostgresQuery) async throws -> PostgresRow? {
        try await rows(query).first
    }

    /// Ends a failed transaction; a connection that cannot is closed, so that the pool never
    /// hands out one still inside a transaction.
    func rollback() async {
        do {
            try await execute("ROLLBACK")
        } catch {
            try? await connection.close()
        }
    }
}

/// A statement whose text is assembled from parts (queries, named lookups), with numbered
/// placeholders for the values bound as it grows.
struct SQLBuilder {
    var text = ""
    /// The values, for `query`; empty when kept as `data` instead.
    private(set) var binds = PostgresBindings()
    /// The values as `PostgresData` instead (`keepingData`): what a statement prepared with
    /// postgres-nio's `PreparedQuery` is run with (`ShapedStatements`).
    private(set) var data: [PostgresData]?
    /// The values bound so far, the last one's placeholder number.
    private(set) var count = 0
    /// Whether placeholders come out as `(SELECT $n)` (`opaque`).
    private var hidesValues = false

    init(_ text: String = "") { self.text = text }

    /// A builder whose placeholders are sub-selects, `(SELECT $n)`, whose values the planner
    /// does not see (each is an init plan, run once). For a prepared statement that
    /// PostgreSQL would otherwise plan again at every run: when its plans for the values
    /// (custom plans) look cheaper than its plan for any values (the generic plan), it keeps
    /// making custom plans, and hiding the values makes the two alike, so it keeps the
    /// generic one (`BatchWriteSQL`).
    static func opaque() -> SQLBuilder {
        var builder = SQLBuilder()
        builder.hidesValues = true
        return builder
    }

    /// `$n`, or `(SELECT $n)` when the builder hides its values.
    private func placeholder() -> String { hidesValues ? "(SELECT $\(count))" : "$\(count)" }

    /// A builder that keeps its values as `data`, for `ShapedStatements`, rather than as a
    /// `PostgresQuery`'s bindings.
    static func keepingData() -> SQLBuilder {
        var builder = SQLBuilder()
        builder.data = []
        return builder
    }

    /// Binds `value` and returns its placeholder (`$n`).
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
        if data != nil {
            var bytes = ByteBuffer()
            value.encode(into: &bytes, context: .default)
            data!.append(PostgresData(type: value.psqlType, formatCode: value.psqlFormat, value: bytes))
        } else {
            binds.append(value)
        }
        count += 1
        return placeholder()
    }

    mutating func bind<Value: PostgresThrowingDynamicTypeEncodable>(_ value: Value) throws -> String {
        if data != nil {
            var bytes = ByteBuffer()
            try value.encode(into: &bytes, context: .default)
            data!.append(PostgresData(type: value.psqlType, formatCode: value.psqlFormat, value: bytes))
        } else {
            try binds.append(value)
        }
        count += 1
        return placeholder()
    }

    /// Binds NULL and returns its placeholder, `$n` even in an `opaque` builder: a NULL bound
    /// without a type takes it from where it stands, which a sub-select would hide.
    mutating func bindNull() -> String {
        if data != nil { data!.append(.null) } else { binds.appendNull() }
        count += 1
        return "$\(count)"
    }

    mutating func append(_ sql: String) { text += sql }

    var query: PostgresQuery {
        precondition(data == nil, "a builder keeping its values as data runs through ShapedStatements")
        return PostgresQuery(unsafeSQL: text, binds: binds)
    }
}

extension String {
    /// PostgreSQL's text cannot hold NUL: text derived from a card's bytes (index values,
    /// UIDs, group members) has it replaced by U+FFFD. No query text can hold a NUL (XML
    /// forbids it), so no answer changes; the card's bytes are stored verbatim.
    /// The test goes by UTF-8 bytes (a NUL is the only scalar with a zero byte): a write
    /// tests every index value, and by scalars the test was 0.4 % of Rolo's CPU in an import;
    /// over the string's own bytes (`memchr`), not the UTF-8 view's iterator, which was still
    /// about 1 % of it.
    var withoutNUL: String {
        let hasNUL = utf8.withContiguousStorageIfAvailable { bytes in
            bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false
        } ?? utf8.contains(0)
        return hasNUL ? String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\0" ? "\u{FFFD}" : $0 })) : self
    }
}

/// How long a statement may wait for its answer (`Connection.bounded`), watched by the
/// store's watchdog.
struct StatementBound: Sendable {
    let deadlines: LeaseDeadlines
    let limit: Duration
}

/// A statement not sent: its connection had closed (`Connection.bounded`).
struct ClosedConnection: Error, CustomStringConvertible {
    var description: String { "the database connection had closed" }
}

/// What the store's watchdog watches: leases waiting for a connection and statements
/// waiting for their answer, each with what to do at its deadline, and a statement also with
/// how to tell that its connection is gone (`isLost`). Entries leave when the lease is
/// granted or the statement answered, so the table holds only what is waiting.
final class LeaseDeadlines: Sendable {
    /// How often the watchdog looks: a deadline is kept to within this.
    static let tick = Duration.milliseconds(100)

    private struct Entry {
        var deadline: ContinuousClock.Instant
        var expire: @Sendable () -> Void
        var isLost: (@Sendable () -> Bool)?
        /// When the watchdog first found `isLost` true.
        var lostSince: ContinuousClock.Instant?
    }

    private let entries = Mutex<(next: UInt64, waiting: [UInt64: Entry])>((0, [:]))

    /// Watches a new lease or statement; returns its ticket for `remove`. `expire` runs at
    /// the deadline, or once `isLost` has been true for a tick.
    func add(deadline: ContinuousClock.Instant, isLost: (@Sendable () -> Bool)? = nil,
             expire: @escaping @Sendable () -> Void) -> UInt64 {
        entries.withLock { entries in
            entries.next += 1
            entries.waiting[entries.next] = Entry(deadline: deadline, expire: expire, isLost: isLost)
            return entries.next
        }
    }

    /// Moves every deadline `duration` later (the watchdog, after a stall of the host).
    func postpone(by duration: Duration) {
        entries.withLock { entries in
            for key in entries.waiting.keys { entries.waiting[key]!.deadline += duration }
        }
    }

    /// Granted, failed or answered; removing twice is harmless.
    func remove(_ ticket: UInt64) {
        entries.withLock { _ = $0.waiting.removeValue(forKey: ticket) }
    }

    func expire(at now: ContinuousClock.Instant) {
        let due = entries.withLock { entries -> [Entry] in
            guard !entries.waiting.isEmpty else { return [] }
            var due: [Entry] = []
            for (key, var entry) in entries.waiting {
                var expired = entry.deadline <= now
                if !expired, let isLost = entry.isLost, isLost() {
                    // Lost for a whole tick: no answer is coming (a statement failed by the
                    // closing connection has been answered, and removed, long before).
                    if let since = entry.lostSince { expired = now - since >= Self.tick } else { entry.lostSince = now }
                    entries.waiting[key] = entry
                }
                if expired {
                    entries.waiting.removeValue(forKey: key)
                    due.append(entry)
                }
            }
            return due
        }
        for entry in due { entry.expire() }
    }
}

/// Who answers a `leased` call first: the lease (then its body's result, however long the
/// body takes: statements have the server's timeout), or the connection deadline, or the
/// caller's cancellation. The continuation is resumed exactly once.
private final class LeaseRace<T: Sendable>: @unchecked Sendable {
    private enum Phase { case waiting, granted, done }
    private let lock = NSLock()
    private var phase = Phase.waiting
    private var continuation: CheckedContinuation<T, any Error>?
    private var cancelWork: (@Sendable () -> Void)?
    private var cancelledEarly = false

    /// Keeps the caller's continuation; false (and the continuation answered
    /// `CancellationError`) when the caller was cancelled before it existed: a task cancelled
    /// already runs its cancellation handler first, which found nothing to answer then, and
    /// the call waited for ever (a notifier stopped at once never ended, and so neither did
    /// the shutdown waiting for it).
    func begin(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
        let live = lock.withLock { () -> Bool in
            guard phase == .waiting else { return false }
            self.continuation = continuation
            return true
        }
        if !live { continuation.resume(throwing: CancellationError()) }
        return live
    }

    /// Cancels the lease's task (set once it exists; a cancellation that came first runs it at once).
    var onCancel: (@Sendable () -> Void)? {
        get { lock.withLock { cancelWork } }
        set {
            let runNow = lock.withLock { () -> Bool in cancelWork = newValue; return cancelledEarly }
            if runNow { newValue?() }
        }
    }

    /// The pool granted a connection: true unless the deadline or a cancellation came first.
    func grant() -> Bool {
        lock.withLock {
            guard phase == .waiting else { return false }
            phase = .granted
            return true
        }
    }

    /// The deadline passed: answers `error` and cancels the lease's task, unless the lease
    /// was granted (or all is over).
    func expire(_ error: any Error) {
        if abandon(error) { onCancel?() }
    }

    /// A statement of the granted lease went unanswered (`Connection.bounded`): answers
    /// `error` now, and whatever the lease's work ends with later is dropped.
    func fail(_ error: any Error) {
        finish(.failure(error))
    }

    /// The deadline: answers `error` unless the lease was granted (or all is over).
    private func abandon(_ error: any Error) -> Bool {
        let waiting = lock.withLock { () -> CheckedContinuation<T, any Error>? in
            guard phase == .waiting else { return nil }
            phase = .done
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(throwing: error)
        return waiting != nil
    }

    func finish(_ result: Result<T, any Error>) {
        let waiting = lock.withLock { () -> CheckedContinuation<T, any Error>? in
            guard phase != .done else { return nil }
            phase = .done
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
    }

    /// The caller was cancelled: a waiting lease ends at once with `CancellationError`; a
    /// granted one is cancelled and answers when its body ends.
    func cancel() {
        let (waiting, work) = lock.withLock { () -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            cancelledEarly = true
            guard phase == .waiting else { return (nil, cancelWork) }
            phase = .done
            defer { continuation = nil }
            return (continuation, cancelWork)
        }
        work?()
        waiting?.resume(throwing: CancellationError())
    }
}

/// Runs `work` in a task of its own and waits for it at most `limit`: true when it ended in
/// time. The task is left running past the limit (for work that cannot be cancelled).
func withTimeout(_ limit: Duration, _ work: @escaping @Sendable () async -> Void) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let answer = AnswerOnce(continuation)
        Task {
            await work()
            answer.resume(true)
        }
        Task {
            try? await Task.sleep(for: limit)
            answer.resume(false)
        }
    }
}

/// A continuation resumed by whichever comes first.
private final class AnswerOnce: Sendable {
    private let continuation: Mutex<CheckedContinuation<Bool, Never>?>
    init(_ continuation: CheckedContinuation<Bool, Never>) { self.continuation = Mutex(continuation) }
    func resume(_ value: Bool) {
        continuation.withLock { pending in
            defer { pending = nil }
            return pending
        }?.resume(returning: value)
    }
}
