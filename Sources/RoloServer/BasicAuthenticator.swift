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
    let checks = SharedPasswordChecks<Verdict>()
    /// The `local` source's account-password check; `localEnabled` is whether `auth_sources`
    /// lists it. App passwords are checked before any source, so a phone signs in whatever
    /// source the account came from.
    let local: LocalSource
    let localEnabled: Bool

    init(store: any RoloStore, cacheLifetime: Duration, throttle: LoginThrottle = LoginThrottle(),
         logger: Logger = Logger(label: "rolo"), localEnabled: Bool = true) {
        self.store = store
        self.local = LocalSource(store: store)
        self.localEnabled = localEnabled
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
            return .authenticated(Credential(user: user, appPasswordID: check.id, scope: check.scope))
        }
        // bcrypt holds a thread for 70-110 ms: never on an event loop that runs requests.
        let verdict = await checks.result(for: authorization) { [local, localEnabled] () async -> Verdict in
            // `auth_sources` without `local`: no account password signs in.
            guard localEnabled else { return .invalid }
            return await local.check(user: user, password: password)
        }
        let client = ClientAddress.subnet(of: remoteAddress())
        let stamp: String
        switch verdict {
        case .valid(let found): stamp = found
        case .invalid: return await rejection(user: user, client: client)
        case .unavailable: return .unavailable
        }
        let credential = Credential.accountPassword(user)
        cache.insert(authorization: authorization, credential: credential, stamp: stamp)
        await recordSuccess(subnet: client.key)
        return .authenticated(credential)
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
        if localEnabled {
            valid = await withTaskExecutorPreference(BlockingWorkExecutor.shared) { [store] in
                (try? await store.verifyPassword(user: user, password: password)) ?? false
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
