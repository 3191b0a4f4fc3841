import Synchronization

/// Slows down password guessing per remote address: after `freeFailures` wrong passwords,
/// each further answer is delayed exponentially (capped). The delay is a sleep in that
/// request's task only, so other clients are never held up. A success resets the address.
final class LoginThrottle: Sendable {
    private struct Record {
        var failures: Int
        var lastFailure: ContinuousClock.Instant
    }

    private let records = Mutex<[String: Record]>([:])
    let freeFailures: Int
    let baseDelay: Duration
    let maxDelay: Duration
    /// Failures older than this are forgotten.
    let memory: Duration

    init(freeFailures: Int = 5, baseDelay: Duration = .milliseconds(250),
         maxDelay: Duration = .seconds(10), memory: Duration = .seconds(900)) {
        self.freeFailures = freeFailures; self.baseDelay = baseDelay
        self.maxDelay = maxDelay; self.memory = memory
    }

    /// Records a failed login from `address` and returns how long to wait before answering.
    func recordFailure(from address: String, now: ContinuousClock.Instant = .now) -> Duration {
        records.withLock { records in
            if records.count > 50_000 {
                records = records.filter { now - $0.value.lastFailure < memory }
            }
            var record = records[address] ?? Record(failures: 0, lastFailure: now)
            if now - record.lastFailure >= memory { record.failures = 0 }
            record.failures += 1
            record.lastFailure = now
            records[address] = record
            return delay(afterFailures: record.failures)
        }
    }

    /// Forgets every address (a test-control reset).
    func removeAll() {
        records.withLock { $0.removeAll() }
    }

    func recordSuccess(from address: String) {
        records.withLock { records in
            if records[address] != nil { records[address] = nil }
        }
    }

    /// 0 for the first `freeFailures`, then base, 2×base, 4×base… up to `maxDelay`.
    func delay(afterFailures failures: Int) -> Duration {
        let excess = failures - freeFailures
        guard excess > 0 else { return .zero }
        let factor = 1 << min(excess - 1, 20)
        return min(baseDelay * factor, maxDelay)
    }
}
