import RoloStore
import Synchronization

/// How failed logins are slowed down and, past a point, refused (`ServerConfiguration.loginThrottle`).
///
/// Per client subnet (IPv4 /32, IPv6 /56): the first `freeFailures` wrong passwords are
/// answered at once, then each answer waits `baseDelay`, twice that, four times… up to
/// `maxDelay`; `cappedFailures` failures are answered at `maxDelay`, and the failure after
/// those, and every attempt from that subnet until `window` has passed since it, is
/// answered `429 Too Many Requests` with `Retry-After`, without the password being checked.
/// Failures are forgotten once `window` passes without a new one; a successful login from
/// the subnet forgets them at once. Nothing locks an account.
///
/// Per account (the user name tried, from any subnet): the same growing delay after
/// `accountFreeFailures` failures within `window`, against guessing spread over many
/// subnets. It only ever delays a failure's answer: never a 429, never a success.
public struct LoginThrottleSettings: Sendable, Equatable {
    public var freeFailures: Int
    public var baseDelay: Duration
    public var maxDelay: Duration
    /// Failures answered at `maxDelay` before the subnet gets 429s; 0 gives the 429 to the
    /// first failure that would have waited `maxDelay`.
    public var cappedFailures: Int
    /// How long failures are remembered, and how long a subnet gets 429s.
    public var window: Duration
    public var accountFreeFailures: Int

    public init(freeFailures: Int = 5, baseDelay: Duration = .milliseconds(250), maxDelay: Duration = .seconds(10),
                cappedFailures: Int = 10, window: Duration = .seconds(1800), accountFreeFailures: Int = 20) {
        self.freeFailures = freeFailures; self.baseDelay = baseDelay; self.maxDelay = maxDelay
        self.cappedFailures = cappedFailures; self.window = window; self.accountFreeFailures = accountFreeFailures
    }

    /// 0 for the first `freeFailures`, then base, 2×base, 4×base… up to `maxDelay`.
    public func delay(afterFailures failures: Int) -> Duration {
        let excess = failures - freeFailures
        guard excess > 0 else { return .zero }
        let factor = 1 << min(excess - 1, 20)
        return min(baseDelay * factor, maxDelay)
    }

    /// The failure count that turns a subnet's answers into 429s: the first failure that
    /// waits `maxDelay`, plus `cappedFailures`.
    public var blockingFailures: Int {
        var failures = freeFailures + 1
        while delay(afterFailures: failures) < maxDelay, failures < freeFailures + 64 { failures += 1 }
        return failures + max(cappedFailures, 0)
    }
}

/// The state behind `LoginThrottleSettings`: failure counts per subnet key
/// (`ClientAddress.Subnet.key`) and per account, bounded in memory, raised to the counts
/// every process keeps in the store (`recordFailure(shared:)`). Delays are sleeps in the
/// failing request's task only, so other clients are never held up.
final class LoginThrottle: Sendable {
    /// What to do with a failed login.
    enum Verdict: Sendable, Equatable {
        /// Answer 401 after this long.
        case delay(Duration)
        /// The subnet is now blocked: answer 429 with this `Retry-After`.
        case blocked(retryAfter: Duration)
    }

    private struct Record {
        var failures: Int
        var lastFailure: ContinuousClock.Instant
        /// Set once the subnet reached `blockingFailures`.
        var blockedUntil: ContinuousClock.Instant?
    }

    private struct State {
        var subnets: [String: Record] = [:]
        var accounts: [String: Record] = [:]
        /// The end of the latest block; once past, every block has ended.
        var latestBlockEnd: ContinuousClock.Instant?
    }

    let settings: LoginThrottleSettings
    private let state = Mutex(State())
    /// True while a subnet may be blocked: until then a login that needs no password check
    /// (the credential cache) skips the throttle without working out its address.
    private let blocking = Atomic(false)
    /// Records kept at most per table; past it the stale ones go, then the ones with fewest
    /// failures (a flood of one-off names or addresses cannot push out a real attack's count).
    let capacity: Int
    private let blockingFailures: Int

    init(_ settings: LoginThrottleSettings = LoginThrottleSettings(), capacity: Int = 50_000) {
        self.settings = settings
        self.capacity = max(capacity, 4)
        self.blockingFailures = settings.blockingFailures
    }

