import Foundation
import NIOSSL
import PostgresNIO
import RoloStore

extension PostgresStore {
    /// Where the database is and how to use it: what `postgresql://` URLs say, the pool's
    /// size and the time limits. Made from a URL (`init(url:)`) and then adjusted.
    public struct Configuration: Sendable {
        /// How TLS to the server is used, named as libpq's `sslmode` names it.
        public enum TLSMode: String, Sendable, CaseIterable {
            /// Never.
            case disable
            /// When the server offers it, without checking its certificate (libpq's default).
            case prefer
            /// Always, without checking the certificate.
            case require
            /// Always, the certificate checked against the trusted roots (`sslrootcert`, else
            /// the system's), not the host name.
            case verifyCA = "verify-ca"
            /// Always, the certificate and the host name checked.
            case verifyFull = "verify-full"
        }

        /// One server: a TCP host name or address and its port, or the folder of the
        /// server's Unix socket (starts with `/`).
        public struct Server: Sendable, Equatable, CustomStringConvertible {
            public var host: String
            public var port: Int
            public init(host: String, port: Int = 5432) { self.host = host; self.port = port }
            /// A socket by its file, which names the port too (a wrong port is a missing file).
            public var description: String { host.hasPrefix("/") ? "socket \(socketPath)" : "\(host):\(port)" }
            /// The socket's file in its folder, as the server names it.
            var socketPath: String { "\(host)/.s.PGSQL.\(port)" }
        }

        /// The servers, in the URL's order: one, or several (`postgresql://u@h1:p1,h2:p2/db`)
        /// of which calls use the one that accepts writes (`PrimaryChoice`), as libpq does with
        /// `target_session_attrs=read-write`.
        public var servers: [Server]
        /// The first server's host (a TCP host name or address, or a socket folder).
        public var host: String {
            get { servers[0].host }
            set { servers[0].host = newValue }
        }
        /// The first server's port.
        public var port: Int {
            get { servers[0].port }
            set { servers[0].port = newValue }
        }
        public var username: String
        public var password: String?
        public var database: String
        public var tls: TLSMode
        /// PEM file of the certificate authorities to trust (`sslrootcert`); nil for the system's.
        public var rootCertificatePath: String?
        /// Connections to the server this process opens at most.
        public var poolSize: Int
        /// Longest a statement may run before the server cancels it (`statement_timeout`);
        /// nil for no limit. A store call cut short throws `StoreError.unavailable`.
        public var statementTimeout: Duration?
        /// Longest a store call waits for a connection (while the server is unreachable or
        /// every connection busy) before it throws `StoreError.unavailable`.
        public var connectionTimeout: Duration
        /// bcrypt work factor for new password hashes (10 in production, 4 in tests).
        public var bcryptCost: UInt8
        /// How much longer than `statementTimeout` a statement may go unanswered before its
        /// connection is taken as lost and closed (shorter in tests).
        var lostStatementMargin = Duration.seconds(10)
        /// Books with fewer cards than this answer `contains` and `ends-with` without the
        /// trigram index (`SubstringIndexChoice`); 0 sends every book to it (tests).
        var substringIndexMinimumCards = SubstringIndexChoice.defaultMinimumBookCards
        /// Most bytes of card bodies the inline GET keeps in memory (`CardCache`); 0 for none.
        public var cardCacheBytes = 64 << 20
        /// Cards a process writes through PUT, or one import writes, before the tables are
        /// tidied (`BurstTidying`); 0 for never.
        var tidyAfterWrites = 1000
        /// Longest a starting process waits for the processes already running to acknowledge
        /// its announcement (`startNotices`): long enough for a busy one, short enough that a
        /// stalled one does not hold up a `rolo` command. Tests whose assertions need the
        /// acknowledgement, not the bound, wait longer on a loaded machine.
        var announcementPatience = Duration.seconds(2)
        /// How long a read lease lasts, and an unheard process counts as present
        /// (`ReadLeases.Timing`). Every process on one database must agree, so it is not
        /// configurable; tests of leases on a loaded machine widen it in all their stores.
        var leaseTiming = ReadLeases.Timing.standard

