import Foundation
import PostgresNIO
import RoloStore
import Synchronization

/// The inline GET's cache (`CardCache`): what keeps it true, heard from the database and
/// noted at this process's own commits, and whether this process is alone on the database.
extension PostgresStore {
    /// Where the triggers announce a change that every cached answer may depend on: a user's
    /// sign-in (password, disabled, app passwords only, name, removal) or a book's path,
    /// kind, name, description or removal (v14-card-cache-notices).
    static let signInChangesChannel = "rolo_sign_in_changes"
    /// Where each process announces itself when it starts (the payload: its own id), and
    /// where the others acknowledge that they heard it (`acknowledgement(of:)`).
    static let processesChannel = "rolo_processes"

    /// The payload by which a process says it heard the announcement `id`, and answers GETs
    /// only after fences from then on.
    static func acknowledgement(of id: String) -> String { "heard " + id }

    /// The `application_name` of each process's notices connection: counted to tell whether
    /// a process is alone on the database.
    static let noticesApplicationName = "rolo notices"

    /// A write to a book committed: the cache stops serving the book's cards as read before,
    /// then push hears of it. Every write that moves a book's seq calls it after its commit,
    /// and answers after `othersHeard`, so that no process serves older state than it
    /// acknowledged.
    func committed(_ change: BookChange) {
        cardCache.bookChanged(change.collectionID, seq: change.seq)
        bookChanges.publish(change)
    }

    /// `committed` for the current task's write, with its `PushExclusion`, and `othersHeard`.
    func committed(collectionID: Int64, seq: Int64) async {
        committed(BookChange(collectionID: collectionID, seq: seq, exclusion: PushExclusion.current ?? .nobody))
        await othersHeard(collectionID: collectionID, seq: seq)
    }

    /// Returns once every other process holding a read lease has heard this process's write
    /// that moved book `collectionID` to `seq`, or that lease ran out (`ReadLeases`): at once
    /// while this process is alone on the database.
    func othersHeard(collectionID: Int64, seq: Int64) async {
        await readLeases.wait(for: .book(collectionID, seq: seq), alone: cardCache.isAlone)
    }

    /// `othersHeard`, calling `then`.
    func afterOthersHeard(collectionID: Int64, seq: Int64, then: @escaping @Sendable () -> Void) {
        readLeases.wait(for: .book(collectionID, seq: seq), alone: cardCache.isAlone, then: then)
    }

    /// Runs `change`, which changes a user's sign-in or a book's path, name or existence, and
    /// then, whether it succeeded or not: nothing cached is served any more, and the other
    /// processes holding read leases heard it (a marker of this process's own, sent after the
    /// change committed).
    func changingSignInOrBooks<T: Sendable>(_ change: () async throws -> T) async throws -> T {
        let result: Result<T, any Error>
        do { result = .success(try await change()) } catch { result = .failure(error) }
        cardCache.forgetAll()
        await readLeases.wait(for: nil, alone: cardCache.isAlone)
        return try result.get()
    }

    /// Starts `followCacheNotices` and waits (at most `Configuration.announcementPatience`)
    /// until this process has announced itself and every other process listening then has
    /// acknowledged it, so that a process that was alone, answering GETs without a fence, has
    /// stopped before this one writes anything. A process that does not acknowledge in time (stalled, shutting down,
    /// or of a version before acknowledgements) is logged: it stops when it reads the
    /// announcement.
    func startNotices() async {
        let announcing = configuration.announcementPatience
        let announced = announcement
        let task = Task { [self] in await followCacheNotices(announced: announced) }
        cacheNotices.withLock { $0 = task }
        // Unannounced (the notices not heard yet), the failure to listen is logged on its own;
        // a count that came just after the bound may have found nobody to wait for.
        let acknowledged = await withTimeout(announcing) { await announced.wait() }
        if !acknowledged, case (let expected?, let heard) = announced.acknowledgements, heard < expected {
            logger.warning("""
                card cache: \(expected - heard) of the \(expected) other Rolo processes on the database did not \
                acknowledge this one's start within \(announcing); until one reads it, it may answer a GET from \
                memory without waiting for this one's writes (a process stalled or shutting down, or of a \
                version before acknowledgements, does not acknowledge)
                """)
        }
    }

