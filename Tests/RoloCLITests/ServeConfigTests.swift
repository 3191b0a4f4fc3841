import Foundation
import Testing
import RoloServer
import RoloStore
@testable import rolo

/// `rolo serve --config FILE`: flag > environment > file > default, strict keys and types,
/// and the operator-facing outputs the file can switch on (JSON logs, trusted proxies).
@Suite struct ServeConfigTests {
    static func writeConfig(_ text: String, in folder: URL) throws -> String {
        let file = folder.appendingPathComponent("rolo.toml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    /// The base path from the start line's URL, "http://127.0.0.1:PORT/BASE/".
    static func listeningBasePath(_ serve: ServeProcess) -> String? {
        serve.startLine?.url.firstMatch(of: /^http:\/\/127\.0\.0\.1:[0-9]+(\S*)\/$/).map { String($0.1) }
    }

    static func jsonObject(_ line: String?) throws -> [String: Any] {
        let text = try #require(line)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func flagBeatsEnvironmentBeatsFileBeatsDefault() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try Self.writeConfig("""
            port = 0
            database = "\(database)"
            base_path = "/from-file"
            log_level = "warning"
            host = "127.0.0.1"
            """, in: folder)

        // File only: its port, database and base path apply.
        let fileOnly = try ServeProcess(arguments: ["serve", "--config", config])
        let port = try await fileOnly.waitUntilListening()
        #expect(port > 0)
        #expect(Self.listeningBasePath(fileOnly) == "/from-file")
        #expect(FileManager.default.fileExists(atPath: database))
        #expect(await fileOnly.terminate() == 0)

        // Environment beats the file.
        let fromEnvironment = try ServeProcess(arguments: ["serve", "--config", config],
                                               environment: ["ROLO_BASE_PATH": "/from-env"])
        _ = try await fromEnvironment.waitUntilListening()
        #expect(Self.listeningBasePath(fromEnvironment) == "/from-env")
        #expect(await fromEnvironment.terminate() == 0)

        // The flag beats both.
        let fromFlag = try ServeProcess(arguments: ["serve", "--config", config, "--base-path", "/from-flag"],
                                        environment: ["ROLO_BASE_PATH": "/from-env"])
        _ = try await fromFlag.waitUntilListening()
        #expect(Self.listeningBasePath(fromFlag) == "/from-flag")
        #expect(await fromFlag.terminate() == 0)
    }

    @Test func unknownKeyOrWrongTypeStopsServeNamingTheKey() async throws {
        let (folder, _) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let typo = try await RoloBinary.run(["serve", "--config", try Self.writeConfig("prot = 8800\n", in: folder)])
        #expect(typo.status != 0)
        #expect(typo.stderr.contains("unknown key \"prot\""))

        let wrongType = try await RoloBinary.run(["serve", "--config", try Self.writeConfig("port = \"80\"\n", in: folder)])
        #expect(wrongType.status != 0)
        #expect(wrongType.stderr.contains("\"port\" must be an integer"))

        let broken = try await RoloBinary.run(["serve", "--config", try Self.writeConfig("port = = 1\n", in: folder)])
        #expect(broken.status != 0)
        #expect(broken.stderr.contains("line 1"))
    }

    @Test func anUnknownAuthSourceStopsServeNamingTheSetting() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try Self.writeConfig("auth_sources = [\"nope\"]\n", in: folder)
        let result = try await RoloBinary.run(["serve", "--config", config, "--database", database])
        #expect(result.status == 1)
        #expect(result.stderr.contains("auth_sources names an unknown source \"nope\""), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: database))

        let proxyAlone = try await RoloBinary.run(["serve", "--auth-source", "proxy", "--database", database])
        #expect(proxyAlone.status == 1)
        #expect(proxyAlone.stderr.contains("auth_sources lists proxy, which needs proxy_user_header"), "\(proxyAlone.stderr)")
    }

    /// A signing file that does not load, or one setting without the other, stops serve
    /// before the database is made, naming the setting and where it was set.
    @Test func aBadProfileSigningFileStopsServeNamingTheSetting() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let junk = folder.appendingPathComponent("junk.pem").path
        try "not a certificate\n".write(toFile: junk, atomically: true, encoding: .utf8)
        let config = try Self.writeConfig("profile_signing_certificate = \"\(junk)\"\nprofile_signing_key = \"\(junk)\"\n", in: folder)
        let inFile = try await RoloBinary.run(["serve", "--config", config, "--database", database])
        #expect(inFile.status == 1)
        #expect(inFile.stderr.contains("profile_signing_certificate holds no PEM certificate; it was set in \(config)."), "\(inFile.stderr)")
        #expect(!FileManager.default.fileExists(atPath: database))
        let alone = try await RoloBinary.run(["serve", "--profile-signing-key", junk, "--database", database])
        #expect(alone.status == 1)
        #expect(alone.stderr.contains("profile_signing_key needs profile_signing_certificate beside it; it was set by --profile-signing-key."),
                "\(alone.stderr)")
    }

    @Test func aBadOIDCSettingStopsServeNamingTheSettingBeforeTheStoreIsTouched() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = ["serve", "--database", database, "--auth-source", "oidc"]
        let noIssuer = try await RoloBinary.run(base + ["--oidc-client-id", "rolo"])
        #expect(noIssuer.status == 1 && noIssuer.stderr.contains("lists oidc, which needs oidc_issuer"), "\(noIssuer.stderr)")
        let plain = try await RoloBinary.run(base + ["--oidc-issuer", "http://id.example.org", "--oidc-client-id", "rolo"])
        #expect(plain.status == 1 && plain.stderr.contains("oidc_issuer must be https"), "\(plain.stderr)")
        let noClient = try await RoloBinary.run(base + ["--oidc-issuer", "https://id.example.org"])
        #expect(noClient.status == 1 && noClient.stderr.contains("needs oidc_client_id"), "\(noClient.stderr)")
        let secretPath = folder.appendingPathComponent("secret").path
        let config = try Self.writeConfig("""
            auth_sources = ["oidc"]
            oidc_issuer = "http://127.0.0.1:1/realm"
            oidc_client_id = "rolo"
            oidc_client_secret_file = "\(secretPath)"
            """, in: folder)
        let secret = try await RoloBinary.run(["serve", "--config", config, "--database", database])
        #expect(secret.status == 1, "\(secret.stderr)")
        #expect(secret.stderr.contains("oidc_client_secret_file cannot be read"), "\(secret.stderr)")
        #expect(secret.stderr.contains("it was set in"), "\(secret.stderr)")
        // Nothing listens on port 1: discovery fails, and serve names the issuer.
        try Data("s3cret\n".utf8).write(to: URL(fileURLWithPath: secretPath))
        let discovery = try await RoloBinary.run(["serve", "--config", config, "--database", database])
        #expect(discovery.status == 1 && discovery.stderr.contains("oidc_issuer names a provider whose discovery failed"),
                "\(discovery.stderr)")
        #expect(!FileManager.default.fileExists(atPath: database))
    }

    @Test func aBadValueNamesItsKeyAndWhereItWasSetAndExits1WithoutUsage() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try Self.writeConfig("web_ui = \"maybe\"\n", in: folder)
        let inFile = try await RoloBinary.run(["serve", "--config", config, "--database", database])
        #expect(inFile.status == 1)
        #expect(inFile.stderr.contains("web_ui must be on or off (got maybe); it was set in \(config)."), "\(inFile.stderr)")
        #expect(!inFile.stderr.contains("USAGE"))
        #expect(!FileManager.default.fileExists(atPath: database))

        let inEnvironment = try await RoloBinary.run(executable: "/usr/bin/env", ["ROLO_LOG_FORMAT=yaml", RoloBinary.url.path,
                                                                                   "serve", "--database", database])
        #expect(inEnvironment.status == 1)
        #expect(inEnvironment.stderr.contains("log_format must be text or json (got yaml); it was set by ROLO_LOG_FORMAT."),
                "\(inEnvironment.stderr)")
        #expect(!inEnvironment.stderr.contains("USAGE"))

        let byFlag = try await RoloBinary.run(["serve", "--port", "70000", "--database", database])
        #expect(byFlag.status == 1)
        #expect(byFlag.stderr.contains("port must be 0 to 65535 (got 70000); it was set by --port."), "\(byFlag.stderr)")
        #expect(!byFlag.stderr.contains("USAGE"))
    }

    @Test func configFileReadsEveryServeKey() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try ConfigFile(path: Self.writeConfig("""
            host = "127.0.0.1"
            port = 8801
            database = "/tmp/x.sqlite"
            database_pool_size = 6
            database_statement_timeout = 12
            database_connection_timeout = 3
            database_card_cache_mb = 16
            base_path = "/dav"
            proxy_prefix = "/carddav"
            public_url = "https://example.org/carddav"
            trusted_proxies = ["127.0.0.1", "::1"]
            log_level = "debug"
            log_format = "json"
            max_resource_size = 2048
            max_request_size = 4096
            quota_bytes = 1048576
            sqlite_writer_cache_kib = 32768
            sqlite_reader_cache_kib = 2048
            sqlite_mmap_bytes = 0
            sqlite_readers = 2
            login_free_failures = 3
            login_delay_ms = 100
            login_max_delay_ms = 2000
            login_capped_failures = 4
            login_window_seconds = 600
            login_account_free_failures = 30
            auth_sources = ["proxy", "local"]
            proxy_user_header = "Remote-User"
            """, in: folder))
        #expect(file.integer("port") == 8801)
        #expect(file.list("trusted_proxies") == ["127.0.0.1", "::1"])
        #expect(file.string("public_url") == "https://example.org/carddav")
        #expect(file.integer("max_request_size") == 4096)
        #expect(file.integer("sqlite_readers") == 2)
        #expect(file.integer("login_window_seconds") == 600)
        #expect(file.integer("database_pool_size") == 6)
        #expect(file.integer("quota_bytes") == 1_048_576)
        #expect(file.list("auth_sources") == ["proxy", "local"])
        #expect(file.string("proxy_user_header") == "Remote-User")
        #expect(file.integer("database_card_cache_mb") == 16)
        #expect(Set(ConfigFile.keys.keys).count == 73)
    }

    /// The PostgreSQL settings come from the flag, else the variable, else the config file.
    @Test func databaseSettingsForPostgreSQLComeFromFlagsOrTheFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let settings = LayeredSettings(file: try ConfigFile(path: Self.writeConfig("""
            database = "postgresql://rolo:s%40cret@db.example:6543/rolo?sslmode=require"
            database_pool_size = 6
            database_statement_timeout = 0
            database_connection_timeout = 3
            database_card_cache_mb = 16
            """, in: folder)))
        let url = try #require(settings.file.string("database"))
        let fromFile = try DatabaseOptions.parse([]).postgresConfiguration(url: url, settings: settings)
        #expect(fromFile.host == "db.example" && fromFile.port == 6543 && fromFile.password == "s@cret" && fromFile.tls == .require)
        #expect(fromFile.poolSize == 6 && fromFile.statementTimeout == nil && fromFile.connectionTimeout == .seconds(3))
        #expect(fromFile.cardCacheBytes == 16 << 20)
        let fromFlags = try DatabaseOptions.parse(["--database-pool-size", "2", "--database-statement-timeout", "5",
                                                   "--database-card-cache-mb", "0"])
            .postgresConfiguration(url: url, settings: settings)
        #expect(fromFlags.poolSize == 2 && fromFlags.statementTimeout == .seconds(5) && fromFlags.cardCacheBytes == 0)
        #expect(try DatabaseOptions.parse([]).postgresConfiguration(url: url).cardCacheBytes == 64 << 20)
        #expect(throws: CLIError.self) {
            try DatabaseOptions.parse(["--database-card-cache-mb=-1"]).postgresConfiguration(url: url)
        }
        #expect(throws: CLIError.self) { try DatabaseOptions.parse(["--database-pool-size", "0"]).postgresConfiguration(url: url) }
        #expect(throws: CLIError.self) { try DatabaseOptions.parse([]).postgresConfiguration(url: "postgresql://db.example/rolo") }
        #expect(DatabaseOptions.displayed("postgresql://rolo:secret@db/rolo") == "postgresql://rolo:***@db/rolo")
        #expect(DatabaseOptions.displayed("/var/lib/rolo/rolo.sqlite") == "/var/lib/rolo/rolo.sqlite")
    }

    @Test func pushSettingsComeFromFlagsOrFileAndAreChecked() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try Self.writeConfig("""
            push_subject = "mailto:admin@example.org"
            push_allowed_origins = ["https://ntfy.example.org", "https://up.example.net:8443/"]
            push_registrations_per_book = 100
            """, in: folder)
        let command = try ServeCommand.parse(["--config", config, "--push-allow-loopback"])
        let push = try command.configurationFromOptions(command.settings()).push
        #expect(push.enabled && push.allowLoopback && push.subject == "mailto:admin@example.org")
        #expect(push.allowedOrigins == ["https://ntfy.example.org", "https://up.example.net:8443"])
        #expect(push.registrationsPerBook == 100)
        let off = try ServeCommand.parse(["--push", "off"])
        #expect(try off.configurationFromOptions(off.settings()).push.enabled == false)
        #expect(try ServeCommand.parse([]).configurationFromOptions(LayeredSettings(file: ConfigFile())).push.allowLoopback == false)
        for bad in [["--push", "maybe"], ["--push-subject", "admin@example.org"], ["--push-allowed-origin", "https://x.org/path"],
                    ["--push-registrations-per-book", "0"]] {
            let command = try ServeCommand.parse(bad)
            #expect(throws: (any Error).self, "\(bad)") { try command.configurationFromOptions(command.settings()) }
        }
    }

    @Test func theWebUIIsOnUnlessTurnedOff() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try ServeCommand.parse([]).configurationFromOptions(LayeredSettings(file: ConfigFile())).webUI)
        let off = try ServeCommand.parse(["--web-ui", "off"])
        #expect(try off.configurationFromOptions(off.settings()).webUI == false)
        let config = try Self.writeConfig("web_ui = \"off\"\n", in: folder)
        let fromFile = try ServeCommand.parse(["--config", config])
        #expect(try fromFile.configurationFromOptions(fromFile.settings()).webUI == false)
        let bad = try ServeCommand.parse(["--web-ui", "maybe"])
        #expect(throws: (any Error).self) { try bad.configurationFromOptions(bad.settings()) }
    }

    @Test func loginThrottleComesFromFlagsOrFileAndIsChecked() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-login-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try Self.writeConfig("""
            login_free_failures = 3
            login_delay_ms = 100
            login_window_seconds = 600
            login_account_free_failures = 30
            """, in: folder)
        let command = try ServeCommand.parse(["--config", config, "--login-max-delay-ms", "2000",
                                              "--login-capped-failures", "4", "--login-free-failures", "2"])
        let throttle = try command.configurationFromOptions(command.settings()).loginThrottle
        #expect(throttle == LoginThrottleSettings(freeFailures: 2, baseDelay: .milliseconds(100),
                                                  maxDelay: .milliseconds(2000), cappedFailures: 4,
                                                  window: .seconds(600), accountFreeFailures: 30))
        let defaults = try ServeCommand.parse([]).configurationFromOptions(LayeredSettings(file: ConfigFile()))
        #expect(defaults.loginThrottle == LoginThrottleSettings())

        let history = try ServeCommand.parse(["--access-history-hourly-days", "7", "--access-history-daily-days", "90"])
        let retention = try history.configurationFromOptions(LayeredSettings(file: ConfigFile())).accessRetention
        #expect(retention == AccessRetention(hourly: 7 * 86_400, daily: 90 * 86_400))
        #expect(defaults.accessRetention == .default)
        #expect(throws: (any Error).self) {
            try ServeCommand.parse(["--access-history-hourly-days", "30", "--access-history-daily-days", "10"])
                .configurationFromOptions(LayeredSettings(file: ConfigFile()))
        }

        let refused = try await RoloBinary.run(["serve", "--ephemeral", "--login-window-seconds", "0"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("login_window_seconds must be at least 1"))
    }

    @Test func sqliteTuningComesFromFlagsEnvironmentOrFileAndIsChecked() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-tuning-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try Self.writeConfig("sqlite_reader_cache_kib = 1024\nsqlite_readers = 3\n", in: folder)
        let command = try ServeCommand.parse(["--config", config, "--sqlite-writer-cache-kib", "8192"])
        let tuning = try command.storeTuning(command.settings())
        #expect(tuning.writerCacheKiB == 8192)
        #expect(tuning.readerCacheKiB == 1024)
        #expect(tuning.maximumReaders == 3)
        #expect(tuning.mmapBytes == 0)

        let refused = try await RoloBinary.run(["serve", "--ephemeral", "--sqlite-readers", "0"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("sqlite_readers must be at least 1"))
    }

    @Test func jsonAccessLogNamesTheForwardedClientOnlyFromATrustedProxy() async throws {
        let (object, stderr) = try await Self.forwardedHealthLogLine(extra: ["--trusted-proxy", "127.0.0.1"])
        #expect(object["level"] as? String == "info")
        #expect(object["label"] as? String == "rolo")
        #expect((object["timestamp"] as? String)?.hasPrefix("20") == true)
        let metadata = try #require(object["metadata"] as? [String: Any])
        #expect(metadata["remote"] as? String == "203.0.113.7")
        #expect(metadata["status"] as? String == "200")
        #expect(metadata["method"] as? String == "GET")
        #expect(metadata["path"] as? String == "/health")
        // Every stderr line is a JSON object.
        for text in stderr.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) is [String: Any], "\(text)")
        }
    }

    @Test func forwardedForFromAnUntrustedPeerIsNotLogged() async throws {
        let (object, _) = try await Self.forwardedHealthLogLine(extra: [])
        #expect((object["metadata"] as? [String: Any])?["remote"] as? String == "127.0.0.1")
    }

    /// Starts `rolo serve --log-format json` with `extra` flags, asks `/health` with an
    /// `X-Forwarded-For: 203.0.113.7` header, stops the server (expecting a clean exit) and
    /// returns that request's access-log line as JSON, with all of stderr.
    static func forwardedHealthLogLine(extra: [String]) async throws -> (object: [String: Any], stderr: String) {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = try ServeProcess(arguments: ["serve", "--port", "0", "--database", database,
                                                 "--log-format", "json"] + extra)
        let port = try await serve.waitUntilListening()
        _ = try await curlStatus(["-H", "X-Forwarded-For: 203.0.113.7", "http://127.0.0.1:\(port)/health"])
        let line = await serve.stderr.waitFor { text in
            text.split(separator: "\n").first { $0.contains("/health") }.map(String.init)
        }
        #expect(await serve.terminate() == 0)
        return (try jsonObject(line), serve.stderr.current)
    }
}
