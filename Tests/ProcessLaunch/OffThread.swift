import Foundation

/// Runs blocking `body` (waiting for a child process, reading its pipe, `usleep`) on a
/// thread of its own. Swift Testing runs tests on the cooperative pool, which has one
/// thread per core: on a 2-core CI machine, two tests blocked in `openssl` or in a slapd
/// shutdown stalled every other test's tasks, and the push tests' local service missed
/// its deadlines (a CI run had seven of them fail at once).
public func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