    /// Listens on a connection of its own to the current primary: book changes and sign-in
    /// changes feed the cache (and book changes push, while it follows them), other
    /// processes' announcements and a count each second of the processes listening tell it
    /// whether it is alone. It runs whether or not this process
    /// keeps a cache, so that the others know it is there. A lost connection turns the cache
    /// off, and it tries again each second.
    private func followCacheNotices(announced first: Announcement) async {
        var attempt = 0
        var announced = first
        while !Task.isCancelled {
            let server = primary.currentIndex
            // Each session announces itself afresh, and leases once all acknowledged it: a
            // process that counted itself alone meanwhile has stopped then.
            let me = ReadLeases.newID()
            if announced.acknowledgements.expected != nil { announced = Announcement() }
            let announced = announced
            do {
                var configuration = try connectionConfiguration()
                configuration.options.additionalStartupParameters = configuration.options.additionalStartupParameters.filter {
                    $0.0 != "application_name"
                } + [("application_name", Self.noticesApplicationName)]
                let connection = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
                // The cache hears book and sign-in changes, and other processes' arrivals, on
                // the connection's event loop as each notice is read, before anything read
                // after it: a fence's answer (`NoticesFence`) then comes after every notice
                // before it, and a process stops serving GETs unfenced as soon as it reads
                // that another one started, not a task's turn later.
                // Added on the connection's loop once it is seen open: postgres-nio drops a
                // listener added to a connection that has closed, and takes that for a fault
                // that stops the process (`NotificationListener`'s deinit; a CI run saw it as a
                // server ended the connection just after it opened). On its loop the connection
                // cannot close between the check and the addition.
                let cacheListeners = try await connection.eventLoop.submit { [cardCache, readLeases, logger] () throws -> [PostgresListenContext] in
                  guard !connection.isClosed else { throw NoticesConnectionClosed() }
                  return [
                    connection.addListener(channel: Self.bookChangesChannel) { [cardCache, readLeases] _, notice in
                        if let change = Self.bookChange(fromPayload: notice.payload) {
                            cardCache.bookChanged(change.collectionID, seq: change.seq)
                            readLeases.heard(book: change.collectionID, seq: change.seq, alone: cardCache.isAlone)
                        } else {
                            cardCache.forgetAll()
                        }
                    },
                    connection.addListener(channel: Self.signInChangesChannel) { [cardCache] _, _ in cardCache.forgetAll() },
                    connection.addListener(channel: ReadLeases.channel) { [cardCache, readLeases] _, notice in
                        readLeases.heard(notice.payload, alone: cardCache.isAlone)
                    },
                    connection.addListener(channel: Self.processesChannel) { [cardCache, readLeases, logger] _, notice in
                        if notice.payload == Self.acknowledgement(of: me) {
                            announced.acknowledged()
                        } else if notice.payload != me, !notice.payload.hasPrefix(Self.acknowledgement(of: "")) {
                            // Stop serving unfenced first, then tell the newcomer, which waits
                            // for this before it writes.
                            cardCache.heardAnotherProcess()
                            readLeases.heardAnnouncement(of: notice.payload)
                            let acknowledgement = Self.acknowledgement(of: notice.payload)
                            // Sent after this read is handled, not from inside postgres-nio's
                            // delivery of the notice; this process's lease renewed first, so
                            // that the newcomer knows it before it writes.
                            connection.eventLoop.execute {
                                readLeases.renew(presenceNow: true)
                                connection.query("SELECT pg_notify(\(Self.processesChannel), \(acknowledgement))", logger: logger)
                                    .whenFailure { _ in }
                            }
                        }
                    },
                  ]
                }.get()
                defer { for listener in cacheListeners { listener.stop() } }
                do {
                    try await connection.listen(on: Self.bookChangesChannel) { books in
                        try await connection.listen(on: Self.signInChangesChannel) { signIns in
                            try await connection.listen(on: Self.processesChannel) { processes in
                                try await connection.listen(on: ReadLeases.channel) { leases in
                                    attempt = 0
                                    cardCache.startedListening(to: server)
                                    readLeases.listening(on: connection, as: me)
                                    // Before 15, a commit signalled the listeners only after its
                                    // client had been told (`NoticesFence`): no fences, and no
                                    // leases, then.
                                    let version = try await connection.query("SHOW server_version_num", logger: logger)
                                        .collect().first?.decode(String.self)
                                    let ordered = version.flatMap { Int($0) }.map { $0 >= 150_000 } ?? false
                                    if ordered { noticesFence.use(connection) }
                                    try await connection.query("SELECT pg_notify(\(Self.processesChannel), \(me))", logger: logger)
                                    // Every process listening now hears the announcement (it was
                                    // committed before this count), and acknowledges it.
                                    let asked = ContinuousClock.now
                                    let count = try await Self.processesListening(on: connection, logger: logger).get()
                                    readLeases.counted(count, asked: asked)
                                    announced.expect(count - 1)
                                    announced.whenDone { [cardCache, readLeases] in
                                        readLeases.informed()
                                        if ordered && cardCache.isEnabled { readLeases.startLeasing() }
                                        readLeases.renew(presenceNow: true)
                                    }
                                    if bookChangeFollowers.withLock({ $0 > 0 }) { try await publishOwedBooks() }
                                    try await hear(books: books, signIns: signIns, processes: processes, leases: leases,
                                                   on: connection, server: server)
                                }
                            }
                        }
                    }
                } catch {
                    readLeases.stopped()
                    noticesFence.use(nil)
                    cardCache.stoppedListening()
                    _ = await withTimeout(.seconds(5)) { try? await connection.close() }
                    throw error
                }
                readLeases.stopped()
                noticesFence.use(nil)
                cardCache.stoppedListening()
                _ = await withTimeout(.seconds(5)) { try? await connection.close() }
            } catch {
                readLeases.stopped()
                noticesFence.use(nil)
                cardCache.stoppedListening()
                if Task.isCancelled { return }
                attempt += 1
                if attempt == 1 || attempt % 60 == 0 {
                    logger.warning("card cache: listening for changes failed; GETs read the database meanwhile",
                                   metadata: ["error": "\(Self.describe(error))"])
                }
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Until the connection ends, or calls go to another server (a failover: listen there).
    private func hear(books: PostgresNotificationSequence, signIns: PostgresNotificationSequence,
                      processes: PostgresNotificationSequence, leases: PostgresNotificationSequence,
                      on connection: PostgresConnection, server: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The cache heard these already (`followCacheNotices`' listeners); push hears
            // book changes here, while it follows them.
            group.addTask { [self] in
                for try await notice in books {
                    guard bookChangeFollowers.withLock({ $0 > 0 }),
                          let change = Self.bookChange(fromPayload: notice.payload) else { continue }
                    bookChanges.publish(change)
                }
            }
            group.addTask {
                for try await _ in signIns {}
            }
            group.addTask {
                for try await _ in processes {}
            }
            group.addTask {
                for try await _ in leases {}
            }
            group.addTask { [self, cardCache, readLeases, primary, logger] in
                try await NoticesHeartbeat(connection: connection, logger: logger,
                                           patience: { self.noticesPatience }).run(
                    stillListening: { primary.currentIndex == server },
                    renew: { readLeases.tick() },
                    census: { cardCache.census() },
                    counted: { count, census, asked in
                        cardCache.setAlone(count == 1, census: census)
                        readLeases.counted(count, asked: asked)
                    })
            }
            try await group.next()
            group.cancelAll()
        }
    }
}

extension PostgresStore {
    /// The Rolo processes listening for notices on the database, this one included.
    static func processesListening(on connection: PostgresConnection, logger: Logger) -> EventLoopFuture<Int> {
        connection.query("""
            SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = \(noticesApplicationName)
            """, logger: logger).flatMapThrowing { result in
            try result.rows.first.map { Int(try $0.decode(Int64.self)) } ?? 0
        }
    }
}

/// The notices connection's heartbeat, and the read lease's renewals, run on the
/// connection's event loop: each second a count of the processes listening, which also
/// proves the connection alive (a count unanswered within 5 s, from a connection silently
/// gone or one postgres-nio never saw end, ends it), and every 100 ms a renewal.
///
/// On the loop, not in tasks: a task waits its turn behind all of the cooperative pool's
/// work, seconds on a loaded machine, and a heartbeat that waited for one took live
/// connections for dead ones (a full test run: 117 timeouts, on connections whose renewals,
/// sent from the loop, kept arriving; each broke the leases, the fence and the cache until
/// the reconnection). Timers on the loop cost no task either.
final class NoticesHeartbeat: Sendable {
    static let interval = TimeAmount.seconds(1)
    static let patience = TimeAmount.seconds(5)

    private struct State {
        var ended = false
        var continuation: CheckedContinuation<Void, any Error>?
        var renewals: RepeatedTask?
        var next: Scheduled<Void>?
    }

    private let connection: PostgresConnection
    private let logger: Logger
    /// Read at each count: `Self.patience` unless a test set the store's longer.
    private let patience: @Sendable () -> TimeAmount
    private let state = Mutex(State())

    init(connection: PostgresConnection, logger: Logger, patience: @escaping @Sendable () -> TimeAmount) {
        self.connection = connection
        self.logger = logger
        self.patience = patience
    }

    /// Until the connection is lost (throws `NoticesLost`, or the count's error), the task is
    /// cancelled, or `stillListening` says false (calls went to another server).
    func run(stillListening: @escaping @Sendable () -> Bool, renew: @escaping @Sendable () -> Void,
             census: @escaping @Sendable () -> CardCache.Census,
             counted: @escaping @Sendable (Int, CardCache.Census, ContinuousClock.Instant) -> Void) async throws {
        let loop = connection.eventLoop
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let started = state.withLock { state -> Bool in
                    guard !state.ended else { return false }
                    state.continuation = continuation
                    return true
                }
                guard started else { return continuation.resume(throwing: CancellationError()) }
                loop.execute { [self] in
                    let renewals = loop.scheduleRepeatedTask(initialDelay: .zero, delay: ReadLeases.renewalInterval) { _ in renew() }
                    let live = state.withLock { state -> Bool in
                        state.renewals = renewals
                        return !state.ended
                    }
                    guard live else { return renewals.cancel() }
                    beat(stillListening: stillListening, census: census, counted: counted)
                }
            }
        } onCancel: {
            end(CancellationError())
        }
    }

    /// One count, then the next a second after its answer.
    private func beat(stillListening: @escaping @Sendable () -> Bool, census: @escaping @Sendable () -> CardCache.Census,
                      counted: @escaping @Sendable (Int, CardCache.Census, ContinuousClock.Instant) -> Void) {
        guard stillListening() else { return end(nil) }
        let taken = census()
        let asked = ContinuousClock.now
        let loop = connection.eventLoop
        let timer = loop.scheduleTask(in: patience()) { [self] in end(NoticesLost()) }
        PostgresStore.processesListening(on: connection, logger: logger).whenComplete { [self] result in
            timer.cancel()
            switch result {
            case .failure(let error): end(error)
            case .success(let count):
                // Not after the end (the timer's, in this turn of the loop): the listening
                // has stopped, and the cache with it.
                guard state.withLock({ !$0.ended }) else { return }
                counted(count, taken, asked)
                let next = loop.scheduleTask(in: Self.interval) { [self] in
                    beat(stillListening: stillListening, census: census, counted: counted)
                }
                let live = state.withLock { state -> Bool in
                    state.next = next
                    return !state.ended
                }
                if !live { next.cancel() }
            }
        }
    }

    /// Stops the renewals and the counts, and ends `run` (with `error`, unless nil).
    private func end(_ error: (any Error)?) {
        let (continuation, renewals, next) = state.withLock { state in
            defer {
                state.ended = true
                state.continuation = nil
                state.renewals = nil
                state.next = nil
            }
            return (state.continuation, state.renewals, state.next)
        }
        renewals?.cancel()
        next?.cancel()
        if let error { continuation?.resume(throwing: error) } else { continuation?.resume() }
    }
}

/// The notices connection closed before its listeners were added.
struct NoticesConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the notices connection closed as it opened" }
}

