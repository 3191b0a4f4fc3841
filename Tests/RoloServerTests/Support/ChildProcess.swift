import Foundation
import ProcessLaunch
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion (`SpawnedProcess`: posix_spawn, blocking reads, waitpid) on
/// a thread of its own, and returns its stdout; its stderr is the test process's.
/// Not a cooperative-pool thread: blocking one would starve the in-process server the child
/// is talking to. `stdin` must fit a pipe's buffer (64 KiB) when the child writes much
/// before reading its input.
func runProcess(_ executable: String, _ arguments: [String], stdin: Data? = nil,
                environment: [String: String]? = nil) async throws -> String {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
        Thread.detachNewThread {
            continuation.resume(with: Result {
                let child = try SpawnedProcess(executable, arguments, environment: environment, stdin: .pipe)
                writeAll(child.standardInput!, stdin ?? Data())
                close(child.standardInput!)
                let output = readToEnd(child.standardOutput!)
                child.waitUntilExit()
                return String(decoding: output, as: UTF8.self)
            })
        }
    }
}
