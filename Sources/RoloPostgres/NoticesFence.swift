import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Proves to a GET, with other Rolo processes on the database, that every change committed
/// before the GET asked has been heard, so that the card cache may answer it
/// (`PostgresStore.readInline`).
///
/// A fence is one `SELECT 1` on the notices connection, sent after the GETs it covers
/// arrived. Its answer comes after every notice of a commit acknowledged before it was sent:
/// a notifying transaction signals the listening backends as it commits, before its client
/// hears of the commit (PostgreSQL 15 and later, `AtCommit_Notify`; before 15 the signals
/// went after the commit's CommandComplete, so no fences are sent to older servers and GETs
/// read the database there while another process runs); a signalled backend
/// sends what is queued before it reads its next command, or before it goes idle after the
/// one it is running; and notices leave the queue in commit order. postgres-nio hands each
/// notice to the cache's listeners (`addListener`) on the connection's event loop as it
/// reads it, so the cache has applied them before the fence's answer is read. The fence
/// takes no transaction ID and writes nothing: a `NOTIFY` of our own would take both, and
/// would wait for the database's notify lock behind any committing write.
///
/// One fence is out at a time: GETs that ask while one is out wait for the next, which is
/// sent when it comes back, so a fence covers every GET that asked in the meantime. A fence
/// unanswered within `patience` (the notices' backend stalled) lets its GETs read the
/// database; the notices' heartbeat ends a connection that stays silent.
final class NoticesFence: Sendable {
    typealias Waiter = @Sendable (Bool) -> Void

    private struct State: Sendable {
        var connection: PostgresConnection?
        /// Moves with every `use`: a fence of an earlier connection answers its own waiters
        /// and leaves the rest alone.
        var generation: UInt64 = 0
        var out = false
        /// Waiting for the fence about to be sent (it goes at the end of the loop's turn).
        var gathering: [Waiter]?
        /// Waiting for the fence after the one out.
        var next: [Waiter] = []
    }

    private let state = Mutex(State())
    private let patienceNanoseconds: Atomic<Int64>
    private let fencesSent = Atomic<Int>(0)

    /// How many fences were sent, for tests.
    var sent: Int { fencesSent.load(ordering: .relaxed) }
    private let logger: Logger

    init(patience: TimeAmount = .milliseconds(250), logger: Logger) {
        patienceNanoseconds = Atomic(patience.nanoseconds)
        self.logger = logger
    }

    /// How long a fence may go unanswered before its GETs read the database. Settable for
    /// tests that assert a GET was answered from memory: on a loaded machine 250 ms can pass
    /// before a live backend answers, and the GET, rightly, reads the database instead.
    var patience: TimeAmount {
        get { .nanoseconds(patienceNanoseconds.load(ordering: .relaxed)) }
        set { patienceNanoseconds.store(newValue.nanoseconds, ordering: .relaxed) }
    }

    /// The notices connection fences are sent on from now on, or nil while there is none.
    /// GETs waiting for a fence not yet sent read the database.
    func use(_ connection: PostgresConnection?) {
        let failed = state.withLock { state -> [Waiter] in
            defer {
                state.connection = connection
                state.generation &+= 1
                state.out = false
                state.gathering = nil
                state.next = []
            }
            return (state.gathering ?? []) + state.next
        }
        for waiter in failed { waiter(false) }
    }

    /// Calls `waiter` with true once a fence sent after this call has come back, false when
    /// none can be (no notices connection, or no answer within `patience`).
    func after(_ waiter: @escaping Waiter) {
        let send = state.withLock { state -> (PostgresConnection, UInt64)?? in
            guard let connection = state.connection else { return .some(nil) }
            if state.gathering != nil {
                state.gathering?.append(waiter)
                return nil
            }
            if state.out {
                state.next.append(waiter)
                return nil
            }
            state.out = true
            state.gathering = [waiter]
            return .some((connection, state.generation))
        }
        switch send {
        case .none: return
        case .some(.none): waiter(false)
        case .some(.some(let (connection, generation))):
            connection.eventLoop.execute { self.sendGathered(on: connection, generation: generation) }
        }
    }

    /// Sends the fence the waiters gathered so far wait for: at the end of the notices loop's
    /// turn, so that GETs asking on other loops meanwhile share it.
    private func sendGathered(on connection: PostgresConnection, generation: UInt64) {
        let waiters = state.withLock { state -> [Waiter]? in
            guard state.generation == generation else { return nil }
            defer { state.gathering = nil }
            return state.gathering ?? []
        }
        guard let waiters else { return }
        send(on: connection, generation: generation, for: waiters)
    }

    /// Sends a fence for `waiters`, and the next one when it is settled and others wait. On
    /// the connection's event loop, with futures: a task and a timer task a fence cost more
    /// CPU than the database read of a GET they would spare.
    private func send(on connection: PostgresConnection, generation: UInt64, for waiters: [Waiter]) {
        let settled = Mutex(false)
        let settle: @Sendable (Bool) -> Void = { [self] answered in
            guard settled.withLock({ done in defer { done = true }; return !done }) else { return }
            for waiter in waiters { waiter(answered) }
            let more = state.withLock { state -> Bool in
                guard state.generation == generation else { return false }
                guard !state.next.isEmpty else {
                    state.out = false
                    return false
                }
                state.gathering = state.next
                state.next = []
                return true
            }
            if more { connection.eventLoop.execute { self.sendGathered(on: connection, generation: generation) } }
        }
        fencesSent.add(1, ordering: .relaxed)
        let timer = connection.eventLoop.scheduleTask(in: patience) { settle(false) }
        // Only an answer read whole proves that the notices before it were read.
        connection.query("SELECT 1", logger: logger).whenComplete { result in
            timer.cancel()
            if case .success = result { settle(true) } else { settle(false) }
        }
    }
}