        public init(host: String, port: Int = 5432, username: String, password: String?, database: String,
                    tls: TLSMode = .prefer, rootCertificatePath: String? = nil, poolSize: Int = 10,
                    statementTimeout: Duration? = .seconds(30), connectionTimeout: Duration = .seconds(10),
                    bcryptCost: UInt8 = 10) {
            self.servers = [Server(host: host, port: port)]; self.username = username; self.password = password
            self.database = database; self.tls = tls; self.rootCertificatePath = rootCertificatePath
            self.poolSize = poolSize; self.statementTimeout = statementTimeout
            self.connectionTimeout = connectionTimeout; self.bcryptCost = bcryptCost
        }

        /// Whether `location` names a PostgreSQL database (`postgresql://` or `postgres://`)
        /// rather than an SQLite file.
        public static func isDatabaseURL(_ location: String) -> Bool {
            let lowered = location.lowercased()
            return lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://")
        }

        /// Reads `postgresql://user:password@host:port/database?sslmode=…&sslrootcert=…`, the
        /// form libpq takes: user, password and database percent-encoded; `host=/folder` in
        /// the query for a Unix socket (with `port=` when not 5432, as libpq takes it); the port
        /// 5432 and the user's name as the database when left out. Several servers are written
        /// as libpq writes them, `host1:port1,host2:port2`; `target_session_attrs` may say `read-write` or `primary`,
        /// which is what Rolo looks for among them anyway (it writes).
        public init(url text: String) throws {
            guard Self.isDatabaseURL(text), let authority = Authority(text) else {
                throw ConfigurationError("not a postgresql:// URL: \(Self.redacted(text))")
            }
            let listed = try authority.servers()
            // URLComponents takes one host: the others are read from the authority alone.
            let first = authority.hostList.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first
            guard let components = URLComponents(string: authority.withHosts(first ?? authority.hostList)) else {
                throw ConfigurationError("not a postgresql:// URL: \(Self.redacted(text))")
            }
            var query: [String: String] = [:]
            for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
            let user = components.percentEncodedUser.flatMap { $0.removingPercentEncoding } ?? query["user"]
            guard let user, !user.isEmpty else { throw ConfigurationError("the database URL names no user") }
            let password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding } ?? query["password"]
            var host = components.host.flatMap { $0.removingPercentEncoding } ?? ""
            if let socketFolder = query["host"], !socketFolder.isEmpty { host = socketFolder }
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { throw ConfigurationError("the database URL names no host") }
            let path = components.percentEncodedPath.dropFirst()
            let database = path.isEmpty ? (query["dbname"] ?? user) : (String(path).removingPercentEncoding ?? String(path))
            let modeName = query["sslmode"] ?? TLSMode.prefer.rawValue
            guard let mode = TLSMode(rawValue: modeName) else {
                throw ConfigurationError("sslmode \(modeName) is not one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            for name in query.keys
            where !["sslmode", "sslrootcert", "host", "port", "user", "password", "dbname", "target_session_attrs"].contains(name) {
                throw ConfigurationError("the database URL parameter \(name) is not supported")
            }
            if let attributes = query["target_session_attrs"], !["read-write", "primary"].contains(attributes) {
                throw ConfigurationError("target_session_attrs \(attributes) is not supported: Rolo writes, so it takes read-write (or primary)")
            }
            // libpq's `port=` beside `host=`: a local cluster on another port than 5432 is reached
            // through its socket as `?host=/var/run/postgresql&port=5433`.
            var port = components.port ?? 5432
            if let text = query["port"] {
                guard let value = Self.port(text[...]) else {
                    throw ConfigurationError("the database URL's port \(text) is not a port number")
                }
                guard components.port == nil || components.port == value else {
                    throw ConfigurationError("the database URL gives two ports, \(components.port!) and port=\(value)")
                }
                port = value
            }
            self.init(host: host, port: port, username: user, password: password, database: database,
                      tls: mode, rootCertificatePath: query["sslrootcert"])
            if listed.count > 1 {
                guard query["host"] == nil else {
                    throw ConfigurationError("the database URL names several hosts and a socket folder (host=)")
                }
                guard query["port"] == nil else {
                    throw ConfigurationError("the database URL names several hosts and one port (port=): give each host its port")
                }
                servers = listed
            }
        }

        /// A port number written in a URL (1 to 65535), nil for anything else.
        static func port(_ text: Substring) -> Int? {
            Int(text).flatMap { (1...65535).contains($0) ? $0 : nil }
        }

        /// The URL with its password replaced by `***`, for logs and messages.
        public static func redacted(_ url: String) -> String {
            guard let authority = Authority(url), let userInfo = authority.userInfo,
                  let colon = userInfo.firstIndex(of: ":") else { return url }
            return authority.scheme + userInfo[..<colon] + ":***@" + authority.hostList + authority.rest
        }

        /// Where this configuration connects, without the password.
        public var description: String {
            "postgresql \(username)@\(servers.map(\.description).joined(separator: ","))/\(database)"
        }

        /// The postgres-nio client (pool) configuration for the first server.
        public func clientConfiguration() throws -> PostgresClient.Configuration {
            try clientConfiguration(server: servers[0])
        }

        /// The postgres-nio client (pool) configuration for `server`.
        func clientConfiguration(server: Server) throws -> PostgresClient.Configuration {
            let host = server.host, port = server.port
            var configuration: PostgresClient.Configuration
            if host.hasPrefix("/") {
                configuration = .init(unixSocketPath: server.socketPath, username: username, password: password, database: database)
            } else {
                let tls: PostgresClient.Configuration.TLS = switch tlsConfiguration() {
                case nil: .disable
                case let (settings, required)?: required ? .require(settings) : .prefer(settings)
                }
                configuration = .init(host: host, port: port, username: username, password: password, database: database, tls: tls)
            }
            configuration.options.maximumConnections = max(poolSize, 1)
            // The pool arms a keep-alive timer every time a connection comes back to it (a
            // few tasks and a dispatch timer, cancelled at the next lease), which at thousands
            // of statements a second cost a good part of the process's CPU. No keep-alive
            // queries, then: a connection the server closed is dropped by the pool when its
            // socket closes, and one found broken in use is retried on a fresh one
            // (`autocommit`, `transaction`). (The idle-timeout timer stays: only "minimum"
            // connections go without one, and with a minimum above 0 the pool traps on a
            // lease while an outage has taken its connections below it.)
            configuration.options.keepAliveBehavior = nil
            // And that timer, cancelled at the next lease, still holds its memory until its
            // deadline (Swift's Task.sleep leaves the cancelled timer queued): with the
            // default minute, 45,000 GETs in 5 s grew the process by 33 MB, and 4 such bursts
            // to 217 MB. Five seconds bound that to what five seconds of leases leave; a
            // connection idle for longer is closed and opened again when needed (a few ms).
            configuration.options.connectionIdleTimeout = .seconds(5)
            configuration.options.connectTimeout = connectionTimeout
            configuration.options.additionalStartupParameters = startupParameters
            return configuration
        }

        /// The same settings for one connection of its own to `server` (`PostgresStore.open`'s
        /// probe, the search for the primary, LISTEN, snapshots).
        func connectionConfiguration(server: Server) throws -> PostgresConnection.Configuration {
            let host = server.host, port = server.port
            var configuration: PostgresConnection.Configuration
            if host.hasPrefix("/") {
                configuration = .init(unixSocketPath: server.socketPath, username: username, password: password, database: database)
            } else {
                let tls: PostgresConnection.Configuration.TLS = switch tlsConfiguration() {
                case nil: .disable
                case let (settings, required)?:
                    required ? .require(try NIOSSLContext(configuration: settings)) : .prefer(try NIOSSLContext(configuration: settings))
                }
                configuration = .init(host: host, port: port, username: username, password: password, database: database, tls: tls)
            }
            let timeout = connectionTimeout.components
            configuration.options.connectTimeout = .nanoseconds(timeout.seconds * 1_000_000_000 + timeout.attoseconds / 1_000_000_000)
            configuration.options.additionalStartupParameters = startupParameters
            return configuration
        }

        /// Settings sent when connecting: the application's name and the statement timeout.
        private var startupParameters: [(String, String)] {
            var parameters = [("application_name", "rolo")]
            if let statementTimeout {
                let milliseconds = statementTimeout.components.seconds * 1000
                    + statementTimeout.components.attoseconds / 1_000_000_000_000_000
                parameters.append(("statement_timeout", String(max(milliseconds, 1))))
            }
            return parameters
        }

        /// TLS as `sslmode` asks for it and whether the connection must have it; nil for none.
        private func tlsConfiguration() -> (TLSConfiguration, required: Bool)? {
            var settings = TLSConfiguration.makeClientConfiguration()
            if let rootCertificatePath { settings.trustRoots = .file(rootCertificatePath) }
            switch tls {
            case .disable:
                return nil
            case .prefer:
                settings.certificateVerification = .none
                return (settings, false)
            case .require:
                settings.certificateVerification = .none
                return (settings, true)
            case .verifyCA:
                settings.certificateVerification = .noHostnameVerification
                return (settings, true)
            case .verifyFull:
                settings.certificateVerification = .fullVerification
                return (settings, true)
            }
        }
    }

