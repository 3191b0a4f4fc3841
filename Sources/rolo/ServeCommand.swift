import ArgumentParser
import Foundation
import Logging
import RoloServer
import RoloSQLite
import RoloStore
import RoloTestControl
import RoloTesting
import WebPush

/// `rolo serve`: runs the CardDAV server until SIGTERM/SIGINT. Every setting comes from its
/// flag, else its `ROLO_*` environment variable, else the `--config` TOML file, else a default.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the CardDAV server.")

    @Option(help: "TOML file with any of the settings below in snake case (env ROLO_CONFIG).") var config: String?
    @Option(help: "Address to bind (env ROLO_HOST, default 127.0.0.1).") var host: String?
    @Option(help: "TCP port, 0 for any free one (env ROLO_PORT, default 8800; 0 with --ephemeral).") var port: Int?
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
    @Option(name: .customLong("auth-source"),
            help: "Where logins come from, tried in order: local, ldap, proxy or oidc; repeatable (env ROLO_AUTH_SOURCES, comma-separated, default local).")
    var authSources: [String] = []
    @Option(name: .customLong("proxy-user-header"),
            help: "Header a trusted proxy names the user in, e.g. Remote-User, for the proxy source (env ROLO_PROXY_USER_HEADER).")
    var proxyUserHeader: String?
    @Option(help: "PEM certificate (then any intermediates) that signs device profiles, with --profile-signing-key (env ROLO_PROFILE_SIGNING_CERTIFICATE).")
    var profileSigningCertificate: String?
    @Option(help: "PEM private key of --profile-signing-certificate (env ROLO_PROFILE_SIGNING_KEY).")
    var profileSigningKey: String?
    @Option(help: "Seconds a successful password login is remembered, so clients sync through a short directory outage; 0: off (env ROLO_AUTH_CACHE_SECONDS, default 300).")
    var authCacheSeconds: Int?
    @OptionGroup(title: "LDAP source (Docs/authentication.md)") var ldap: LDAPOptions
    @OptionGroup var oidc: OIDCOptions
    @Option(help: "trace, debug, info, notice, warning, error or critical (env ROLO_LOG_LEVEL, default info).")
    var logLevel: String?
    @Option(help: "text or json: one JSON object per line (env ROLO_LOG_FORMAT, default text).")
    var logFormat: String?
    @Option(help: "Largest vCard a client may PUT, in bytes (env ROLO_MAX_RESOURCE_SIZE, default 10485760).")
    var maxResourceSize: Int?
    @Option(help: "Largest other request body, in bytes (env ROLO_MAX_REQUEST_SIZE, default 4194304).")
    var maxRequestSize: Int?
    @Option(help: "Bytes of cards each user's own books may hold, over every write path (env ROLO_QUOTA_BYTES, default no quota).")
    var quotaBytes: Int64?
    @Option(name: .customLong("sqlite-writer-cache-kib"),
            help: "Page cache of the writer connection in KiB (env ROLO_SQLITE_WRITER_CACHE_KIB, default 16384).")
    var sqliteWriterCacheKiB: Int?
    @Option(name: .customLong("sqlite-reader-cache-kib"),
            help: "Page cache of each reader connection in KiB (env ROLO_SQLITE_READER_CACHE_KIB, default 4096).")
    var sqliteReaderCacheKiB: Int?
    @Option(name: .customLong("sqlite-mmap-bytes"),
            help: "Bytes of the database read through a memory map (env ROLO_SQLITE_MMAP_BYTES, default 0).")
    var sqliteMmapBytes: Int?
    @Option(name: .customLong("sqlite-readers"),
            help: "Reader connections at most (env ROLO_SQLITE_READERS, default 4).")
    var sqliteReaders: Int?
    @Option(help: "Failed logins per client subnet answered without delay (env ROLO_LOGIN_FREE_FAILURES, default 5).")
    var loginFreeFailures: Int?
    @Option(name: .customLong("login-delay-ms"),
            help: "First delay after the free failures, doubling each time (env ROLO_LOGIN_DELAY_MS, default 250).")
    var loginDelayMs: Int?
    @Option(name: .customLong("login-max-delay-ms"),
            help: "Longest delay of a failed login (env ROLO_LOGIN_MAX_DELAY_MS, default 10000).")
    var loginMaxDelayMs: Int?
    @Option(help: "Failures at the longest delay before a subnet gets 429 (env ROLO_LOGIN_CAPPED_FAILURES, default 10).")
    var loginCappedFailures: Int?
    @Option(help: "Seconds failures are remembered and a subnet gets 429 (env ROLO_LOGIN_WINDOW_SECONDS, default 1800).")
    var loginWindowSeconds: Int?
    @Option(help: "Failed logins per account, from anywhere, before they are delayed too (env ROLO_LOGIN_ACCOUNT_FREE_FAILURES, default 20).")
    var loginAccountFreeFailures: Int?
    @Option(help: "Days the hourly access history is kept before it is rolled into days (env ROLO_ACCESS_HISTORY_HOURLY_DAYS, default 30).")
    var accessHistoryHourlyDays: Int?
    @Option(help: "Days the daily access history is kept (env ROLO_ACCESS_HISTORY_DAILY_DAYS, default 396, about 13 months).")
    var accessHistoryDailyDays: Int?
    @Option(help: "Days card versions are kept (env ROLO_HISTORY_DAYS, default 90).")
    var historyDays: Int?
    @Option(help: "Versions of each card kept whatever their age (env ROLO_HISTORY_VERSIONS, default 10).")
    var historyVersions: Int?
    @Option(help: "on or off: WebDAV-Push, which needs --public-url (env ROLO_PUSH, default on).")
    var push: String?
    @Option(name: .customLong("web-ui"),
            help: "on or off: the web UI at /web/, where browsers asking for / are sent (env ROLO_WEB_UI, default on).")
    var webUI: String?
    @OptionGroup(title: "Directory (Docs/directory.md)") var directory: DirectoryOptions
    @Option(name: .customLong("directory-opt-out"),
            help: "on or off: users may leave the directory themselves on My card; off, only an admin takes them out (env ROLO_DIRECTORY_OPT_OUT, default on).")
    var directoryOptOut: String?
    @Option(help: "Most cards one addressbook-query on the directory answers, with number-of-matches-within-limits beyond (env ROLO_DIRECTORY_QUERY_LIMIT, default 200).")
    var directoryQueryLimit: Int?
    @Option(name: .customLong("push-subject"),
            help: "VAPID contact sent to push services, mailto: or https: (env ROLO_PUSH_SUBJECT, default the public URL).")
    var pushSubject: String?
    @Option(name: .customLong("push-allowed-origin"),
            help: "Push service origin allowed for registrations, e.g. https://ntfy.example.org; repeatable; default any public one (env ROLO_PUSH_ALLOWED_ORIGINS, comma-separated).")
    var pushAllowedOrigins: [String] = []
    @Option(name: .customLong("push-registrations-per-book"),
            help: "Live push registrations one user may hold on one book (env ROLO_PUSH_REGISTRATIONS_PER_BOOK, default 20).")
    var pushRegistrationsPerBook: Int?
    @Flag(name: .customLong("push-allow-loopback"),
          help: "Tests only: let push registrations point at http://127.0.0.1 (logged as a warning).")
    var pushAllowLoopback = false
    @Flag(help: "Throwaway database in a temporary file, removed on exit; prints the JSON start line.")
    var ephemeral = false
    @Option(name: .customLong("fixtures"),
            help: "Folder of DIR/<user>/<book>/*.vcf (and DIR/<user>/password) loaded at start; repeatable.")
    var fixtureFolders: [String] = []
    @Flag(help: "Turn on the /_rolo/ test-control API; its bearer token is in the JSON start line.")
    var testAPI = false
    @Flag(help: "Fixed clock and counter-based lock tokens: the same requests give byte-identical answers.")
    var deterministic = false

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
            throw settings.invalid("log_level", flagGiven: logLevel != nil, env: "ROLO_LOG_LEVEL",
                                   "must be trace, debug, info, notice, warning, error or critical (got \(levelName)).")
        }
        // An ephemeral server is for harnesses: any free port unless one is asked for.
        let portValue = try settings.integer(port, env: "ROLO_PORT", key: "port") ?? (ephemeral ? 0 : 8800)
        guard (0...65535).contains(portValue) else {
            throw settings.invalid("port", flagGiven: port != nil, env: "ROLO_PORT", "must be 0 to 65535 (got \(portValue)).")
        }
        var limits = RequestLimits()
        if let size = try settings.integer(maxResourceSize, env: "ROLO_MAX_RESOURCE_SIZE", key: "max_resource_size") {
            limits.maxResourceSize = size
        }
        if let size = try settings.integer(maxRequestSize, env: "ROLO_MAX_REQUEST_SIZE", key: "max_request_size") {
            limits.maxRequestBodySize = size
        }
        limits.quotaBytes = try QuotaSetting.bytes(flag: quotaBytes, settings: settings)
        var url: URL?
        if let text = settings.string(publicURL, env: "ROLO_PUBLIC_URL", key: "public_url") {
            guard let parsed = URL(string: text), let scheme = parsed.scheme, ["http", "https"].contains(scheme),
                  parsed.host != nil else {
                throw settings.invalid("public_url", flagGiven: publicURL != nil, env: "ROLO_PUBLIC_URL",
                                       "must be an absolute http(s) URL (got \(text)).")
            }
            url = parsed
        }
        var configuration = ServerConfiguration(
            host: settings.string(host, env: "ROLO_HOST", key: "host") ?? "127.0.0.1",
            port: portValue,
            databasePath: database.resolvedPath(configured: settings.file.string("database")),
            basePath: settings.string(basePath, env: "ROLO_BASE_PATH", key: "base_path") ?? "/dav",
            logLevel: level,
            limits: limits,
            proxyPrefix: settings.string(proxyPrefix, env: "ROLO_PROXY_PREFIX", key: "proxy_prefix") ?? "",
            publicURL: url,
            trustedProxies: Set(settings.list(trustedProxies, env: "ROLO_TRUSTED_PROXIES", key: "trusted_proxies")),
            loginThrottle: try loginThrottle(settings))
        configuration.accessRetention = try accessRetention(settings)
        configuration.historyRetention = try historyRetention(settings)
        configuration.push = try pushSettings(settings)
        switch settings.string(webUI, env: "ROLO_WEB_UI", key: "web_ui") ?? "on" {
        case "on": configuration.webUI = true
        case "off": configuration.webUI = false
        case let other:
            throw settings.invalid("web_ui", flagGiven: webUI != nil, env: "ROLO_WEB_UI", "must be on or off (got \(other)).")
        }
        let chosen = try directory.read(settings)
        configuration.directory = chosen.mode
        configuration.directoryGroups = chosen.groups
        configuration.directoryExcludeGroups = chosen.excludedGroups
        configuration.directoryFields = chosen.fields
        switch settings.string(directoryOptOut, env: "ROLO_DIRECTORY_OPT_OUT", key: "directory_opt_out") ?? "on" {
        case "on": configuration.directoryOptOut = true
        case "off": configuration.directoryOptOut = false
        case let other:
            throw settings.invalid("directory_opt_out", flagGiven: directoryOptOut != nil, env: "ROLO_DIRECTORY_OPT_OUT",
                                   "must be on or off (got \(other)).")
        }
        if let limit = try settings.integer(directoryQueryLimit, env: "ROLO_DIRECTORY_QUERY_LIMIT", key: "directory_query_limit") {
            guard limit >= 1 else {
                throw settings.invalid("directory_query_limit", flagGiven: directoryQueryLimit != nil, env: "ROLO_DIRECTORY_QUERY_LIMIT",
                                       "must be at least 1 (got \(limit)).")
            }
            configuration.directoryQueryLimit = limit
        }
        try authenticationSettings(settings, into: &configuration)
        try directory.checkSource(chosen, fromLDAP: configuration.authSources.contains(.ldap), settings: settings)
        configuration.profileSigner = try ProfileSigning.signer(settings, certificate: profileSigningCertificate, key: profileSigningKey)
        return configuration
    }

    /// `auth_sources`, `proxy_user_header`, `auth_cache_seconds` and the `ldap_*` settings: an
    /// unknown source, `proxy` without a header name or a trusted proxy to believe it from, or
    /// `ldap` without a usable directory setting, stops serve naming the setting.
    func authenticationSettings(_ settings: LayeredSettings, into configuration: inout ServerConfiguration) throws {
        let names = settings.list(authSources, env: "ROLO_AUTH_SOURCES", key: "auth_sources")
        let known = AuthenticationSourceKind.allCases.map(\.rawValue).joined(separator: ", ")
        var sources: [AuthenticationSourceKind] = []
        for name in names {
            guard let source = AuthenticationSourceKind(rawValue: name) else {
                throw settings.invalid("auth_sources", flagGiven: !authSources.isEmpty, env: "ROLO_AUTH_SOURCES",
                                       flag: "--auth-source", "names an unknown source \"\(name)\" (known: \(known)).")
            }
            if !sources.contains(source) { sources.append(source) }
        }
        configuration.authSources = sources.isEmpty ? [.local] : sources
        let header = settings.string(proxyUserHeader, env: "ROLO_PROXY_USER_HEADER", key: "proxy_user_header")
        if let header, !AuthenticationSourceKind.isHeaderName(header) {
            throw settings.invalid("proxy_user_header", flagGiven: proxyUserHeader != nil, env: "ROLO_PROXY_USER_HEADER",
                                   "must be a header name, e.g. Remote-User (got \(header)).")
        }
        configuration.proxyUserHeader = header
        configuration.ldap = try ldap.settings(settings, needed: configuration.authSources.contains(.ldap))
        if let seconds = try settings.integer(authCacheSeconds, env: "ROLO_AUTH_CACHE_SECONDS", key: "auth_cache_seconds") {
            guard (0...86_400).contains(seconds) else {
                throw settings.invalid("auth_cache_seconds", flagGiven: authCacheSeconds != nil, env: "ROLO_AUTH_CACHE_SECONDS",
                                       "must be 0 to 86400 (got \(seconds)).")
            }
            configuration.credentialCacheLifetime = .seconds(seconds)
        }
        if configuration.authSources.contains(.proxy) {
            guard header != nil else {
                throw settings.invalid("auth_sources", flagGiven: !authSources.isEmpty, env: "ROLO_AUTH_SOURCES",
                                       flag: "--auth-source", "lists proxy, which needs proxy_user_header.")
            }
            guard !configuration.trustedProxies.isEmpty else {
                throw settings.invalid("auth_sources", flagGiven: !authSources.isEmpty, env: "ROLO_AUTH_SOURCES",
                                       flag: "--auth-source", "lists proxy, which needs trusted_proxies.")
            }
        }
        configuration.oidcSettings = try oidc.settings(settings, sourceListed: configuration.authSources.contains(.oidc),
                                                       authSourcesFlagGiven: !authSources.isEmpty)
    }

    func pushSettings(_ settings: LayeredSettings) throws -> PushSettings {
        var push = PushSettings()
        switch settings.string(self.push, env: "ROLO_PUSH", key: "push") ?? "on" {
        case "on": push.enabled = true
        case "off": push.enabled = false
        case let other:
            throw settings.invalid("push", flagGiven: self.push != nil, env: "ROLO_PUSH", "must be on or off (got \(other)).")
        }
        if let subject = settings.string(pushSubject, env: "ROLO_PUSH_SUBJECT", key: "push_subject") {
            guard subject.hasPrefix("mailto:") || subject.hasPrefix("https:") else {
                throw settings.invalid("push_subject", flagGiven: pushSubject != nil, env: "ROLO_PUSH_SUBJECT",
                                       "must be a mailto: or https: URI (got \(subject)).")
            }
            push.subject = subject
        }
        let origins = settings.list(pushAllowedOrigins, env: "ROLO_PUSH_ALLOWED_ORIGINS", key: "push_allowed_origins")
        if !origins.isEmpty {
            push.allowedOrigins = try origins.map { text in
                guard let url = URL(string: text), let origin = VAPIDKey.origin(of: url), url.path.isEmpty || url.path == "/" else {
                    throw settings.invalid("push_allowed_origins", flagGiven: !pushAllowedOrigins.isEmpty,
                                           env: "ROLO_PUSH_ALLOWED_ORIGINS", flag: "--push-allowed-origin",
                                           "must be origins like https://push.example.org (got \(text)).")
                }
                return origin
            }
        }
        if let count = try settings.integer(pushRegistrationsPerBook, env: "ROLO_PUSH_REGISTRATIONS_PER_BOOK",
                                            key: "push_registrations_per_book") {
            guard count >= 1 else {
                throw settings.invalid("push_registrations_per_book", flagGiven: pushRegistrationsPerBook != nil,
                                       env: "ROLO_PUSH_REGISTRATIONS_PER_BOOK", "must be at least 1 (got \(count)).")
            }
            push.registrationsPerBook = count
        }
        push.allowLoopback = pushAllowLoopback
        return push
    }

    /// How long card versions are kept: `history_days`, and each card's last `history_versions` whatever their age.
    func historyRetention(_ settings: LayeredSettings) throws -> HistoryRetention {
        var retention = HistoryRetention.default
        if let days = try settings.integer(historyDays, env: "ROLO_HISTORY_DAYS", key: "history_days") {
            guard days >= 0 else {
                throw settings.invalid("history_days", flagGiven: historyDays != nil, env: "ROLO_HISTORY_DAYS",
                                       "must be at least 0 (got \(days)).")
            }
            retention.days = days
        }
        if let count = try settings.integer(historyVersions, env: "ROLO_HISTORY_VERSIONS", key: "history_versions") {
            guard count >= 1 else {
                throw settings.invalid("history_versions", flagGiven: historyVersions != nil, env: "ROLO_HISTORY_VERSIONS",
                                       "must be at least 1 (got \(count)).")
            }
            retention.versions = count
        }
        return retention
    }

    /// How long the access history is kept: hourly rows, then daily ones (at least as long).
    func accessRetention(_ settings: LayeredSettings) throws -> AccessRetention {
        let day: TimeInterval = 86_400
        var retention = AccessRetention.default
        if let days = try settings.integer(accessHistoryHourlyDays, env: "ROLO_ACCESS_HISTORY_HOURLY_DAYS",
                                           key: "access_history_hourly_days") {
            guard days >= 1 else {
                throw settings.invalid("access_history_hourly_days", flagGiven: accessHistoryHourlyDays != nil,
                                       env: "ROLO_ACCESS_HISTORY_HOURLY_DAYS", "must be at least 1 (got \(days)).")
            }
            retention.hourly = Double(days) * day
        }
        if let days = try settings.integer(accessHistoryDailyDays, env: "ROLO_ACCESS_HISTORY_DAILY_DAYS",
                                           key: "access_history_daily_days") {
            guard Double(days) * day >= retention.hourly else {
                throw settings.invalid("access_history_daily_days", flagGiven: accessHistoryDailyDays != nil,
                                       env: "ROLO_ACCESS_HISTORY_DAILY_DAYS",
                                       "must be at least access_history_hourly_days (got \(days)).")
            }
            retention.daily = Double(days) * day
        }
        return retention
    }

    /// The failed-login throttle: each setting from its flag, variable or key, else the default.
    func loginThrottle(_ settings: LayeredSettings) throws -> LoginThrottleSettings {
        var throttle = LoginThrottleSettings()
        func read(_ flag: Int?, _ env: String, _ key: String, minimum: Int) throws -> Int? {
            guard let value = try settings.integer(flag, env: env, key: key) else { return nil }
            guard value >= minimum else {
                throw settings.invalid(key, flagGiven: flag != nil, env: env, "must be at least \(minimum) (got \(value)).")
            }
            return value
        }
        if let count = try read(loginFreeFailures, "ROLO_LOGIN_FREE_FAILURES", "login_free_failures", minimum: 0) {
            throttle.freeFailures = count
        }
        if let ms = try read(loginDelayMs, "ROLO_LOGIN_DELAY_MS", "login_delay_ms", minimum: 0) {
            throttle.baseDelay = .milliseconds(ms)
        }
        if let ms = try read(loginMaxDelayMs, "ROLO_LOGIN_MAX_DELAY_MS", "login_max_delay_ms", minimum: 0) {
            throttle.maxDelay = .milliseconds(ms)
        }
        if let count = try read(loginCappedFailures, "ROLO_LOGIN_CAPPED_FAILURES", "login_capped_failures", minimum: 0) {
            throttle.cappedFailures = count
        }
        if let seconds = try read(loginWindowSeconds, "ROLO_LOGIN_WINDOW_SECONDS", "login_window_seconds", minimum: 1) {
            throttle.window = .seconds(seconds)
        }
        if let count = try read(loginAccountFreeFailures, "ROLO_LOGIN_ACCOUNT_FREE_FAILURES",
                                "login_account_free_failures", minimum: 0) {
            throttle.accountFreeFailures = count
        }
        return throttle
    }

    /// SQLite cache, map and reader-pool sizes: the defaults keep a 100,000-card server
    /// under 100 MiB; a large deployment with memory to spare may raise them.
    func storeTuning(_ settings: LayeredSettings) throws -> SQLiteStore.Tuning {
        var tuning = SQLiteStore.Tuning.default
        func read(_ flag: Int?, _ env: String, _ key: String, minimum: Int) throws -> Int? {
            guard let value = try settings.integer(flag, env: env, key: key) else { return nil }
            guard value >= minimum else {
                throw settings.invalid(key, flagGiven: flag != nil, env: env, "must be at least \(minimum) (got \(value)).")
            }
            return value
        }
        if let kib = try read(sqliteWriterCacheKiB, "ROLO_SQLITE_WRITER_CACHE_KIB", "sqlite_writer_cache_kib", minimum: 0) {
            tuning.writerCacheKiB = kib
        }
        if let kib = try read(sqliteReaderCacheKiB, "ROLO_SQLITE_READER_CACHE_KIB", "sqlite_reader_cache_kib", minimum: 0) {
            tuning.readerCacheKiB = kib
        }
        if let bytes = try read(sqliteMmapBytes, "ROLO_SQLITE_MMAP_BYTES", "sqlite_mmap_bytes", minimum: 0) {
            tuning.mmapBytes = bytes
        }
        if let readers = try read(sqliteReaders, "ROLO_SQLITE_READERS", "sqlite_readers", minimum: 1) {
            tuning.maximumReaders = readers
        }
        return tuning
    }

    func resolvedLogFormat(_ settings: LayeredSettings) throws -> LogFormat {
        let name = settings.string(logFormat, env: "ROLO_LOG_FORMAT", key: "log_format") ?? "text"
        guard let format = LogFormat(rawValue: name) else {
            throw settings.invalid("log_format", flagGiven: logFormat != nil, env: "ROLO_LOG_FORMAT",
                                   "must be text or json (got \(name)).")
        }
        return format
    }

    /// With `--ephemeral` or port 0 a harness reads the first stdout line as JSON, so every
    /// human-readable line goes to stderr instead.
    func isMachineReadable(_ configuration: ServerConfiguration) -> Bool {
        ephemeral || configuration.port == 0
    }

    func run() async throws {
        if ephemeral, database.database != nil {
            throw ValidationError("--ephemeral uses a temporary database: drop --database.")
        }
        // The folds' tables are built on another core while the store opens, not by the
        // first requests that fold a name (which waited for them, issue 34).
        Task.detached(priority: .medium) { CaseFolding.prepareTables() }
        let settings = try settings()
        var configuration = try configurationFromOptions(settings)
        configuration.oidc = try await oidc.discover(configuration.oidcSettings, settings)
        let format = try resolvedLogFormat(settings)
        let logLevel = configuration.logLevel
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = logLevel
                return DeferredMetadataLogHandler(handler)
            case .json:
                return JSONLogHandler(label: label, logLevel: logLevel)
            }
        }
        let machineReadable = isMachineReadable(configuration)
        let say = humanOutput(machineReadable: machineReadable, format: format)
        // Every fixture is read and validated before the store is opened or changed.
        let loading = ContinuousClock.now
        let fixtures: [FixtureSet]
        do {
            fixtures = try fixtureFolders.map(FixtureSet.init(directory:))
        } catch let error as FixtureError {
            throw CLIError("Fixture \(error)")
        }
        let clock = TestServerSetup.clock(deterministic: deterministic)
        let tuning = try storeTuning(settings)
        let opened: OpenedStore = ephemeral
            ? .sqlite(try TestServerSetup.ephemeralStore(deterministic: deterministic))
            : try await database.openStore(configuration.databasePath, creating: true, settings: settings, clock: clock, tuning: tuning)
        let store = opened.store
        let logger = Logger(label: "rolo")
        if case .sqlite(let sqlite) = opened, PrivateFiles.isReadableByOthers(sqlite.path) {
            logger.warning("\(sqlite.path) is readable by other accounts on this machine: it holds everyone's contacts and the server's keys. Make it private with: chmod 600 \(sqlite.path)*")
        }
        if !Self.isLoopback(configuration.host) {
            logger.warning("Listening on \(configuration.host) over plain HTTP: passwords travel in clear. Serve on 127.0.0.1 behind a TLS proxy instead (the nginx recipe: deploy/nginx-rolo.conf, see Docs/operations.md).")
        }
        do {
            if case .sqlite(let sqlite) = opened { configuration.databasePath = sqlite.path }
            configuration.deterministic = deterministic
            // On a first start (no fixtures) the `admin` user is created once the port is
            // bound: a start that cannot bind must not create a user whose password nobody saw.
            let createsAdminWhenListening = fixtures.isEmpty && !ephemeral
            let loaded = createsAdminWhenListening ? nil : try await TestServerSetup.populate(store, fixtures: fixtures)
            if !fixtures.isEmpty {
                let cards = fixtures.reduce(0) { $0 + $1.cardCount }
                let elapsed = ContinuousClock.now - loading
                say("Loaded \(cards) fixture cards in \(elapsed.milliseconds) ms")
            }
            let token = testAPI ? TestServerSetup.randomToken() : nil
            configuration.testAPI = token.map { TestAPIConfiguration(token: $0, fixtures: fixtures) }
            let server = try await RoloServer.make(configuration: configuration, store: store)
            do {
                try await server.run { [configuration] port in
                    let url = Self.baseURL(host: configuration.host, port: port, basePath: configuration.basePath)
                    let webURL = Self.baseURL(host: configuration.host, port: port, basePath: "/web")
                    var credentials = loaded
                    if createsAdminWhenListening {
                        do {
                            credentials = try await TestServerSetup.populate(store, fixtures: [])
                        } catch {
                            logger.error("Could not create the first user admin: \(opened.describingFileErrors(error))")
                        }
                    }
                    say("Rolo listening on \(url)")
                    if configuration.webUI { say("Web UI at \(webURL)") }
                    if let credentials, credentials.created, createsAdminWhenListening {
                        say("""
                            Created user admin with password: \(credentials.password)
                            admin is an administrator\(configuration.webUI ? " (the admin page: \(webURL)admin)" : "").
                            Write it down: it is not shown again (change it with `rolo user passwd admin`).
                            """)
                    }
                    // Last: a harness takes this line as "ready", with the lines above already written.
                    if machineReadable {
                        printUnbuffered(StartLine(url: url, port: port, credentials: credentials, testAPIToken: token,
                                                  webURL: configuration.webUI ? webURL : nil).json)
                    }
                }
            } catch {
                throw Self.bindFailure(error, host: configuration.host, port: configuration.port) ?? error
            }
        } catch {
            try? await opened.close()
            throw opened.describingFileErrors(error)
        }
        try await opened.close()
    }

    /// Whether `host` reaches this machine only: 127.0.0.0/8, ::1 or localhost.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// A port or address that cannot be bound, in words, instead of NIO's
    /// `bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)`; nil for any other
    /// error. Read from that text: `rolo` does not depend on NIO for its `IOError`.
    static func bindFailure(_ error: any Error, host: String, port: Int) -> CLIError? {
        let text = String(describing: error)
        guard text.hasPrefix("bind("), let match = text.firstMatch(of: /\(errno: ([0-9]+)\)/),
              let code = Int32(match.1) else {
            return nil
        }
        switch code {
        case EADDRINUSE: return CLIError("port \(port) is in use; choose another with --port.")
        case EACCES: return CLIError("port \(port) needs privileges to bind; choose one above 1023 with --port.")
        case EADDRNOTAVAIL: return CLIError("\(host) is not an address of this machine; choose another with --host.")
        default: return nil
        }
    }

    /// Where lines meant for a person go: stdout normally; stderr when stdout carries the JSON
    /// start line (as a log record when logs are JSON, so stderr stays one JSON object a line).
    func humanOutput(machineReadable: Bool, format: LogFormat) -> @Sendable (String) -> Void {
        guard machineReadable else { return printUnbuffered }
        if format == .json {
            let logger = Logger(label: "rolo")
            return { line in logger.notice("\(line)") }
        }
        return { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
    }

    static func baseURL(host: String, port: Int, basePath: String) -> String {
        let authority = host.contains(":") ? "[\(host)]" : host
        return "http://\(authority):\(port)\(basePath)/"
    }
}

/// The first stdout line of a machine-readable start: what a harness needs to connect.
/// `password` only when this start created the user; `test_api_token` only with --test-api;
/// `web_url` when the web UI is on.
struct StartLine: Encodable {
    var url: String
    var port: Int
    var username: String?
    var password: String?
    var testAPIToken: String?
    var webURL: String?

    init(url: String, port: Int, credentials: Credentials?, testAPIToken: String?, webURL: String? = nil) {
        self.url = url; self.port = port
        username = credentials?.username
        password = credentials.flatMap { $0.created ? $0.password : nil }
        self.testAPIToken = testAPIToken
        self.webURL = webURL
    }

    enum CodingKeys: String, CodingKey {
        case url, port, username, password
        case testAPIToken = "test_api_token"
        case webURL = "web_url"
    }

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}

extension Duration {
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}

/// Writes a line to stdout at once: scripts and tests wait for these lines on a pipe,
/// where `print` would sit in a buffer.
func printUnbuffered(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
