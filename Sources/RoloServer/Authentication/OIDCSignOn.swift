import Crypto
import Foundation
import Logging
import RoloStore
import RoloWeb

/// The `oidc` source: the Authorization Code flow with PKCE (S256), as the web UI's
/// `WebSingleSignOn`. Each sign-in under way is kept here in memory for ten minutes, keyed by
/// its `state` (which the browser also holds in a cookie), with its `nonce` and PKCE
/// verifier; a callback must bring the same state in the query and the cookie, and uses it
/// once. Memory, not the store: a sign-in lasts seconds, one restart costs a click, and a
/// browser that lands on another process of a scale-out pair is refused rather than trusted.
///
/// A refused sign-in counts in the failed-login throttle and the `auth_failed` log
/// (`sso_refused`) as a wrong password does, and a blocked network is refused before the
/// provider is asked; a provider that cannot be reached is logged once per outage.
actor OIDCSignOn: WebSingleSignOn {
    nonisolated let provider: OIDCProvider
    nonisolated let store: any AccountStore
    /// The password logins' throttle and failure log, shared so that no source is a way
    /// around them.
    nonisolated let logins: BasicAuthenticator
    nonisolated let outage: OutageLog
    /// Says why a sign-in was refused: the `auth_failed` line (for fail2ban) names the
    /// user and address only, and the provider's reason is what an admin needs to fix it.
    nonisolated let logger: Logger
    nonisolated var displayName: String { provider.settings.displayName }

    struct Pending {
        var nonce: String
        var verifier: String
        var next: String
        var started: ContinuousClock.Instant
    }

    private var pending: [String: Pending] = [:]
    static let lifetime: Duration = .seconds(600)
    /// Sign-ins under way at most: beyond it the oldest is dropped, so a flood of `begin`s
    /// cannot grow memory without bound.
    static let maximumPending = 10_000

    init(provider: OIDCProvider, store: any AccountStore, logins: BasicAuthenticator, logger: Logger) {
        self.provider = provider; self.store = store; self.logins = logins; self.logger = logger
        self.outage = OutageLog(what: "OpenID provider \(provider.settings.displayName)", logger: logger)
    }

    func begin(redirectURI: String, next: String) async -> WebSignOnStart {
        prune()
        let state = Self.random(), nonce = Self.random(), verifier = Self.random()
        pending[state] = Pending(nonce: nonce, verifier: verifier, next: next, started: .now)
        let challenge = Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8))))
        let settings = provider.settings
        guard var components = URLComponents(url: provider.authorizationEndpoint, resolvingAgainstBaseURL: false) else {
            outage.failed("the authorization endpoint is not a URL")
            return .unavailable("the authorization endpoint is not a URL")
        }
        let existing = components.queryItems ?? []
        components.queryItems = existing + [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: settings.clientID),
            URLQueryItem(name: "redirect_uri", value: redirectURI),
            URLQueryItem(name: "scope", value: settings.scopes.joined(separator: " ")),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "nonce", value: nonce),
            URLQueryItem(name: "code_challenge", value: challenge),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        // `+` is a space to a form decoder: escape it in the query too.
        let query = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        components.percentEncodedQuery = query
        guard let url = components.url else {
            outage.failed("the authorization endpoint is not a URL")
            return .unavailable("the authorization endpoint is not a URL")
        }
        return .redirect(url: url.absoluteString, state: state)
    }

    func finish(query: [String: String], state cookieState: String?, redirectURI: String,
                remoteAddress: String) async -> WebSignOnResult {
        prune()
        if let retryAfter = logins.blockedSignOn(remoteAddress: remoteAddress) { return .throttled(retryAfter: retryAfter) }
        guard let state = query["state"], let cookieState, Self.equal(state, cookieState),
              let sign = pending.removeValue(forKey: state) else {
            return await refused("the sign-in's state does not match this browser's. Start again.", remoteAddress: remoteAddress)
        }
        if let error = query["error"] {
            return await refused("the provider said \(error)" + (query["error_description"].map { " (\($0))" } ?? "") + ".",
                                 remoteAddress: remoteAddress)
        }
        guard let code = query["code"], !code.isEmpty else {
            return await refused("the provider sent no code.", remoteAddress: remoteAddress)
        }
        // The name a verified token gave, for the log of a refusal after the checks (a
        // user outside the required group); a token that fails them names nobody.
        var verifiedName: String?
        do {
            let idToken = try await provider.exchange(code: code, verifier: sign.verifier, redirectURI: redirectURI)
            outage.recovered()
            let claims = try await provider.verify(idToken, nonce: sign.nonce)
            verifiedName = (claims[provider.settings.userClaim] as? String).map(LoginName.normalized)
            let user = try await signIn(claims: claims)
            await logins.signOnSucceeded(remoteAddress: remoteAddress)
            return .signedIn(user: user, next: sign.next)
        } catch let error as OIDCError {
            switch error {
            case .unreachable(let text), .provider(let text):
                outage.failed(text)
                return .unavailable(text)
            case .refused(let text):
                return await refused(text, user: verifiedName, remoteAddress: remoteAddress)
            }
        } catch {
            outage.failed("\(error)")
            return .unavailable("\(error)")
        }
    }

    /// A refusal, counted and logged under `user` (the name the verified token gave, else
    /// "-"), answered after the throttle's delay or as throttled.
    private func refused(_ reason: String, user: String? = nil, remoteAddress: String) async -> WebSignOnResult {
        logger.notice("OpenID sign-in refused", metadata: ["user": "\(user ?? "-")", "ip": "\(remoteAddress)", "reason": "\(reason)"])
        switch await logins.signOnRefused(user: user ?? "-", remoteAddress: remoteAddress) {
        case .throttled(let retryAfter):
            return .throttled(retryAfter: retryAfter)
        case .rejected(let delay):
            if delay > .zero { try? await Task.sleep(for: delay) }
            return .refused(reason)
        default:
            return .refused(reason)
        }
    }

    /// The user the claims name, checked against the group settings, made on the first
    /// sign-in (home and default book) and made or unmade admin by `oidc_admin_group`.
    func signIn(claims: [String: Any]) async throws -> String {
        let settings = provider.settings
        guard let raw = claims[settings.userClaim] as? String, !raw.isEmpty else {
            throw OIDCError.refused("the ID token has no \(settings.userClaim) claim to name the user.")
        }
        let name = LoginName.normalized(raw)
        guard (try? Naming.validate(name, what: "user")) != nil else {
            throw OIDCError.refused("\(settings.userClaim) \"\(raw)\" is not a user name Rolo can use.")
        }
        let groups = Self.groups(claims[settings.groupsClaim])
        if let required = settings.requiredGroup, !groups.contains(required) {
            throw OIDCError.refused("\(name) is not in the group \(required).")
        }
        let user = SourceUser(name: name, displayName: claims["name"] as? String, email: claims["email"] as? String,
                              groups: groups.sorted(), isAdmin: settings.adminGroup.map(groups.contains) ?? false,
                              managesAdmin: settings.adminGroup != nil)
        guard let account = try await SourceAccounts.provision(user, source: .oidc, store: store) else {
            throw OIDCError.refused("\(name) is an account of another source; an admin moves it with rolo user set \(name) --source oidc.")
        }
        guard !account.disabled else { throw OIDCError.refused("the account \(name) is disabled.") }
        return name
    }

    /// A groups claim as providers write it: an array of names, or one name.
    static func groups(_ value: Any?) -> Set<String> {
        if let list = value as? [String] { return Set(list) }
        if let one = value as? String { return [one] }
        return []
    }

    private func prune() {
        let now = ContinuousClock.now
        pending = pending.filter { now - $0.value.started < Self.lifetime }
        if pending.count >= Self.maximumPending,
           let oldest = pending.min(by: { $0.value.started < $1.value.started })?.key {
            pending[oldest] = nil
        }
    }

    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    static func equal(_ left: String, _ right: String) -> Bool {
        let a = Array(left.utf8), b = Array(right.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
