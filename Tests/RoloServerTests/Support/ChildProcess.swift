import Foundation
import ProcessLaunch
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion with `posix_spawn`, on a thread of its own, and returns its
/// stdout.
///
/// Not Foundation's `Process`: on Linux it watches children through libdispatch, and with
/// hundreds of short-lived curl processes spawned by tests running in parallel, the test
/// process once crashed inside libdispatch's event loop (`_dispatch_event_loop_drain`,
/// signal 11). Here nothing but plain blocking calls on a dedicated thread is involved:
/// pipes created close-on-exec (so concurrent spawns never inherit each other's ends, which
/// would hold a pipe open and hang the reader), then read to EOF and `waitpid`.
/// Not a cooperative-pool thread either: blocking one would starve the in-process server
/// the child is talking to.
func runProcess(_ executable: String, _ arguments: [String], stdin: Data? = nil,
                environment: [String: String]? = nil) async throws -> String {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
        Thread.detachNewThread {
            continuation.resume(with: Result {
                try ChildProcess.run(executable, arguments, stdin: stdin ?? Data(), environment: environment)
            })
        }
    }
}

enum ChildProcess {
    /// Shared with every test target's spawns (`ProcessLaunch`).
    private static var spawnLock: NSLock { childSpawnLock }

    struct Failure: Error, CustomStringConvertible {
        var call: String
        var code: Int32
        var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    /// Blocks the calling thread until the child exits. `stdin` must fit a pipe's buffer
    /// (64 KiB) when the child writes much before reading its input.
    static func run(_ executable: String, _ arguments: [String], stdin: Data,
                    environment: [String: String]?) throws -> String {
        var output: [Int32] = [0, 0]
        var input: [Int32] = [0, 0]
        var pid: pid_t = 0
        try spawnLock.withLock {
            // pipe2(O_CLOEXEC) is not visible from Swift's Glibc; pipe + fcntl under the
            // lock every spawn here takes is just as safe from inheriting each other's ends.
            guard pipe(&output) == 0 else { throw Failure(call: "pipe", code: errno) }
            guard pipe(&input) == 0 else {
                close(output[0]); close(output[1])
                throw Failure(call: "pipe", code: errno)
            }
            for fd in output + input { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            // dup2 onto 0 and 1 clears close-on-exec for the child's copies only.
            posix_spawn_file_actions_adddup2(&actions, input[0], 0)
            posix_spawn_file_actions_adddup2(&actions, output[1], 1)

            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            let variables = (environment ?? ProcessInfo.processInfo.environment)
                .map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { variables.forEach { free($0) } }

            let spawned = posix_spawn(&pid, executable, &actions, nil, argv, variables)
            close(input[0]); close(output[1])
            guard spawned == 0 else {
                close(input[1]); close(output[0])
                throw Failure(call: "posix_spawn \(executable)", code: spawned)
            }
        }

        stdin.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(input[1], bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
        }
        close(input[1])

        var collected = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(output[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            collected += buffer[0..<count]
        }
        close(output[0])

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return String(decoding: collected, as: UTF8.self)
    }
}