    /// The parts of a `postgresql://` URL around its hosts, read by hand: URLComponents
    /// takes one host, where libpq's URLs may list several (`h1:p1,h2:p2`).
    struct Authority {
        /// `postgresql://`, as written.
        var scheme: Substring
        /// `user:password`, without the `@`; nil when the URL has none.
        var userInfo: Substring?
        /// `host:port`, or several of them separated by commas; may be empty.
        var hostList: Substring
        /// The path, query and fragment.
        var rest: Substring

        init?(_ text: String) {
            guard let separator = text.range(of: "://") else { return nil }
            scheme = text[..<separator.upperBound]
            let authorityEnd = text[separator.upperBound...].firstIndex { "/?#".contains($0) } ?? text.endIndex
            let authority = text[separator.upperBound..<authorityEnd]
            if let at = authority.lastIndex(of: "@") {
                userInfo = authority[..<at]
                hostList = authority[authority.index(after: at)...]
            } else {
                userInfo = nil
                hostList = authority
            }
            rest = text[authorityEnd...]
        }

        /// The URL with `hosts` in place of its host list.
        func withHosts(_ hosts: Substring) -> String {
            scheme + (userInfo.map { $0 + "@" } ?? "") + hosts + rest
        }

        /// Each server of the list (`host`, `host:port`, `[v6]:port`), port 5432 when left out.
        func servers() throws -> [Configuration.Server] {
            guard hostList.contains(",") else { return [] }
            return try hostList.split(separator: ",", omittingEmptySubsequences: false).map { item in
                var host = item, port = Substring("")
                if item.hasPrefix("["), let close = item.firstIndex(of: "]") {
                    host = item[item.index(after: item.startIndex)..<close]
                    let after = item[item.index(after: close)...]
                    if after.hasPrefix(":") { port = after.dropFirst() } else if !after.isEmpty { host = "" }
                } else if let colon = item.lastIndex(of: ":") {
                    host = item[..<colon]
                    port = item[item.index(after: colon)...]
                }
                let name = String(host).removingPercentEncoding ?? String(host)
                guard !name.isEmpty else { throw ConfigurationError("the database URL names an empty host in \(hostList)") }
                guard let number = port.isEmpty ? 5432 : Configuration.port(port) else {
                    throw ConfigurationError("the database URL names a bad port in \(hostList)")
                }
                return Configuration.Server(host: name, port: number)
            }
        }
    }

    /// A database URL or setting that cannot be used.
    public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}
