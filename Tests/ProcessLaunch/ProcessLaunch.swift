import Foundation

/// One lock for every child process the tests start, whichever test target starts it: all
/// test targets run in one process, and two `Process.run()` calls at once (RoloCLITests
/// launching `rolo` while CrashDurabilityTests launched its writer) crashed the whole run
/// inside Foundation's spawn (a bad read in its memcpy, signal 11). posix_spawn-based
/// helpers take it too, so no spawn overlaps another.
public let childSpawnLock = NSLock()

/// `process.run()` under `childSpawnLock`.
public func launchSerialized(_ process: Process) throws {
    try childSpawnLock.withLock { try process.run() }
}
