import Foundation

/// One lock for every child process the tests start, whichever test target starts it (all
/// test targets run in one process): a pipe is made and set close-on-exec, and the child
/// spawned, under it, so no other spawn inherits a pipe end meant for another child (which
/// would hold the pipe open and hang its reader).
public let childSpawnLock = NSLock()

/// One read(2) from `descriptor`, retried on EINTR: up to 64 KiB, empty at end of file (or on
/// an error). Foundation's `FileHandle.availableData` and `readDataToEndOfFile()` trap on
/// EINTR instead ("FileHandle.swift:231: Fatal error ... Interrupted system call"), and a
/// child's exit signal landing during such a read ended a whole CI run with signal 4.
public func readChunk(_ descriptor: Int32) -> Data {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 { return Data(buffer[..<count]) }
        if count < 0 && errno == EINTR { continue }
        return Data()
    }
}

/// Everything `descriptor` yields until end of file (`readChunk` until it is empty); then
/// closes it.
public func readToEnd(_ descriptor: Int32) -> Data {
    var data = Data()
    while true {
        let chunk = readChunk(descriptor)
        if chunk.isEmpty {
            close(descriptor)
            return data
        }
        data.append(chunk)
    }
}

/// Writes all of `data` with write(2), retrying EINTR and short writes (FileHandle's
/// non-throwing `write(_:)` traps on errors, EINTR among them). Stops at any other error.
public func writeAll(_ descriptor: Int32, _ data: Data) {
    data.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}
