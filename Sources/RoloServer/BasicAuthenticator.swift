import Authorization
import DAV
import Foundation
import Logging
import RoloStore
import RoloWeb

/// HTTP Basic authentication: the user's name with an app password (`rolo_…`, checked by
/// keyed hash on every request) or the account password (bcrypt, with a cache of recent
/// successes that each hit checks against the store's password stamp; refused when the user
/// allows app passwords only), and a throttle on failures
/// per client subnet and per account (`LoginThrottle`).
struct BasicAuthenticator: Sendable {
    enum Outcome: Sendable, Equatable {
        case authenticated(Credential)
        /// No or unreadable credentials: answer 401 without counting a failure.
        case missingCredentials
        /// Wrong user or password: answer 401 after `delay`.
        case rejected(delay: Duration)
        /// Too many failures from the client's subnet: answer 429 with `Retry-After`. The
        /// password was not checked (no bcrypt), right or wrong.
        case throttled(retryAfter: Duration)
        /// The store could not be asked (its database is out of reach): answer 503 with
        /// `Retry-After`, and count no failure.
        case unavailable
    }

    /// What the password sources found, and the user's name in Rolo (a directory may spell
    /// it otherwise than the login: `ALICE` is `alice`).
    struct SourceVerdict: Sendable, Equatable {
        var verdict: Verdict
        var user: String
    }

    /// What a password check found.
    enum Verdict: Sendable, Equatable {
        /// Right, with the account's password stamp read before the check.
        case valid(stamp: String)
        case invalid, unavailable
    }

    static let challenge = #"Basic realm="Rolo", charset="UTF-8""#

    let store: any RoloStore
    let cache: CredentialCache
    let throttle: LoginThrottle
    let failureLog: AuthFailureLog
    let checks = SharedPasswordChecks<SourceVerdict>()
    /// The `local` source's account-password check. App passwords are checked before any
    /// source, so a phone signs in whatever source the account came from.
    let local: LocalSource
    /// The password sources `auth_sources` lists (`local`, `ldap`), in its order.
    let sources: [AuthenticationSourceKind]
    /// The `ldap` source, when `sources` lists it.
    let ldap: LDAPSource?
    var localEnabled: Bool { sources.contains(.local) }

    init(store: any RoloStore, cacheLifetime: Duration, throttle: LoginThrottle = LoginThrottle(),
         logger: Logger = Logger(label: "rolo"), localEnabled: Bool = true,
         sources: [AuthenticationSourceKind]? = nil, ldap: LDAPSourceSettings? = nil) {
        self.store = store
        self.local = LocalSource(store: store)
        let listed = sources ?? (localEnabled ? [.local] : [])
        let directory = ldap.flatMap { listed.contains(.ldap) ? LDAPSource(settings: $0, logger: logger) : nil }
        self.ldap = directory
        self.sources = listed.filter { $0 == .local || ($0 == .ldap && directory != nil) }
        self.cache = CredentialCache(lifetime: cacheLifetime)
        self.throttle = throttle
        self.failureLog = AuthFailureLog(logger: logger)
    }

    /// Forgets cached logins and throttled addresses (a test-control reset).
    func forgetAll() {
        cache.removeAll()
        throttle.removeAll()
    }

    /// `remoteAddress` is only worked out when the password has to be checked or some
    /// subnet may be blocked (`LoginThrottle.mayBlock`).
    func authenticate(authorization: String?, remoteAddress: @autoclosure () -> String) async -> Outcome {
        guard let authorization else { return .missingCredentials }
        // A blocked subnet is refused before the cache too: a cache hit would answer guesses
        // at full speed (misses 429, the right one 200) without any bcrypt to slow them.
        if throttle.mayBlock, let refusal = refusal(authorization: authorization, remoteAddress: remoteAddress()) {
            return refusal
        }
        if let (credential, stamp) = cache.entry(authorization: authorization) {
            let current: String?
            do {
                current = try await store.accountPasswordStamp(user: credential.user)
            } catch StoreError.unavailable {
                return .unavailable
            } catch {
                current = nil
            }
            if current == stamp { return .authenticated(credential) }
            cache.remove(authorization: authorization)
        }
        let user: String, password: String
        switch Self.readBasic(authorization) {
        case .credentials(let name, let secret): (user, password) = (name, secret)
        case .notUTF8(let name):
            return await rejection(user: name, client: ClientAddress.subnet(of: remoteAddress()), reason: .notUTF8)
        case .unreadable: return .missingCredentials
        }
        let appPassword: AppPasswordCheck?
        do {
            appPassword = try await store.checkAppPassword(user: user, secret: password)
        } catch StoreError.unavailable {
            return .unavailable
        } catch {
            appPassword = nil
        }
        if let check = appPassword {
            guard !check.revoked else {
                return await rejection(user: user, client: ClientAddress.subnet(of: remoteAddress()), reason: .revokedToken)
            }
            guard await stillInSource(user) else {
                return await rejection(user: user, client: ClientAddress.subnet(of: remoteAddress()), reason: .unknownUser)
            }
            return .authenticated(Credential(user: user, appPasswordID: check.id, scope: check.scope))
        }
        // bcrypt holds a thread for 70-110 ms: never on an event loop that runs requests.
        let found = await checks.result(for: authorization) { [self] () async -> SourceVerdict in
            await checkSources(user: user, password: password)
        }
        let client = ClientAddress.subnet(of: remoteAddress())
        let stamp: String
        switch found.verdict {
        case .valid(let current): stamp = current
        case .invalid: return await rejection(user: user, client: client)
        case .unavailable: return .unavailable
        }
        let credential = Credential.accountPassword(found.user)
        cache.insert(authorization: authorization, credential: credential, stamp: stamp)
        await recordSuccess(subnet: client.key)
        return .authenticated(credential)
    }

