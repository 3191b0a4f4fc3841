import NIOCore
import NIOPosix

/// Where Swift tasks run in `rolo serve`. By default Swift runs tasks on its own cooperative
/// pool, so every request hops from the NIO event loop that read it to a pool thread and
/// back to write the answer: two thread switches that cost more than a cached GET itself.
/// Installed, NIO's event loops become the global executor and a request's task runs on the
/// thread that read it. Then nothing slow may run on a task: see `BlockingWorkExecutor`.
public enum EventLoopTasks {
    /// The environment variable that turns this off (`ROLO_TASKS_ON_EVENT_LOOPS=0`).
    public static let environmentSwitch = "ROLO_TASKS_ON_EVENT_LOOPS"

    /// Makes NIO's singleton event loop group the global executor of Swift concurrency.
    /// Call once, on the main thread, before any task exists; false when the runtime does
    /// not offer the hook (the cooperative pool then stays).
    @discardableResult
    public static func install() -> Bool {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }

    /// Whether `environment` asks for the event loops (anything but "0", "false" or "no").
    public static func isWanted(environment: [String: String]) -> Bool {
        guard let value = environment[environmentSwitch]?.lowercased() else { return true }
        return !["0", "false", "no", "off"].contains(value)
    }
}

/// Where an in-process server's tasks run (`RoloServer.start()`: tests, `RoloTesting`, the
/// benchmarks). There the global executor is the host's cooperative pool, one thread per
/// core, which the host's own work may hold for a long time: Swift Testing starts every test
/// of the package at once, and a few CPU-heavy tests kept both threads of a 2-core machine
/// busy for over 30 s, so in-process servers took connections and answered nothing (CI,
/// November 2026). Not NIO's event loops either, as in `rolo serve`: in a host they also
/// carry the host's own I/O (PostgreSQL clients of other tests timed out connecting while
/// dozens of servers parsed and wrote on the two loops).
enum InProcessServerExecutor {
    static let shared = ThreadPoolExecutor(threads: max(2, System.coreCount))
}

/// Runs work that holds a thread for long (bcrypt: 70-110 ms of CPU a first login) on
/// threads of its own, so an event loop running tasks is never held up by it. Use with
/// `withTaskExecutorPreference(BlockingWorkExecutor.shared) { ... }`. Its own threads, not
/// a dispatch queue: a concurrent queue draws on the same dispatch pool as Swift's
/// cooperative executor on Linux, so a busy host (a test run) would hold up the checks.
enum BlockingWorkExecutor {
    static let shared = ThreadPoolExecutor(threads: max(2, System.coreCount))
}

/// A task executor with threads of its own (an `NIOThreadPool`), which nothing else uses.
final class ThreadPoolExecutor: TaskExecutor {
    private let pool: NIOThreadPool
    /// Set on the pool's threads, which run nothing else.
    private let marker = ThreadSpecificVariable<Marker>()
    private final class Marker: Sendable {}

    init(threads: Int) {
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pool.submit { [self] _ in
            if marker.currentValue == nil { marker.currentValue = Marker() }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// True on one of this executor's threads (for tests and assertions).
    var isCurrent: Bool { marker.currentValue != nil }
}
