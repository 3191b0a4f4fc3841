import Foundation

/// A task executor with one thread of its own, for the fake push service and for the
/// sender tests that time their deadlines against it.
///
/// Swift Testing starts every test of the package at once on the cooperative pool, which
/// has one thread per core. On a 2-core CI machine the CPU-heavy tests (fuzzing,
/// XML round trips) kept both threads busy for up to a minute, so the fake service's
/// handler and the sender's continuation queued behind them and the sender's 5 s deadline
/// ran out before the service could answer: delivery tests came back `.retry` though
/// nothing was wrong with the sender. A real push service is another machine; this thread
/// stands in for that, so the deadlines measure the sender and not the test run's load.
public final class ServiceThread: TaskExecutor, @unchecked Sendable {
    /// One for the whole test process: the service's work is small and never blocks.
    public static let shared = ServiceThread(name: "fake-push-service")

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []   // guarded by `condition`

    private init(name: String) {
        let thread = Thread { [unowned self] in self.run() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
