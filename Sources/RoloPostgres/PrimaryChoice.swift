import Logging
import RoloStore
import Synchronization

/// Which of the URL's servers the store's calls go to (issue 34). With one server, always
/// it. With several (`postgresql://u@h1:p1,h2:p2/db`), the one found accepting writes: at
/// open, and again whenever a call finds the database unavailable, so a replica promoted
/// after the primary's loss is served without a restart. A search runs one at a time,
/// every second until a server accepts writes; calls made meanwhile go to the old server
/// and fail as any call to a lost server does (503 with Retry-After). It starts at the
/// current server, so a passing fault (a statement timeout, a full pool) leaves the calls
/// where they were, and they never go to two servers at once.
final class PrimaryChoice: Sendable {
    let servers: [PostgresStore.Configuration.Server]
    private let state = Mutex<(current: Int, search: Task<Void, Never>?, stopped: Bool)>((0, nil, false))

    init(servers: [PostgresStore.Configuration.Server]) { self.servers = servers }

    var currentIndex: Int { state.withLock { $0.current } }
    var current: PostgresStore.Configuration.Server { servers[currentIndex] }

    func select(_ index: Int) { state.withLock { $0.current = index } }

    /// Starts a search unless one runs (or the store closed): `find`, given the current
    /// server's index, every second until it names a server that accepts writes.
    func search(logger: Logger, find: @escaping @Sendable (Int) async -> Result<Int, StoreError>) {
        state.withLock { state in
            guard state.search == nil, !state.stopped else { return }
            let from = state.current
            state.search = Task { [self] in
                var rounds = 0
                while !Task.isCancelled {
                    switch await find(from) {
                    case .success(let index):
                        found(index, logger: logger)
                        return
                    case .failure(let error):
                        rounds += 1
                        if rounds == 1 || rounds % 60 == 0 {
                            logger.warning("looking for the database server that accepts writes", metadata: ["error": "\(error)"])
                        }
                    }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    private func found(_ index: Int, logger: Logger) {
        let previous = state.withLock { state in
            defer { state.current = index; state.search = nil }
            return state.current
        }
        if previous != index { logger.notice("the database server that accepts writes is now \(servers[index])") }
    }

    /// The store closed: no search any more.
    func stop() {
        let search = state.withLock { state in
            state.stopped = true
            return state.search
        }
        search?.cancel()
    }
}
