import ArgumentParser
import Foundation
import RoloPostgres
import RoloSQLite
import RoloStore

/// `--database PATH|URL` (falling back to `ROLO_DATABASE`, then `./rolo-data/rolo.sqlite`),
/// shared by every command that opens the store: a path opens SQLite, a `postgresql://` URL
/// PostgreSQL, with the PostgreSQL settings beside it.
struct DatabaseOptions: ParsableArguments {
    static let defaultPath = "./rolo-data/rolo.sqlite"

    @Option(name: .long, help: ArgumentHelp(
        "SQLite database file, or a postgresql://user:password@host:port/database URL (env ROLO_DATABASE, default \(DatabaseOptions.defaultPath)).",
        valueName: "path-or-url"))
    var database: String?

    @Option(name: .customLong("database-pool-size"),
            help: "PostgreSQL: connections this process opens at most (env ROLO_DATABASE_POOL_SIZE, default 10).")
    var databasePoolSize: Int?

    @Option(name: .customLong("database-statement-timeout"),
            help: "PostgreSQL: seconds a statement may run before it is cancelled, 0 for no limit (env ROLO_DATABASE_STATEMENT_TIMEOUT, default 30).")
    var databaseStatementTimeout: Int?

    @Option(name: .customLong("database-connection-timeout"),
            help: "PostgreSQL: seconds a request waits for a database connection before it is answered 503 (env ROLO_DATABASE_CONNECTION_TIMEOUT, default 10).")
    var databaseConnectionTimeout: Int?

    @Option(name: .customLong("database-card-cache-mb"),
            help: "PostgreSQL: MiB of cards and answers a serving process keeps in memory for repeated reads (GETs, multigets, listings, queries; with other processes on the database, a GET after a fence); 0 for none (env ROLO_DATABASE_CARD_CACHE_MB, default 64).")
    var databaseCardCacheMB: Int?

    var resolvedPath: String { resolvedPath(configured: nil) }

    /// Flag, then `ROLO_DATABASE`, then `configured` (the serve config file), then the default.
    func resolvedPath(configured: String?) -> String {
        database ?? Environment.value("ROLO_DATABASE") ?? configured ?? Self.defaultPath
    }

    /// The location for messages: a URL without its password.
    var displayedLocation: String { Self.displayed(resolvedPath) }

    static func displayed(_ location: String) -> String {
        PostgresStore.Configuration.isDatabaseURL(location) ? PostgresStore.Configuration.redacted(location) : location
    }

    /// The PostgreSQL settings for `url`: each from its flag, else its variable, else the
    /// config file (`settings`, for `serve`), else the default.
    func postgresConfiguration(url: String, settings: LayeredSettings = LayeredSettings(file: ConfigFile()),
                               bcryptCost: UInt8 = 10) throws -> PostgresStore.Configuration {
        var configuration: PostgresStore.Configuration
        do {
            configuration = try PostgresStore.Configuration(url: url)
        } catch let error as PostgresStore.ConfigurationError {
            throw CLIError("Database URL: \(error.description).")
        }
        if let size = try settings.integer(databasePoolSize, env: "ROLO_DATABASE_POOL_SIZE", key: "database_pool_size") {
            guard size >= 1 else {
                throw settings.invalid("database_pool_size", flagGiven: databasePoolSize != nil, env: "ROLO_DATABASE_POOL_SIZE",
                                       "must be at least 1 (got \(size)).")
            }
            configuration.poolSize = size
        }
        if let seconds = try settings.integer(databaseStatementTimeout, env: "ROLO_DATABASE_STATEMENT_TIMEOUT",
                                              key: "database_statement_timeout") {
            guard seconds >= 0 else {
                throw settings.invalid("database_statement_timeout", flagGiven: databaseStatementTimeout != nil,
                                       env: "ROLO_DATABASE_STATEMENT_TIMEOUT", "must be 0 or more (got \(seconds)).")
            }
            configuration.statementTimeout = seconds == 0 ? nil : .seconds(seconds)
        }
        if let seconds = try settings.integer(databaseConnectionTimeout, env: "ROLO_DATABASE_CONNECTION_TIMEOUT",
                                              key: "database_connection_timeout") {
            guard seconds >= 1 else {
                throw settings.invalid("database_connection_timeout", flagGiven: databaseConnectionTimeout != nil,
                                       env: "ROLO_DATABASE_CONNECTION_TIMEOUT", "must be at least 1 (got \(seconds)).")
            }
            configuration.connectionTimeout = .seconds(seconds)
        }
        if let megabytes = try settings.integer(databaseCardCacheMB, env: "ROLO_DATABASE_CARD_CACHE_MB",
                                                key: "database_card_cache_mb") {
            guard (0...65_536).contains(megabytes) else {
                throw settings.invalid("database_card_cache_mb", flagGiven: databaseCardCacheMB != nil,
                                       env: "ROLO_DATABASE_CARD_CACHE_MB", "must be 0 to 65536 (got \(megabytes)).")
            }
            configuration.cardCacheBytes = megabytes << 20
        }
        configuration.bcryptCost = bcryptCost
        return configuration
    }

