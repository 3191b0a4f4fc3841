import DAV
import DeviceProfiles
import RoloStore
import Foundation
import LDAPClient
import Logging

/// Everything an operator can set on a running server; `rolo serve` fills it from flags and
/// `ROLO_*` environment variables, tests fill it with port 0 and a temporary database.
public struct ServerConfiguration: Sendable {
    /// Address to bind. Keep it on loopback behind a TLS-terminating proxy.
    public var host: String
    /// TCP port; 0 picks a free one (the bound port is reported by `RunningServer.port`).
    public var port: Int
    /// SQLite database file; its folder is created when missing.
    public var databasePath: String
    /// URL prefix of the DAV tree, e.g. `/dav` (normalized: leading slash, no trailing one).
    public var basePath: String {
        didSet { basePath = Self.normalizedBasePath(basePath) }
    }
    public var logLevel: Logger.Level
    public var limits: RequestLimits
    /// A connection with no traffic for this long is closed.
    public var idleTimeout: Duration
    /// How long a successful password check is remembered, so sync bursts skip bcrypt.
    public var credentialCacheLifetime: Duration
    /// Path a reverse proxy puts before `basePath` (e.g. `/carddav`); every href carries it.
    public var proxyPrefix: String
    /// Absolute URL clients use (e.g. `https://example.org/carddav`); its path is the proxy
    /// prefix when `proxyPrefix` is empty, and absolute Destination URIs are matched against it.
    public var publicURL: URL?
    /// Peers (IP addresses) whose `X-Forwarded-For` is believed: only a proxy we run may name
    /// the client, or anyone could dodge the login throttle by inventing addresses.
    public var trustedProxies: Set<String>
    /// Growing delays, then 429s, for failed logins per client subnet, and delays per account.
    public var loginThrottle: LoginThrottleSettings
    /// A middleware in front of every route (the test-control API of `RoloTestControl`,
    /// which sets it as `testAPI`); nil (the default): none, and the inline GET path is on.
    public var frontMiddleware: (any FrontMiddlewareFactory)?
    /// Deterministic test server: lock tokens from a counter (the store's clock is fixed by
    /// whoever opens the store, see `StoreClock.fixed`).
    public var deterministic: Bool
    /// How often the access history counted in memory is written (`AccessRecorder`).
    public var accessHistoryFlushInterval: Duration = .seconds(60)
    /// How long the access history is kept: hourly rows, then daily ones.
    public var accessRetention: AccessRetention = .default
    /// How long card versions are kept (`history_days`, `history_versions`; issue 31).
    public var historyRetention: HistoryRetention = .default
    /// Who sees the organisation's directory (`directory`, issue 32): the upkeep rebuilds it
    /// at start and every hour unless `off`.
    public var directory: DirectoryMode = .off
    /// `directory_groups`: with `directory = groups`, the LDAP group DNs that each get a directory.
    public var directoryGroups: [String] = []
    /// `directory_exclude_groups`: LDAP group DNs whose members have no card in the directory
    /// (service accounts, external staff); they still see it.
    public var directoryExcludeGroups: [String] = []
    /// `directory_fields`: the fields directory cards carry and "My card" offers (the name always).
    public var directoryFields: Set<DirectoryField> = Set(DirectoryField.allCases)
    /// `directory_opt_out`: users may leave the directory themselves on "My card" (on by
    /// default); off, only an admin takes someone out (`rolo user set --directory-hidden`).
    public var directoryOptOut = true
    /// `directory_query_limit`: the most cards one addressbook-query on the directory answers.
    public var directoryQueryLimit = DirectoryRules.defaultQueryLimit
    /// WebDAV-Push (on when `publicURL` is set, unless turned off).
    public var push = PushSettings()
    /// The web UI at `/web/` (and `/` redirecting browsers there); on by default.
    public var webUI = true
    /// Where logins come from, tried in this order (`auth_sources`, Docs/authentication.md).
    public var authSources: [AuthenticationSourceKind] = [.local]
    /// The header a trusted proxy names the user in (`proxy_user_header`, e.g. `Remote-User`),
    /// read only with `.proxy` among `authSources` and only from `trustedProxies`.
    public var proxyUserHeader: String?
    /// Signs the device profiles the web UI hands out (`profile_signing_certificate`,
    /// `profile_signing_key`); nil: they go unsigned.
    public var profileSigner: ProfileSigner?
    /// The directory for the `ldap` source (`ldap_*`), needed when `authSources` lists it.
    public var ldap: LDAPSourceSettings?
    /// The `oidc_*` settings, with `.oidc` among `authSources`; `rolo serve` discovers the
    /// provider from them (`oidc`) before the server starts.
    public var oidcSettings: OIDCSettings?
    /// The discovered provider: the web UI offers "Sign in with" it. Nil: no OIDC sign-in.
    public var oidc: OIDCProvider?

