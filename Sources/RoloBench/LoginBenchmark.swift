import Foundation
import LDAPClient
import LDAPTestSupport
import Logging
import LoopbackSockets
import RoloServer
import RoloSQLite
#if canImport(Glibc)
import Glibc
#endif

/// `RoloBench login [--requests N]`: the latency of a DAV request (PROPFIND, Depth 0) as
/// its login costs it, over real HTTP on loopback, with the `ldap` source against a
/// throwaway slapd: a remembered login (cache hit), a login that asks the directory each
/// time (`auth_cache_seconds = 0`: search and bind), an app password of a directory user,
/// and a remembered local login for comparison. One request at a time, a new connection
/// each (as the figures are about the login, not about keep-alive).
func runLoginBenchmark(_ arguments: [String]) async {
    var requests = 200
    if let index = arguments.firstIndex(of: "--requests"), index + 1 < arguments.count, let value = Int(arguments[index + 1]) {
        requests = max(10, value)
    }
    do {
        try await withTestDirectory { directory in
            print("login latency, \(requests) PROPFIND requests each, one at a time (ms)")
            let scenarios: [(String, Duration, [AuthenticationSourceKind], String, Bool)] = [
                ("local, remembered (cache hit)", .seconds(300), [.local], "bench", false),
                ("ldap, remembered (cache hit)", .seconds(300), [.ldap], "alice", false),
                ("ldap, app password", .seconds(300), [.ldap], "alice", true),
                ("ldap, asked each time (cache miss: search + bind)", .zero, [.ldap], "alice", false),
            ]
            for (label, cache, sources, user, appPassword) in scenarios {
                let figures = try await measure(directory: directory, cache: cache, sources: sources, user: user,
                                                appPassword: appPassword, requests: requests)
                print(label.padding(toLength: 52, withPad: " ", startingAt: 0)
                      + String(format: " median %6.2f  p95 %6.2f  max %6.2f", figures.median, figures.p95, figures.max))
            }
        }
    } catch {
        FileHandle.standardError.write(Data("login benchmark failed: \(error)\n".utf8))
        exit(1)
    }
}

private func measure(directory: TestDirectory, cache: Duration, sources: [AuthenticationSourceKind], user: String,
                     appPassword: Bool, requests: Int) async throws -> (median: Double, p95: Double, max: Double) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-login-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    var configuration = ServerConfiguration(port: 0, databasePath: folder.appendingPathComponent("rolo.sqlite").path,
                                            logLevel: .error, credentialCacheLifetime: cache)
    configuration.authSources = sources
    var ldap = LDAPSourceSettings(connection: LDAPSettings(url: directory.url), baseDN: TestDirectory.baseDN)
    ldap.bindDN = TestDirectory.serviceDN
    ldap.bindPassword = TestDirectory.servicePassword
    ldap.userGroupsAttribute = "memberOf"
    configuration.ldap = ldap
    let store = try SQLiteStore(path: configuration.databasePath, bcryptCost: 10)
    defer { try? store.close() }
    try await store.createUser(name: "bench", password: "bench-password")
    // Errors only: an access-log line per request would be timed too.
    var logger = Logger(label: "rolo-bench")
    logger.logLevel = .error
    let running = try await RoloServer.make(configuration: configuration, store: store, logger: logger).start()
    var password = user == "bench" ? "bench-password" : TestDirectory.password(of: user)
    // The first login makes the directory user (and fills the cache); not counted.
    var status = try await propfind(port: running.port, user: user, password: password)
    if appPassword {
        password = try await store.createAppPassword(user: user, name: "bench", readOnly: false, books: nil).secret
        status = try await propfind(port: running.port, user: user, password: password)
    }
    guard status == 207 else {
        try await running.shutdown()
        throw BenchError("the first login answered \(status), not 207")
    }
    var times: [Double] = []
    for _ in 0..<requests {
        let start = ContinuousClock.now
        let answer = try await propfind(port: running.port, user: user, password: password)
        let elapsed = ContinuousClock.now - start
        guard answer == 207 else {
            try await running.shutdown()
            throw BenchError("a request answered \(answer), not 207")
        }
        times.append(elapsed.inSeconds * 1000)
    }
    try await running.shutdown()
    times.sort()
    return (times[times.count / 2], times[min(times.count - 1, times.count * 95 / 100)], times.last ?? 0)
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One PROPFIND over a new loopback connection, on a thread of its own (blocking socket
/// calls never run on the cooperative pool the server's tasks need); the status code.
private func propfind(port: Int, user: String, password: String) async throws -> Int {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try blockingPropfind(port: port, user: user, password: password) })
        }
    }
}

private func blockingPropfind(port: Int, user: String, password: String) throws -> Int {
    let socketFD = try LoopbackSocket.connect(port: port)
    defer { close(socketFD) }
    let credentials = Data("\(user):\(password)".utf8).base64EncodedString()
    let request = "PROPFIND /dav/addressbooks/\(user)/ HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        + "Depth: 0\r\nContent-Length: 0\r\nAuthorization: Basic \(credentials)\r\n\r\n"
    var bytes = Array(request.utf8)
    var sent = 0
    while sent < bytes.count {
        let written = bytes.withUnsafeMutableBytes { send(socketFD, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
        guard written > 0 else { throw BenchError("the server closed the connection") }
        sent += written
    }
    var answer = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 16_384)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(socketFD, $0.baseAddress!, $0.count, 0) }
        if count <= 0 { break }
        answer += buffer[0..<count]
    }
    let statusLine = String(decoding: answer.prefix { $0 != 13 }, as: UTF8.self)
    guard let code = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
        throw BenchError("no status line: \(statusLine)")
    }
    return code
}