    /// Whether some subnet may be blocked now; false is certain, true means look it up.
    var mayBlock: Bool { blocking.load(ordering: .relaxed) }

    /// How long `subnet` is still blocked for, or nil when it may try a password.
    func retryAfter(subnet: String, now: ContinuousClock.Instant = .now) -> Duration? {
        guard mayBlock else { return nil }
        return state.withLock { state in
            if let end = state.latestBlockEnd, end <= now { endAllBlocks(&state) }
            guard let until = state.subnets[subnet]?.blockedUntil else { return nil }
            if until <= now {
                state.subnets[subnet] = nil
                return nil
            }
            return until - now
        }
    }

    /// Records a failed login for `account` from `subnet` and says how to answer it. `shared`:
    /// the counts every process keeps in the store with this failure
    /// (`StoreCoordination.recordLoginFailure`); the higher of them and this process's own
    /// decides, so other processes' failures count here too.
    func recordFailure(subnet: String, account: String, shared: LoginFailureCounts? = nil,
                       now: ContinuousClock.Instant = .now) -> Verdict {
        state.withLock { state in
            let failures = count(&state.subnets, subnet, atLeast: shared?.subnet ?? 0, now: now)
            let accountFailures = count(&state.accounts, account, atLeast: shared?.account ?? 0, now: now)
            if failures >= blockingFailures {
                let until = now + settings.window
                state.subnets[subnet]?.blockedUntil = until
                state.latestBlockEnd = max(state.latestBlockEnd ?? until, until)
                blocking.store(true, ordering: .relaxed)
                return .blocked(retryAfter: settings.window)
            }
            // The account's curve is the subnet's, shifted by its larger allowance.
            let accountCurve = accountFailures - settings.accountFreeFailures + settings.freeFailures
            return .delay(max(settings.delay(afterFailures: failures), settings.delay(afterFailures: accountCurve)))
        }
    }

    /// A successful login from `subnet` forgets its failures (the account's stay: they only
    /// ever delay failures).
    func recordSuccess(subnet: String) {
        state.withLock { state in
            if state.subnets[subnet] != nil { state.subnets[subnet] = nil }
        }
    }

    /// Forgets every subnet and account (a test-control reset).
    func removeAll() {
        state.withLock { state in
            state = State()
            blocking.store(false, ordering: .relaxed)
        }
    }

    /// Failures remembered now (for tests).
    func failures(subnet: String) -> Int { state.withLock { $0.subnets[subnet]?.failures ?? 0 } }
    func failures(account: String) -> Int { state.withLock { $0.accounts[account]?.failures ?? 0 } }
    var recordCount: (subnets: Int, accounts: Int) { state.withLock { ($0.subnets.count, $0.accounts.count) } }

    /// Adds one failure under `key` (starting afresh when the last was `window` ago), raises
    /// the count to `atLeast`, and returns it.
    private func count(_ table: inout [String: Record], _ key: String, atLeast: Int, now: ContinuousClock.Instant) -> Int {
        if table[key] == nil, table.count >= capacity { trim(&table, now: now) }
        var record = table[key] ?? Record(failures: 0, lastFailure: now)
        if now - record.lastFailure >= settings.window { record = Record(failures: 0, lastFailure: now) }
        record.failures = max(record.failures + 1, atLeast)
        record.lastFailure = now
        table[key] = record
        return record.failures
    }

    /// Drops stale records; if that is not enough, the quarter with fewest failures.
    private func trim(_ table: inout [String: Record], now: ContinuousClock.Instant) {
        table = table.filter { now - $0.value.lastFailure < settings.window || ($0.value.blockedUntil ?? now) > now }
        guard table.count >= capacity * 3 / 4 else { return }
        let keep = table.sorted { $0.value.failures > $1.value.failures }.prefix(capacity * 3 / 4)
        table = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
    }

    private func endAllBlocks(_ state: inout State) {
        state.subnets = state.subnets.filter { $0.value.blockedUntil == nil }
        state.latestBlockEnd = nil
        blocking.store(false, ordering: .relaxed)
    }
}