    /// Opens the store `location` names (default: the resolved one), migrating it. An SQLite
    /// file that does not exist is refused, naming the path looked at: a mistyped
    /// `--database` (or a command run from another folder) would otherwise get a new empty
    /// database and report success on it. `creating` (`serve`, `user add --create-database`)
    /// creates it instead, 0600 in a 0700 folder. PostgreSQL databases are never created: an
    /// empty one is migrated, a missing one fails to connect.
    func openStore(_ location: String? = nil, creating: Bool = false,
                   settings: LayeredSettings = LayeredSettings(file: ConfigFile()),
                   clock: StoreClock = .system, tuning: SQLiteStore.Tuning = .default) async throws -> OpenedStore {
        let location = location ?? resolvedPath
        if PostgresStore.Configuration.isDatabaseURL(location) {
            let configuration = try postgresConfiguration(url: location, settings: settings)
            do {
                return .postgres(try await PostgresStore.open(configuration, clock: clock))
            } catch StoreError.unavailable(let reason) {
                throw CLIError("Cannot reach the database \(configuration.description): \(reason).")
            }
        }
        try Self.requireDatabase(location, creating: creating)
        do {
            return .sqlite(try SQLiteStore(path: location, clock: clock, tuning: tuning))
        } catch let error as DatabaseFileError {
            throw CLIError(error.description)
        }
    }

    /// Throws `missingDatabase` for an SQLite file that does not exist, unless `creating`:
    /// commands that prompt for a password ask before the prompt, not after it.
    func requireDatabase(creating: Bool = false) throws {
        try Self.requireDatabase(resolvedPath, creating: creating)
    }

    static func requireDatabase(_ location: String, creating: Bool) throws {
        guard !creating, !PostgresStore.Configuration.isDatabaseURL(location),
              !FileManager.default.fileExists(atPath: location) else { return }
        throw missingDatabase(location)
    }

    /// "No database at PATH": the path as given and, when relative, where that is.
    static func missingDatabase(_ location: String) -> CLIError {
        let absolute = URL(fileURLWithPath: location).standardizedFileURL.path
        let shown = absolute == location ? location : "\(location) (\(absolute))"
        return CLIError("""
            No database at \(shown). Give the right one with --database or ROLO_DATABASE; \
            to set up a new one, run `rolo serve` or `rolo user add NAME --create-database`.
            """)
    }

    /// Runs `body` with the store open, then closes a PostgreSQL store (its connections) and,
    /// with `closingSQLite`, an SQLite one. Closing SQLite checkpoints its log, which waits
    /// (up to its busy timeout) for a running server's readers: the short admin commands
    /// leave that to the server and only the bulk ones (import, export) close.
    /// `creating` as for `openStore`. SQLite's errors about its file (read-only, disk full)
    /// come out in words naming the file.
    func withStore<T>(closingSQLite: Bool = false, creating: Bool = false,
                      _ body: (any RoloStore) async throws -> T) async throws -> T {
        let store = try await openStore(creating: creating)
        let closes: Bool
        if case .sqlite = store { closes = closingSQLite } else { closes = true }
        do {
            let result = try await body(store.store)
            if closes { try await store.close() }
            return result
        } catch {
            if closes { try? await store.close() }
            throw store.describingFileErrors(error)
        }
    }
}

/// A store a command opened, of either kind: what it shares (`store`) and how it closes.
enum OpenedStore {
    case sqlite(SQLiteStore)
    case postgres(PostgresStore)

    var store: any RoloStore {
        switch self {
        case .sqlite(let store): store
        case .postgres(let store): store
        }
    }

    func close() async throws {
        switch self {
        case .sqlite(let store): try store.close()
        case .postgres(let store): await store.close()
        }
    }

    /// An SQLite error about the file, as a `CLIError` naming it; other errors unchanged.
    func describingFileErrors(_ error: any Error) -> any Error {
        guard case .sqlite(let store) = self, let described = store.describingFileErrors(error) as? DatabaseFileError else {
            return error
        }
        return CLIError(described.description)
    }

    /// Each kind's own check of its invariants (`rolo check`).
    func integrityCheck() async throws -> [String] {
        switch self {
        case .sqlite(let store): try await store.integrityCheck()
        case .postgres(let store): try await store.integrityCheck()
        }
    }
}

enum Environment {
    /// A non-empty environment variable.
    static func value(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }
}
