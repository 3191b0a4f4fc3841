import PostgresNIO
import Synchronization

/// One pooled connection a book's write batches hold while its writes keep coming
/// (`WriteBatches`). The next batch's statement is sent while the last one runs and waits in
/// the connection's queue, and postgres-nio sends it the moment the last is answered. So the
/// book's backend goes from one batch's COMMIT straight to the next batch's statement, instead
/// of waiting while Rolo takes the answers, answers the requests, and builds and sends the next
/// statement (a quarter to a third of the backend's time in an import; Docs/performance.md).
///
/// Calls of one statement each (a batch's statement, its look-up) share the connection. A
/// transaction of several statements (a batch written one write at a time) runs alone: it
/// waits for the calls under way, and the calls that come meanwhile wait for it, so that no
/// statement of another batch can land between its BEGIN and its COMMIT.
final class BookConnection: Sendable {
    let connection: PostgresConnection
    /// Whose turn it is on the connection.
    let turns = ConnectionTurns()

    init(_ connection: PostgresConnection) { self.connection = connection }

    var isClosed: Bool { connection.isClosed }
}

/// Turns on one connection: shared by calls of one statement each, one call `alone` at a time
/// (a transaction), first come first in, so that a transaction waiting keeps out the
/// statements that come after it.
final class ConnectionTurns: Sendable {
    private struct State {
        var sharing = 0
        var alone = false
        var waiting: [(alone: Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    /// Calls in their turn now, and calls waiting for it.
    var counts: (inTurn: Int, waiting: Int) {
        state.withLock { ($0.alone ? 1 : $0.sharing, $0.waiting.count) }
    }

    /// Waits for a turn: shared, or `alone`.
    func enter(alone: Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.waiting.isEmpty, !state.alone, !alone || state.sharing == 0 else {
                    state.waiting.append((alone, continuation))
                    return false
                }
                if alone { state.alone = true } else { state.sharing += 1 }
                return true
            }
            if now { continuation.resume() }
        }
    }

    /// Ends a turn `enter` gave, letting in whoever waited and may go now.
    func leave(alone: Bool) {
        let admitted = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if alone { state.alone = false } else { state.sharing -= 1 }
            var admitted: [CheckedContinuation<Void, Never>] = []
            while let next = state.waiting.first, !state.alone {
                if next.alone {
                    guard state.sharing == 0 else { break }
                    state.alone = true
                } else {
                    state.sharing += 1
                }
                admitted.append(next.continuation)
                state.waiting.removeFirst()
            }
            return admitted
        }
        for continuation in admitted { continuation.resume() }
    }
}
