import ArgumentParser
import Foundation
import Logging
import RoloServer
import RoloStore

/// `rolo serve`: runs the CardDAV server until SIGTERM/SIGINT. Every setting comes from its
/// flag, else its `ROLO_*` environment variable, else the `--config` TOML file, else a default.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the CardDAV server.")

    @Option(help: "TOML file with any of the settings below in snake case (env ROLO_CONFIG).") var config: String?
    @Option(help: "Address to bind (env ROLO_HOST, default 127.0.0.1).") var host: String?
    @Option(help: "TCP port, 0 for any free one (env ROLO_PORT, default 8800).") var port: Int?
    @OptionGroup var database: DatabaseOptions
    @Option(help: "URL prefix of the DAV tree (env ROLO_BASE_PATH, default /dav).") var basePath: String?
    @Option(help: "Path a reverse proxy puts before the base path, e.g. /carddav (env ROLO_PROXY_PREFIX).")
    var proxyPrefix: String?
    @Option(name: .customLong("public-url"),
            help: "URL clients use, e.g. https://example.org/carddav (env ROLO_PUBLIC_URL).")
    var publicURL: String?
    @Option(name: .customLong("trusted-proxy"),
            help: "Proxy address whose X-Forwarded-For is believed; repeatable (env ROLO_TRUSTED_PROXIES, comma-separated).")
    var trustedProxies: [String] = []
    @Option(help: "trace, debug, info, notice, warning, error or critical (env ROLO_LOG_LEVEL, default info).")
    var logLevel: String?
    @Option(help: "text or json: one JSON object per line (env ROLO_LOG_FORMAT, default text).")
    var logFormat: String?
    @Option(help: "Largest vCard a client may PUT, in bytes (env ROLO_MAX_RESOURCE_SIZE, default 1048576).")
    var maxResourceSize: Int?
    @Option(help: "Largest other request body, in bytes (env ROLO_MAX_REQUEST_SIZE, default 4194304).")
    var maxRequestSize: Int?

    /// How log lines are written to stderr.
    enum LogFormat: String {
        case text, json
    }

    func settings() throws -> LayeredSettings {
        let path = config ?? Environment.value("ROLO_CONFIG")
        return LayeredSettings(file: try path.map(ConfigFile.init(path:)) ?? ConfigFile())
    }

    func configurationFromOptions(_ settings: LayeredSettings) throws -> ServerConfiguration {
        let levelName = settings.string(logLevel, env: "ROLO_LOG_LEVEL", key: "log_level") ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else {
            throw ValidationError("Unknown log level \(levelName).")
        }
        let portValue = try settings.integer(port, env: "ROLO_PORT", key: "port") ?? 8800
        guard (0...65535).contains(portValue) else { throw ValidationError("Port \(portValue) out of range.") }
        var limits = RequestLimits()
        if let size = try settings.integer(maxResourceSize, env: "ROLO_MAX_RESOURCE_SIZE", key: "max_resource_size") {
            limits.maxResourceSize = size
        }
        if let size = try settings.integer(maxRequestSize, env: "ROLO_MAX_REQUEST_SIZE", key: "max_request_size") {
            limits.maxRequestBodySize = size
        }
        var url: URL?
        if let text = settings.string(publicURL, env: "ROLO_PUBLIC_URL", key: "public_url") {
            guard let parsed = URL(string: text), let scheme = parsed.scheme, ["http", "https"].contains(scheme),
                  parsed.host != nil else {
                throw ValidationError("Public URL \(text) is not an absolute http(s) URL.")
            }
            url = parsed
        }
        return ServerConfiguration(
            host: settings.string(host, env: "ROLO_HOST", key: "host") ?? "127.0.0.1",
            port: portValue,
            databasePath: database.resolvedPath(configured: settings.file.string("database")),
            basePath: settings.string(basePath, env: "ROLO_BASE_PATH", key: "base_path") ?? "/dav",
            logLevel: level,
            limits: limits,
            proxyPrefix: settings.string(proxyPrefix, env: "ROLO_PROXY_PREFIX", key: "proxy_prefix") ?? "",
            publicURL: url,
            trustedProxies: Set(settings.list(trustedProxies, env: "ROLO_TRUSTED_PROXIES", key: "trusted_proxies")))
    }

    func resolvedLogFormat(_ settings: LayeredSettings) throws -> LogFormat {
        let name = settings.string(logFormat, env: "ROLO_LOG_FORMAT", key: "log_format") ?? "text"
        guard let format = LogFormat(rawValue: name) else {
            throw ValidationError("Unknown log format \(name) (text or json).")
        }
        return format
    }

    func run() async throws {
        let settings = try settings()
        let configuration = try configurationFromOptions(settings)
        let format = try resolvedLogFormat(settings)
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = configuration.logLevel
                return handler
            case .json:
                return JSONLogHandler(label: label, logLevel: configuration.logLevel)
            }
        }
        let store = try database.openStore(path: configuration.databasePath)
        try await createFirstAdmin(store)
        let server = RoloServer.make(configuration: configuration, store: store)
        try await server.run { port in
            printUnbuffered("Rolo listening on http://\(configuration.host):\(port)\(configuration.basePath)/")
        }
        try store.close()
    }

    /// On a database without users, creates `admin` with a random password printed once.
    private func createFirstAdmin(_ store: some RoloStore) async throws {
        guard try await store.listUsers().isEmpty else { return }
        let password = PasswordInput.generate()
        try await store.createUser(name: "admin", password: password)
        printUnbuffered("""
            Created user admin with password: \(password)
            Write it down: it is not shown again (change it with `rolo user passwd admin`).
            """)
    }
}

/// Writes a line to stdout at once: scripts and tests wait for these lines on a pipe,
/// where `print` would sit in a buffer.
func printUnbuffered(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