    /// The password sources for a login. An account answers to the source that made it
    /// (`UserAccount.source`) and to no other: a local user's password is never asked of the
    /// directory, nor a directory user's of the local table. A name with no account yet is
    /// asked of the directory sources in `auth_sources` order, and the first that finds it
    /// makes the account. A source that cannot answer ends the check as `unavailable` (503),
    /// never a fall-back to another source. The stamp is what the credential cache keeps.
    func checkSources(user: String, password: String) async -> SourceVerdict {
        let account: UserAccount?
        do {
            account = try await store.account(name: user)
        } catch StoreError.unavailable {
            return SourceVerdict(verdict: .unavailable, user: user)
        } catch {
            account = nil
        }
        if let account {
            switch AuthenticationSourceKind(rawValue: account.source) {
            case .local? where sources.contains(.local):
                return SourceVerdict(verdict: await local.check(user: user, password: password), user: user)
            case .ldap?:
                return await directoryLogin(user: user, password: password)
            default:
                // A proxy user, or a source no longer listed: no password of theirs signs in.
                return SourceVerdict(verdict: .invalid, user: user)
            }
        }
        for source in sources where source == .ldap {
            let found = await directoryLogin(user: user, password: password)
            if found.verdict != .invalid { return found }
        }
        return SourceVerdict(verdict: .invalid, user: user)
    }

    /// The `ldap` source's check, and the account it makes or refreshes.
    private func directoryLogin(user: String, password: String) async -> SourceVerdict {
        guard let ldap else { return SourceVerdict(verdict: .invalid, user: user) }
        switch await ldap.login(user: user, password: password) {
        case .found(let found):
            do {
                guard let account = try await SourceAccounts.provision(found, source: .ldap, store: store),
                      let stamp = try await store.accountPasswordStamp(user: account.name) else {
                    return SourceVerdict(verdict: .invalid, user: found.name)
                }
                cache.notePresence(true, of: account.name)
                return SourceVerdict(verdict: .valid(stamp: stamp), user: account.name)
            } catch StoreError.unavailable {
                return SourceVerdict(verdict: .unavailable, user: user)
            } catch {
                return SourceVerdict(verdict: .invalid, user: user)
            }
        case .rejected: return SourceVerdict(verdict: .invalid, user: user)
        case .unavailable: return SourceVerdict(verdict: .unavailable, user: user)
        }
    }

    /// Whether an app password's user is still one their source vouches for: a directory
    /// user removed from the directory or the required group is refused, app passwords made
    /// earlier included. The answer is remembered for the credential cache's lifetime
    /// (`auth_cache_seconds`), so a device syncing costs the directory one search per user
    /// per lifetime, not one per request; without an `ldap` source nothing is asked. While
    /// the directory cannot answer, the app password counts (it is Rolo's own credential,
    /// and only "the user is gone" shuts it).
    func stillInSource(_ user: String) async -> Bool {
        guard let ldap else { return true }
        if let known = cache.presence(of: user) { return known }
        guard let account = try? await store.account(name: user) else { return true }
        guard account.source == AuthenticationSourceKind.ldap.rawValue else {
            cache.notePresence(true, of: user)
            return true
        }
        switch await ldap.stillPresent(user: user) {
        case .found:
            cache.notePresence(true, of: user)
            return true
        case .rejected:
            cache.notePresence(false, of: user)
            return false
        case .unavailable:
            return true
        }
    }

    /// `.throttled` while the client's subnet is blocked, `.missingCredentials` for a header
    /// that carries no credentials (never counted, never a 429), else nil: go on.
    private func refusal(authorization: String, remoteAddress: String) -> Outcome? {
        let client = ClientAddress.subnet(of: remoteAddress)
        guard let retryAfter = throttle.retryAfter(subnet: client.key) else { return nil }
        guard let (user, _) = Self.parseBasic(authorization) else { return .missingCredentials }
        failureLog.record(user: user, address: client.address, reason: .throttled)
        return .throttled(retryAfter: retryAfter)
    }

    /// A password checked right: the subnet's failures are forgotten, here and in the store
    /// (one store write per login that needed bcrypt; a cached login writes nothing).
    private func recordSuccess(subnet: String) async {
        throttle.recordSuccess(subnet: subnet)
        try? await store.forgetLoginFailures(subnet: subnet)
    }

