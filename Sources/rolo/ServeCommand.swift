import ArgumentParser
import Foundation
import Logging
import RoloServer
import RoloStore

/// `rolo serve`: runs the CardDAV server until SIGTERM/SIGINT. Every flag falls back to a
/// `ROLO_*` environment variable, then to a default.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the CardDAV server.")

    @Option(help: "Address to bind (env ROLO_HOST, default 127.0.0.1).") var host: String?
    @Option(help: "TCP port, 0 for any free one (env ROLO_PORT, default 8800).") var port: Int?
    @OptionGroup var database: DatabaseOptions
    @Option(help: "URL prefix of the DAV tree (env ROLO_BASE_PATH, default /dav).") var basePath: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical (env ROLO_LOG_LEVEL, default info).")
    var logLevel: String?
    @Option(help: "Largest vCard a client may PUT, in bytes (env ROLO_MAX_RESOURCE_SIZE, default 1048576).")
    var maxResourceSize: Int?
    @Option(help: "Largest other request body, in bytes (env ROLO_MAX_REQUEST_SIZE, default 4194304).")
    var maxRequestSize: Int?

    func configurationFromOptions() throws -> ServerConfiguration {
        let levelName = logLevel ?? Environment.value("ROLO_LOG_LEVEL") ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else {
            throw ValidationError("Unknown log level \(levelName).")
        }
        let portValue = try port ?? Environment.value("ROLO_PORT").map {
            guard let value = Int($0) else { throw ValidationError("ROLO_PORT is not a number: \($0)") }
            return value
        } ?? 8800
        guard (0...65535).contains(portValue) else { throw ValidationError("Port \(portValue) out of range.") }
        var limits = RequestLimits()
        if let size = maxResourceSize ?? Environment.value("ROLO_MAX_RESOURCE_SIZE").flatMap(Int.init) {
            limits.maxResourceSize = size
        }
        if let size = maxRequestSize ?? Environment.value("ROLO_MAX_REQUEST_SIZE").flatMap(Int.init) {
            limits.maxRequestBodySize = size
        }
        return ServerConfiguration(
            host: host ?? Environment.value("ROLO_HOST") ?? "127.0.0.1",
            port: portValue,
            databasePath: database.resolvedPath,
            basePath: basePath ?? Environment.value("ROLO_BASE_PATH") ?? "/dav",
            logLevel: level,
            limits: limits)
    }

    func run() async throws {
        let configuration = try configurationFromOptions()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = configuration.logLevel
            return handler
        }
        let store = try database.openStore()
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
