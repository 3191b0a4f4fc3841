import Foundation
import Logging
import RoloServer
import RoloSQLite
import RoloStore
import RoloTestControl

/// A Rolo server inside the test process, on a free 127.0.0.1 port with a throwaway store:
/// `RoloTestServer.start()` in one call, `stop()` at the end, or `withRoloServer { … }`,
/// which always stops it. Real HTTP, real SQLite: what a client under test talks to is the
/// server users run.
public final class RoloTestServer: Sendable {
    /// How the server starts.
    public struct Options: Sendable {
        /// Fixture folders (`DIR/<user>/<book>/*.vcf`), loaded in order.
        public var fixtures: [String]
        /// Fixed clock and counter-based lock tokens, so answers repeat byte for byte.
        public var deterministic: Bool
        /// Turns on the `/_rolo/` test-control API with a random token.
        public var testAPI: Bool
        /// URL path of the DAV tree.
        public var basePath: String
        /// Server log level (warnings by default, so test output stays readable).
        public var logLevel: Logger.Level

        public init(fixtures: [String] = [], deterministic: Bool = false, testAPI: Bool = false,
                    basePath: String = "/dav", logLevel: Logger.Level = .warning) {
            self.fixtures = fixtures; self.deterministic = deterministic; self.testAPI = testAPI
            self.basePath = basePath; self.logLevel = logLevel
        }
    }

    /// The DAV tree, e.g. `http://127.0.0.1:40123/dav/`.
    public let baseURL: URL
    public let port: Int
    /// The first fixture user, else the generated `admin`.
    public let username: String
    public let password: String
    /// Bearer token of `/_rolo/` (nil unless `Options.testAPI`).
    public let testAPIToken: String?
    /// The store behind the server, for assertions that look past HTTP.
    public let store: SQLiteStore
    private let running: RunningServer

    private init(baseURL: URL, port: Int, credentials: Credentials, testAPIToken: String?, store: SQLiteStore,
                 running: RunningServer) {
        self.baseURL = baseURL; self.port = port
        self.username = credentials.username; self.password = credentials.password
        self.testAPIToken = testAPIToken; self.store = store; self.running = running
    }

    /// Reads the fixtures (throwing `FixtureError` before anything starts), fills a fresh
    /// temporary store and starts listening.
    public static func start(_ options: Options = Options()) async throws -> RoloTestServer {
        let fixtures = try options.fixtures.map(FixtureSet.init(directory:))
        let store = try TestServerSetup.ephemeralStore(deterministic: options.deterministic)
        do {
            guard let credentials = try await TestServerSetup.populate(store, fixtures: fixtures) else {
                preconditionFailure("a fresh store always gets a user")
            }
            let token = options.testAPI ? TestServerSetup.randomToken() : nil
            let configuration = ServerConfiguration(
                host: "127.0.0.1", port: 0, databasePath: store.path, basePath: options.basePath,
                logLevel: options.logLevel,
                frontMiddleware: token.map { TestAPIConfiguration(token: $0, fixtures: fixtures) },
                deterministic: options.deterministic)
            let running = try await RoloServer.make(configuration: configuration, store: store).start()
            let base = URL(string: "http://127.0.0.1:\(running.port)\(configuration.basePath)/")!
            return RoloTestServer(baseURL: base, port: running.port, credentials: credentials, testAPIToken: token,
                                  store: store, running: running)
        } catch {
            try? store.close()
            throw error
        }
    }

    /// Stops listening, lets in-flight requests finish, and deletes the store.
    public func stop() async throws {
        try await running.shutdown()
        try store.close()
    }

    /// `baseURL` resolved against a relative path, e.g. `addressbooks/alice/default/`.
    public func url(_ path: String) -> URL {
        URL(string: path, relativeTo: baseURL)!.absoluteURL
    }

    /// The `Authorization` header value for `username`/`password`.
    public var basicAuthorization: String {
        "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
    }
}

/// Starts a server, runs `body` with it and always stops it, also when `body` throws.
public func withRoloServer<T>(_ options: RoloTestServer.Options = RoloTestServer.Options(),
                              isolation: isolated (any Actor)? = #isolation,
                              _ body: (RoloTestServer) async throws -> T) async throws -> T {
    let server = try await RoloTestServer.start(options)
    let result: T
    do {
        result = try await body(server)
    } catch {
        try? await server.stop()
        throw error
    }
    try await server.stop()
    return result
}
