import Foundation

/// Runs the built `rolo` binary (next to the test bundle in .build/<config>/).
enum RoloBinary {
    static var url: URL {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("rolo").path),
              folder.path != "/" {
            folder = folder.deletingLastPathComponent()
        }
        return folder.appendingPathComponent("rolo")
    }

    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `rolo arguments…` to completion with `stdin`, without blocking the cooperative pool.
    static func run(_ arguments: [String], stdin: String? = nil) async throws -> Outcome {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        let output = Pipe(), errors = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        let out = PipeText(output), err = PipeText(errors)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
                if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
                try? input.fileHandleForWriting.close()
            } catch {
                continuation.resume(throwing: error)
            }
        }
        return Outcome(status: process.terminationStatus, stdout: await out.waitForEOF(), stderr: await err.waitForEOF())
    }
}

/// Accumulates what a child writes to a pipe, and lets a test wait for a line to appear.
final class PipeText: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    private var ended = false

    init(_ pipe: Pipe) {
        pipe.fileHandleForReading.readabilityHandler = { [self] handle in
            let data = handle.availableData
            lock.withLock {
                if data.isEmpty { ended = true; handle.readabilityHandler = nil }
                else { text += String(decoding: data, as: UTF8.self) }
            }
        }
    }

    var current: String { lock.withLock { text } }

    /// Polls until `match` finds something in the text so far, or `timeout` passes.
    func waitFor<T>(timeout: Duration = .seconds(60), _ match: (String) -> T?) async -> T? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = match(current) { return found }
            if lock.withLock({ ended }) { return match(current) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    func waitForEOF() async -> String {
        _ = await waitFor(timeout: .seconds(10)) { _ in self.lock.withLock { self.ended } ? true : nil }
        return current
    }
}

/// `rolo serve` running in the background on a free port.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    let stdout: PipeText
    let stderr: PipeText
    private(set) var port = 0

    convenience init(database: String, extra: [String] = []) throws {
        try self.init(arguments: ["serve", "--port", "0", "--database", database, "--log-level", "warning"] + extra)
    }

    /// `rolo arguments…` with `environment` added to the test's own.
    init(arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = RoloBinary.url
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        stdout = PipeText(output)
        stderr = PipeText(errors)
        try process.run()
    }

    /// Waits for the "Rolo listening on http://127.0.0.1:PORT/..." line.
    func waitUntilListening() async throws -> Int {
        let found = await stdout.waitFor { text -> Int? in
            guard let range = text.range(of: #"listening on http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression)
            else { return nil }
            return Int(text[range].split(separator: ":").last!)
        }
        guard let found else {
            throw ServeError(message: "rolo serve did not report a port. stdout: \(stdout.current) stderr: \(stderr.current)")
        }
        port = found
        return found
    }

    /// SIGTERM, then waits for the exit and returns its status.
    func terminate() async -> Int32 {
        if process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        return process.terminationStatus
    }
}

struct ServeError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// A temporary folder for one test's database.
func temporaryDatabase() throws -> (folder: URL, path: String) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return (folder, folder.appendingPathComponent("data/rolo.sqlite").path)
}

/// `curl` a PROPFIND with Basic credentials; returns the status code.
func propfindStatus(port: Int, path: String, user: String, password: String) async throws -> Int {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PROPFIND", "-H", "Depth: 0",
                         "-u", "\(user):\(password)", "http://127.0.0.1:\(port)\(path)"]
    let output = Pipe()
    process.standardOutput = output
    let text = PipeText(output)
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        process.terminationHandler = { _ in continuation.resume() }
        do { try process.run() } catch { continuation.resume(throwing: error) }
    }
    return Int(await text.waitForEOF()) ?? -1
}
