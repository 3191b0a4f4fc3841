import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`: the one way the tests start programs
/// (`rolo`, curl, pg_ctl, the crash writer).
///
/// Not Foundation's `Process`. On Linux its `run()` looks for the highest open descriptor by
/// copying each `/proc/self/fd` entry's whole 256-byte `d_name` out of `readdir`'s buffer,
/// which reads past the buffer's end when the last entry sits near the end of a mapping: with
/// about 1,400 descriptors open in the test process (parallel servers, pools, pipes), a CI
/// run died there (signal 11 in `memcpy` under `Process.run()`), serialised launches or not.
/// It also watches children through a run loop and libdispatch, which crashed a run before.
/// Here: pipes set close-on-exec, the child's descriptors past 2 closed by glibc's
/// `posix_spawn_file_actions_addclosefrom_np` (nothing of the test process leaks into a
/// server it starts), default signal handling and an empty signal mask in the child, and
/// `waitpid` for the status.
public final class SpawnedProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// The test process's own.
        case inherit
        /// `/dev/null`.
        case null
        /// A pipe; the test's end is `standardInput`, `standardOutput` or `standardError`.
        case pipe
        /// A file, created or truncated (for output) or read (for input).
        case file(String)
    }

    /// How the child ended, with the names Foundation's `Process` uses.
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    public struct Failure: Error, CustomStringConvertible {
        public var call: String
        public var code: Int32
        public var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    public let processIdentifier: pid_t
    /// The write end of the child's stdin, for `.pipe`. The caller closes it when done.
    public let standardInput: Int32?
    /// The read ends of the child's stdout and stderr, for `.pipe`. The reader closes each
    /// once it has read it to its end: closing it under a reader still at work would let the
    /// reader take the bytes of whatever file reuses the number.
    public let standardOutput: Int32?
    public let standardError: Int32?

    private let lock = NSLock()
    /// The wait status once the child has been reaped.
    private var waitStatus: Int32?

    /// Starts `executable` (a path; no PATH search) with `arguments`, in `environment`
    /// (the test process's own when nil).
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                stdin: Stream = .null, stdout: Stream = .pipe, stderr: Stream = .inherit) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var allSignals = sigset_t(), noSignals = sigset_t()
        sigfillset(&allSignals)
        sigemptyset(&noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment)
            .map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { variables.forEach { free($0) } }

        // The child's ends, closed here after the spawn; the test's ends, kept.
        var childEnds: [Int32] = []
        var parentEnds: [Int32?] = [nil, nil, nil]
        var pid: pid_t = 0
        let spawned: Int32 = try childSpawnLock.withLock {
            do {
                for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
                    switch stream {
                    case .inherit:
                        break
                    case .null:
                        posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
                    case .file(let path):
                        posix_spawn_file_actions_addopen(&actions, target, path,
                                                         target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                    case .pipe:
                        var ends: [Int32] = [0, 0]
                        guard pipe(&ends) == 0 else { throw Failure(call: "pipe", code: errno) }
                        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                        let (childEnd, parentEnd) = target == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
                        childEnds.append(childEnd)
                        parentEnds[Int(target)] = parentEnd
                        // dup2 onto 0, 1 or 2 clears close-on-exec for the child's copy only.
                        posix_spawn_file_actions_adddup2(&actions, childEnd, target)
                    }
                }
                if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
                return posix_spawn(&pid, executable, &actions, &attributes, argv, variables)
            } catch {
                for fd in childEnds + parentEnds.compactMap({ $0 }) { close(fd) }
                throw error
            }
        }
        for fd in childEnds { close(fd) }
        guard spawned == 0 else {
            for fd in parentEnds.compactMap({ $0 }) { close(fd) }
            throw Failure(call: "posix_spawn \(executable)", code: spawned)
        }
        processIdentifier = pid
        standardInput = parentEnds[0]
        standardOutput = parentEnds[1]
        standardError = parentEnds[2]
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), looked up at run
    /// time because Swift's Glibc module does not declare it.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Reaps the child if it has ended (never blocks).
    public var isRunning: Bool {
        lock.withLock {
            if waitStatus != nil { return false }
            var status: Int32 = 0
            let result = waitpid(processIdentifier, &status, WNOHANG)
            if result == processIdentifier { waitStatus = status; return false }
            if result == -1 && errno == ECHILD {
                // Reaped by someone else: nothing here does that, but never wait for ever.
                waitStatus = 0x7F
                return false
            }
            return true
        }
    }

    /// Blocks the calling thread until the child has ended (call it from a thread of its
    /// own, or after the child is known to have ended: `onOwnThread` / `exited()`).
    public func waitUntilExit() {
        while isRunning { usleep(2_000) }
    }

    /// Waits for the end on a thread of its own, so no cooperative-pool thread blocks.
    public func exited() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                self.waitUntilExit()
                continuation.resume()
            }
        }
    }

    /// Sends `signal`, unless the child has already been reaped (its pid may be another's now).
    public func send(_ signal: Int32) {
        lock.withLock {
            if waitStatus == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// SIGTERM, as Foundation's `terminate()`.
    public func terminate() { send(SIGTERM) }

    private var endedStatus: Int32 {
        guard let status = lock.withLock({ waitStatus }) else { preconditionFailure("the child is still running") }
        return status
    }

    public var terminationReason: TerminationReason {
        endedStatus & 0x7F == 0 ? .exit : .uncaughtSignal
    }

    /// The exit code, or the signal that ended the child.
    public var terminationStatus: Int32 {
        let status = endedStatus
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : status & 0x7F
    }
}
