import Foundation
import ProcessLaunch

/// The one way these tests run the built `rolo` binary (found next to the test bundle in
/// .build/<config>/): to completion with `RoloBinary.run`, or in the background with
/// `ServeProcess`.
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
        /// Standard output byte for byte.
        var output: Data
        var stderr: String
        var stdout: String { String(decoding: output, as: UTF8.self) }
    }

    /// Runs `rolo arguments…` to completion with `stdin`, without blocking the cooperative pool:
    /// both pipes are read to their end on plain threads (so a large output cannot block the
    /// child, and no last chunk is lost at EOF), and the exit is waited for on another.
    static func run(_ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:]) async throws -> Outcome {
        try await run(executable: url.path, arguments, stdin: stdin, environment: environment)
    }

    /// `executable arguments…` the same way: a shell or `unshare` that runs `rolo` in turn.
    /// `environment` is added to the test's own.
    static func run(executable: String, _ arguments: [String], stdin: Data? = nil,
                    environment: [String: String] = [:]) async throws -> Outcome {
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let process = try SpawnedProcess(executable, arguments, environment: variables, stdin: .pipe, stdout: .pipe, stderr: .pipe)
        let outputFD = process.standardOutput!, errorsFD = process.standardError!, inputFD = process.standardInput!
        async let out = onPlainThread { readToEnd(outputFD) }
        async let err = onPlainThread { readToEnd(errorsFD) }
        await onPlainThread {
            if let stdin { writeAll(inputFD, stdin) }
            close(inputFD)
        }
        let (stdout, stderr) = await (out, err)
        await process.exited()
        return Outcome(status: process.terminationStatus, output: stdout, stderr: String(decoding: stderr, as: UTF8.self))
    }

    static func run(_ arguments: [String], stdin: String) async throws -> Outcome {
        try await run(arguments, stdin: Data(stdin.utf8))
    }
}

/// Accumulates what a child writes to a pipe, and lets a test wait for a line to appear.
///
/// Reads with blocking read(2) calls (`readChunk`: FileHandle's reads trap on EINTR) on a
/// thread of its own, not with `readabilityHandler`: that
/// registers a libdispatch source on the descriptor, and one CI run of the whole suite died
/// inside libdispatch's event loop (`_dispatch_event_loop_drain`, signal 11), the crash
/// libdispatch gives when a descriptor it watches is closed under it.
final class PipeText: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes = Data()
    private var ended = false

    /// Reads `descriptor` until its end, then closes it.
    init(_ descriptor: Int32) {
        Thread.detachNewThread { [self] in
            while true {
                let data = readChunk(descriptor)
                if data.isEmpty { close(descriptor) }
                let finished = lock.withLock {
                    if data.isEmpty { ended = true } else { bytes.append(data) }
                    return data.isEmpty
                }
                if finished { return }
            }
        }
    }

    /// Everything so far, decoded as a whole (a UTF-8 character split across reads survives).
    var current: String { String(decoding: data, as: UTF8.self) }
    var data: Data { lock.withLock { bytes } }

    /// Polls until `match` finds something in the text so far, or `timeout` passes. The
    /// text is looked at once more after the deadline: on a loaded machine this task may
    /// wake only after it, with the awaited line long since arrived.
    func waitFor<T>(timeout: Duration = .seconds(60), _ match: (String) -> T?) async -> T? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = match(current) { return found }
            if lock.withLock({ ended }) { return match(current) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return match(current)
    }
}

/// The JSON object `rolo serve` prints as its first stdout line with `--port 0` or `--ephemeral`.
struct ServeStartLine: Decodable {
    var url: String
    var port: Int
    var username: String?
    var password: String?
    var testAPIToken: String?

    enum CodingKeys: String, CodingKey {
        case url, port, username, password
        case testAPIToken = "test_api_token"
    }
}

/// `rolo serve` (or any long-running `rolo` command) in the background.
final class ServeProcess: @unchecked Sendable {
    let process: SpawnedProcess
    let stdout: PipeText
    let stderr: PipeText
    private(set) var port = 0
    private(set) var startLine: ServeStartLine?
    /// The raw first stdout line, for byte-level checks.
    private(set) var startLineText = ""

    convenience init(database: String, extra: [String] = []) throws {
        try self.init(arguments: ["serve", "--port", "0", "--database", database, "--log-level", "warning"] + extra)
    }

    /// `rolo arguments…` with `environment` added to the test's own.
    /// `executable` instead of `rolo` runs a shell or wrapper that starts it.
    init(arguments: [String], environment: [String: String] = [:], executable: String = RoloBinary.url.path) throws {
        process = try SpawnedProcess(executable, arguments,
                                     environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
                                     stdin: .null, stdout: .pipe, stderr: .pipe)
        stdout = PipeText(process.standardOutput!)
        stderr = PipeText(process.standardError!)
    }

    /// Waits for the JSON start line and returns the bound port; without one, the process is
    /// stopped and the error says what it printed.
    @discardableResult
    func waitUntilListening() async throws -> Int {
        let line = await stdout.waitFor { text -> String? in
            guard let end = text.firstIndex(of: "\n") else { return nil }
            return String(text[..<end])
        }
        guard let line, let parsed = try? JSONDecoder().decode(ServeStartLine.self, from: Data(line.utf8)) else {
            // Stopped here: a test that throws now never reaches its own `terminate`, and a
            // serve left running holds a port and a database for the rest of the run.
            let error = ServeError(message: "rolo serve printed no JSON start line. stdout: \(stdout.current) stderr: \(stderr.current)")
            _ = await terminate()
            throw error
        }
        startLineText = line
        startLine = parsed
        port = parsed.port
        return parsed.port
    }

    /// SIGTERM, then waits for the exit and returns its status.
    func terminate() async -> Int32 {
        if process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { process.send(SIGKILL) }
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

/// `curl -s -o /dev/null -w %{http_code} arguments…`.
func curlStatus(_ arguments: [String]) async throws -> Int {
    Int(try await curl(["-o", "/dev/null", "-w", "%{http_code}"] + arguments)) ?? -1
}

/// `curl -s arguments…`; returns what it wrote to stdout (read to EOF on a plain thread).
func curl(_ arguments: [String]) async throws -> String {
    let process = try SpawnedProcess("/usr/bin/curl", ["-s"] + arguments)
    let outputFD = process.standardOutput!
    let output = await onPlainThread { readToEnd(outputFD) }
    await process.exited()
    return String(decoding: output, as: UTF8.self)
}

/// Runs blocking `work` on its own thread, so pipes and waits never hold the cooperative pool.
func onPlainThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: work()) }
    }
}

/// A PROPFIND (Depth 0) with Basic credentials; returns the status code.
func propfindStatus(port: Int, path: String, user: String, password: String) async throws -> Int {
    try await curlStatus(["-X", "PROPFIND", "-H", "Depth: 0", "-u", "\(user):\(password)",
                          "http://127.0.0.1:\(port)\(path)"])
}
