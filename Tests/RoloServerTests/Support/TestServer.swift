import Foundation
import Logging
import RoloServer
import RoloSQLite
import RoloStore

/// A real Rolo server on 127.0.0.1 with a free port and a temporary SQLite file, with
/// users alice and bob; torn down after `body` even when it throws.
struct TestServer: Sendable {
    static let users = [("alice", "alice-secret"), ("bob", "bob-secret")]

    let store: SQLiteStore
    let port: Int
    let configuration: ServerConfiguration

    var base: String { "http://127.0.0.1:\(port)" }
    var dav: String { base + configuration.basePath }

    /// A new cookie jar for curl (`-b JAR -c JAR`), a browser's cookies: in the server's own
    /// folder, so it goes with the server instead of staying in the temporary folder.
    func cookieJar() -> String {
        URL(fileURLWithPath: configuration.databasePath).deletingLastPathComponent()
            .appendingPathComponent("jar-\(UUID().uuidString)").path
    }

    /// `curl` with alice's credentials unless `user` says otherwise (nil: none).
    func request(_ method: String, _ path: String, user: String? = "alice", password: String? = nil,
                 headers: [String: String] = [:], body: Data? = nil,
                 extra: [String] = []) async throws -> CurlResult {
        try await Self.request(base: base, method, path, user: user, password: password, headers: headers, body: body, extra: extra)
    }

    /// `request` to the server at `base`, whichever store it runs on.
    static func request(base: String, _ method: String, _ path: String, user: String? = "alice", password: String? = nil,
                        headers: [String: String] = [:], body: Data? = nil,
                        extra: [String] = []) async throws -> CurlResult {
        var args = method == "HEAD" ? ["-I"] : ["-X", method]
        if let user {
            let secret = password ?? users.first { $0.0 == user }?.1 ?? ""
            args += ["-u", "\(user):\(secret)"]
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { args += ["-H", "\(name): \(value)"] }
        args += extra
        args.append(path.hasPrefix("http") ? path : base + path)
        return try await Curl.run(args, body: body)
    }

    /// `logger`: where the server logs (by default its own stderr logger at the configured level).
    static func with<T>(configure: (inout ServerConfiguration) -> Void = { _ in }, logger: Logger? = nil,
                        clock: StoreClock = .system, _ body: (TestServer) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = ServerConfiguration(port: 0, databasePath: folder.appendingPathComponent("rolo.sqlite").path,
                                                logLevel: .warning)
        configure(&configuration)
        let store = try SQLiteStore(path: configuration.databasePath, bcryptCost: 4, clock: clock)
        for (name, password) in users { try await store.createUser(name: name, password: password) }
        let running = try await RoloServer.make(configuration: configuration, store: store, logger: logger).start()
        let server = TestServer(store: store, port: running.port, configuration: configuration)
        do {
            let result = try await body(server)
            try await running.shutdown()
            try store.close()
            return result
        } catch {
            try? await running.shutdown()
            try? store.close()
            throw error
        }
    }
}