/// The notices connection stopped answering.
struct NoticesLost: Error, CustomStringConvertible {
    var description: String { "the notices connection did not answer within 5 s" }
}

/// A process's announcement of itself: done once as many other processes as were listening
/// when it was made have acknowledged it, and `wait()` returns from then on.
/// Acknowledgements may be read before the count that says how many to expect.
final class Announcement: Sendable {
    private struct State {
        var expected: Int?
        var heard = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        var callbacks: [@Sendable () -> Void] = []
        var done: Bool { expected.map { heard >= $0 } ?? false }
    }

    private let state = Mutex(State())

    /// How many acknowledgements to wait for: the other processes listening when it was made.
    /// Only the first count counts (a reconnection announces again, and nobody waits).
    func expect(_ count: Int) { update { $0.expected = $0.expected ?? count } }

    /// Another process acknowledged it.
    func acknowledged() { update { $0.heard += 1 } }

    /// Calls `then` once every process expected acknowledged it (at once if all did).
    func whenDone(_ then: @escaping @Sendable () -> Void) {
        let now = state.withLock { state in
            if !state.done { state.callbacks.append(then) }
            return state.done
        }
        if now { then() }
    }

    /// The acknowledgements expected (nil before the count) and heard so far.
    var acknowledgements: (expected: Int?, heard: Int) { state.withLock { ($0.expected, $0.heard) } }

    private func update(_ change: (inout State) -> Void) {
        let (waiters, callbacks) = state.withLock { state -> ([CheckedContinuation<Void, Never>], [@Sendable () -> Void]) in
            change(&state)
            guard state.done else { return ([], []) }
            defer {
                state.waiters = []
                state.callbacks = []
            }
            return (state.waiters, state.callbacks)
        }
        for waiter in waiters { waiter.resume() }
        for callback in callbacks { callback() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if now { continuation.resume() }
        }
    }
}