    public init(host: String = "127.0.0.1", port: Int = 8800,
                databasePath: String = "./rolo-data/rolo.sqlite", basePath: String = "/dav",
                logLevel: Logger.Level = .info, limits: RequestLimits = RequestLimits(),
                idleTimeout: Duration = .seconds(60), credentialCacheLifetime: Duration = .seconds(300),
                proxyPrefix: String = "", publicURL: URL? = nil, trustedProxies: Set<String> = [],
                loginThrottle: LoginThrottleSettings = LoginThrottleSettings(),
                frontMiddleware: (any FrontMiddlewareFactory)? = nil, deterministic: Bool = false) {
        self.host = host; self.port = port; self.databasePath = databasePath
        self.basePath = Self.normalizedBasePath(basePath)
        self.logLevel = logLevel; self.limits = limits
        self.idleTimeout = idleTimeout; self.credentialCacheLifetime = credentialCacheLifetime
        self.proxyPrefix = proxyPrefix; self.publicURL = publicURL; self.trustedProxies = trustedProxies
        self.loginThrottle = loginThrottle
        self.frontMiddleware = frontMiddleware; self.deterministic = deterministic
    }

    /// What clients see before `basePath`: `proxyPrefix`, else the path of `publicURL`
    /// (the same rule as `DAVConfiguration`).
    var publicPathPrefix: String {
        let prefix = Self.normalizedBasePath(proxyPrefix)
        return prefix.isEmpty ? Self.normalizedBasePath(publicURL?.path ?? "") : prefix
    }

    /// `dav`, `/dav/` and `/dav` all become `/dav`; `/` and empty become empty (DAV at the root).
    static func normalizedBasePath(_ path: String) -> String {
        let trimmed = path.split(separator: "/").joined(separator: "/")
        return trimmed.isEmpty ? "" : "/" + trimmed
    }
}

/// Request body caps, enforced while the body streams in so nothing oversized is buffered.
public struct RequestLimits: Sendable {
    /// Largest resource a PUT may store (advertised as CARDDAV:max-resource-size). 10 MiB
    /// by default: a phone's high-resolution contact photo, base64-encoded, passes 1 MiB.
    public var maxResourceSize: Int
    /// Largest body of any other method (PROPFIND, REPORT, PROPPATCH, MKCOL, LOCK...): XML
    /// that is parsed whole, so it keeps its own, smaller cap.
    public var maxRequestBodySize: Int
    /// Bytes a user's own books may hold in total, checked by every write (DAV, the web UI:
    /// `Quota`); nil: no quota.
    public var quotaBytes: Int64?

    public init(maxResourceSize: Int = DAVConfiguration.defaultMaxResourceSize, maxRequestBodySize: Int = 4 << 20,
                quotaBytes: Int64? = nil) {
        self.maxResourceSize = maxResourceSize
        self.maxRequestBodySize = maxRequestBodySize
        self.quotaBytes = quotaBytes
    }

    /// The cap that applies to a request with this method.
    public func maxBodySize(forMethod method: String) -> Int {
        method == "PUT" ? maxResourceSize : maxRequestBodySize
    }
}
