import DAV
import Foundation
import RoloStore

/// HTTP Basic authentication: the user's name with an app password (`rolo_…`, checked by
/// keyed hash on every request) or the account password (bcrypt, with a cache of recent
/// successes; refused when the user allows app passwords only), and a per-address throttle
/// on failures.
struct BasicAuthenticator: Sendable {
    enum Outcome: Sendable, Equatable {
        case authenticated(Credential)
        /// No or unreadable credentials: answer 401 without counting a failure.
        case missingCredentials
        /// Wrong user or password: answer 401 after `delay`.
        case rejected(delay: Duration)
    }

    static let challenge = #"Basic realm="Rolo", charset="UTF-8""#

    let store: any RoloStore
    let cache: CredentialCache
    let throttle: LoginThrottle
    let checks = SharedPasswordChecks()

    init(store: any RoloStore, cacheLifetime: Duration, throttle: LoginThrottle = LoginThrottle()) {
        self.store = store
        self.cache = CredentialCache(lifetime: cacheLifetime)
        self.throttle = throttle
    }

    /// Forgets cached logins and throttled addresses (a test-control reset).
    func forgetAll() {
        cache.removeAll()
        throttle.removeAll()
    }

    /// `remoteAddress` is only worked out when the password has to be checked.
    func authenticate(authorization: String?, remoteAddress: @autoclosure () -> String) async -> Outcome {
        guard let authorization else { return .missingCredentials }
        if let credential = cache.credential(authorization: authorization) {
            return .authenticated(credential)
        }
        guard let (user, password) = Self.parseBasic(authorization) else { return .missingCredentials }
        if let check = try? store.checkAppPassword(user: user, secret: password) {
            guard !check.revoked else {
                return .rejected(delay: throttle.recordFailure(from: remoteAddress()))
            }
            return .authenticated(Credential(user: user, appPasswordID: check.id, scope: check.scope))
        }
        // bcrypt holds a thread for 70-110 ms: never on an event loop that runs requests.
        let valid = await checks.result(for: authorization) { [store] in
            let matches = await withTaskExecutorPreference(BlockingWorkExecutor.shared) {
                (try? await store.verifyPassword(user: user, password: password)) ?? false
            }
            // "App passwords only": the account password opens no DAV request.
            guard matches else { return false }
            let account = try? await store.account(name: user)
            return account?.appPasswordsOnly != true
        }
        let remoteAddress = remoteAddress()
        guard valid else {
            return .rejected(delay: throttle.recordFailure(from: remoteAddress))
        }
        let credential = Credential.accountPassword(user)
        cache.insert(authorization: authorization, credential: credential)
        throttle.recordSuccess(from: remoteAddress)
        return .authenticated(credential)
    }

    /// Splits `Basic base64(user:password)`; the password may contain colons, the user not.
    static func parseBasic(_ header: String) -> (user: String, password: String)? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8),
              let colon = text.firstIndex(of: ":") else { return nil }
        let user = String(text[..<colon])
        guard !user.isEmpty else { return nil }
        return (user, String(text[text.index(after: colon)...]))
    }
}
