import Dispatch
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

/// Runs work that holds a thread for long (bcrypt: 70-110 ms of CPU a first login) on
/// threads of its own, so an event loop running tasks is never held up by it. Use with
/// `withTaskExecutorPreference(BlockingWorkExecutor.shared) { ... }`.
final class BlockingWorkExecutor: TaskExecutor {
    static let shared = BlockingWorkExecutor()

    private let queue = DispatchQueue(label: "rolo.blocking-work", attributes: .concurrent)
    private let marker = DispatchSpecificKey<Bool>()

    private init() {
        queue.setSpecific(key: marker, value: true)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// True on one of this executor's threads (for tests and assertions).
    var isCurrent: Bool { DispatchQueue.getSpecific(key: marker) == true }
}
