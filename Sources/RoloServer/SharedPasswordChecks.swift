import Synchronization

/// Password checks in progress, keyed by the `Authorization` header. A client that opens
/// several connections at once (eight for an import) sends the same header on each before
/// any check has finished and filled the `CredentialCache`; without sharing, each would run
/// its own bcrypt (70-110 ms of a core apiece) for one and the same answer.
final class SharedPasswordChecks<Verdict: Sendable>: Sendable {
    private let running = Mutex<[String: Task<Verdict, Never>]>([:])

    /// The result of `check` for `authorization`, joining a check of the same header that
    /// is already running instead of starting another.
    func result(for authorization: String, _ check: @escaping @Sendable () async -> Verdict) async -> Verdict {
        let task = running.withLock { running in
            if let task = running[authorization] { return task }
            // Not inheriting the caller's executor (an unstructured task does not): on the
            // blocking-work threads, where the check's bcrypt runs anyway.
            let task = Task(executorPreference: BlockingWorkExecutor.shared, operation: check)
            running[authorization] = task
            return task
        }
        let valid = await task.value
        running.withLock { running in
            if running[authorization] == task { running[authorization] = nil }
        }
        return valid
    }

    /// Checks running now (for tests).
    var count: Int { running.withLock { $0.count } }
}
