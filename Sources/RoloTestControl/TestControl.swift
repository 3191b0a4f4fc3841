import RoloServer
import RoloStore

/// The test-control API of one running server (`rolo serve --test-api`): its token and
/// fixtures, the store it resets, the run-time state (rules, log, marks), and the other
/// in-memory state a reset must forget (DAV locks, cached logins, login throttling).
struct TestControl: Sendable {
    /// Requests kept in the log; older ones are dropped (and listings say so).
    static let logCapacity = 10_000

    let configuration: TestAPIConfiguration
    let store: any CardStore & AccountStore & SharingStore & StoreMaintenance
    let limits: RequestLimits
    let state: TestControlState
    /// Clears the server's in-memory state outside the store.
    let forgetServerState: @Sendable () async -> Void

    init(configuration: TestAPIConfiguration, store: any CardStore & AccountStore & SharingStore & StoreMaintenance, limits: RequestLimits,
         forgetServerState: @escaping @Sendable () async -> Void) {
        self.configuration = configuration
        self.store = store
        self.limits = limits
        self.state = TestControlState(logCapacity: Self.logCapacity)
        self.forgetServerState = forgetServerState
    }

    /// Erases the store, loads the configured fixtures again, and forgets rules, marks,
    /// the request log, DAV locks and cached logins: the server as it started.
    func reset() async throws -> FixtureSummary {
        try await changingStore {
            await state.clear()
            await forgetServerState()
            try await store.eraseAll()
            var total = FixtureSummary()
            for fixtures in configuration.fixtures {
                total.add(try await fixtures.load(into: store))
            }
            return total
        }
    }

    /// Loads the fixture folder at `directory` on top of what the store holds.
    func loadFixtures(directory: String) async throws -> FixtureSummary {
        let fixtures = try FixtureSet(directory: directory)
        return try await changingStore { try await fixtures.load(into: store) }
    }

    /// Runs `change` unless another reset or fixture load is running (409 then: two of them
    /// interleaved would leave a store that matches neither).
    private func changingStore(_ change: () async throws -> FixtureSummary) async throws -> FixtureSummary {
        guard await state.beginStoreChange() else {
            throw TestAPIError(status: .conflict, message: "another reset or fixture load is running")
        }
        do {
            let summary = try await change()
            await state.endStoreChange()
            return summary
        } catch {
            await state.endStoreChange()
            throw error
        }
    }
}

extension FixtureSummary {
    mutating func add(_ other: FixtureSummary) {
        users += other.users; books += other.books; cards += other.cards
    }
}