    /// A wrong password: counted, logged, and answered as the throttle says.
    private func rejection(user: String, client: ClientAddress.Subnet, reason: AuthFailureLog.Reason? = nil) async -> Outcome {
        let known = (try? await store.account(name: user)) != nil
        // The counts of every process on the database: without them, N processes behind a
        // balancer would each allow the whole budget. Unreachable store: this process's own.
        let shared = try? await store.recordLoginFailure(subnet: client.key, account: user,
                                                         window: throttle.settings.window.seconds, now: Date())
        let verdict = throttle.recordFailure(subnet: client.key, account: user, shared: shared)
        failureLog.record(user: user, address: client.address, reason: reason ?? (known ? .badPassword : .unknownUser))
        switch verdict {
        case .delay(let delay): return .rejected(delay: delay)
        case .blocked(let retryAfter): return .throttled(retryAfter: retryAfter)
        }
    }

    /// Splits `Basic base64(user:password)`; the password may contain colons, the user not.
    static func parseBasic(_ header: String) -> (user: String, password: String)? {
        guard case .credentials(let user, let password) = readBasic(header) else { return nil }
        return (user, password)
    }

    /// What a Basic header carries.
    enum BasicCredentials: Sendable, Equatable {
        case credentials(user: String, password: String)
        /// Well-formed but not UTF-8 (the charset the challenge names): a failed login, with
        /// the user's name as far as it can be read (invalid bytes replaced), for the log.
        case notUTF8(user: String)
        /// Not Basic, not base64, no colon, or no user: no credentials at all.
        case unreadable
    }

    static func readBasic(_ header: String) -> BasicCredentials {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":")), colon > decoded.startIndex else { return .unreadable }
        guard let text = String(data: decoded, encoding: .utf8), let textColon = text.firstIndex(of: ":") else {
            return .notUTF8(user: String(decoding: decoded[..<colon], as: UTF8.self))
        }
        return .credentials(user: LoginName.normalized(String(text[..<textColon])),
                            password: String(text[text.index(after: textColon)...]))
    }
}

extension BasicAuthenticator {
    /// The web UI's sign-in (`WebPasswordCheck`): the account password only (an app
    /// password never signs a browser in), through the same throttle, failure log and
    /// blocking-work executor as a DAV login. A success is not cached: it makes a session.
    func checkWebLogin(user: String, password: String, remoteAddress: String) async -> WebLoginVerdict {
        let client = ClientAddress.subnet(of: remoteAddress)
        if throttle.mayBlock, let retryAfter = throttle.retryAfter(subnet: client.key) {
            failureLog.record(user: user, address: client.address, reason: .throttled)
            return .throttled(retryAfter: retryAfter)
        }
        var valid = false
        let account = try? await store.account(name: user)
        // A name with no account yet is the directory's to find (as for DAV, `checkSources`):
        // with `local` listed too, a first sign-in in the browser used to ask the local table alone.
        if let account, account.source == AuthenticationSourceKind.local.rawValue, localEnabled {
            // "App passwords only" concerns DAV, not the UI: the bcrypt check alone.
            valid = await withTaskExecutorPreference(BlockingWorkExecutor.shared) { [store] in
                (try? await store.verifyPassword(user: user, password: password)) ?? false
            }
        } else if account == nil || account?.source == AuthenticationSourceKind.ldap.rawValue, let ldap {
            switch await ldap.login(user: user, password: password) {
            case .found(let found):
                // The session is the typed name's: only a directory name spelled as Rolo's signs in.
                let made = try? await SourceAccounts.provision(found, source: .ldap, store: store)
                valid = made.map { $0.name == user && !$0.disabled } ?? false
            case .rejected: break
            case .unavailable:
                // Not a failure (nobody checked the password), and no other source stands in.
                return .unavailable(retryAfter: .seconds(DAVResponse.unavailableRetryAfter))
            }
        }
        guard valid else {
            switch await rejection(user: user, client: client) {
            case .throttled(let retryAfter): return .throttled(retryAfter: retryAfter)
            case .rejected(let delay): return .rejected(delay: delay)
            default: return .rejected(delay: .zero)
            }
        }
        await recordSuccess(subnet: client.key)
        return .valid
    }
}

extension BasicAuthenticator {
    /// How long the browser's network is still blocked, or nil: a sign-in through the
    /// provider from a blocked network is refused before the provider is asked.
    func blockedSignOn(remoteAddress: String) -> Duration? {
        let client = ClientAddress.subnet(of: remoteAddress)
        guard throttle.mayBlock, let retryAfter = throttle.retryAfter(subnet: client.key) else { return nil }
        failureLog.record(user: "-", address: client.address, reason: .throttled)
        return retryAfter
    }

    /// A sign-in through the provider refused: counted and logged (`sso_refused`) as a wrong
    /// password is, so the provider's flow is no way around the throttle.
    func signOnRefused(user: String, remoteAddress: String) async -> Outcome {
        await rejection(user: user, client: ClientAddress.subnet(of: remoteAddress), reason: .ssoRefused)
    }

    /// A sign-in through the provider succeeded: the network's failures are forgotten, as
    /// after a password login.
    func signOnSucceeded(remoteAddress: String) async {
        await recordSuccess(subnet: ClientAddress.subnet(of: remoteAddress).key)
    }
}
