import Foundation

/// Sign-in through an identity provider (the `oidc` source), injected by the server: RoloWeb
/// routes the browser and keeps sessions, the server's `OIDCSignOn` talks to the provider, so
/// no HTTP client lives here.
public protocol WebSingleSignOn: Sendable {
    /// Named on the sign-in page: "Sign in with <displayName>".
    var displayName: String { get }
    /// Where to send the browser, and the state this browser keeps in a cookie to come back with.
    func begin(redirectURI: String, next: String) async -> WebSignOnStart
    /// The provider sent the browser back with `query`; `state` is the one its cookie kept.
    /// `remoteAddress` is the browser's, for the failed-login throttle and log.
    func finish(query: [String: String], state: String?, redirectURI: String, remoteAddress: String) async -> WebSignOnResult
}

public enum WebSignOnStart: Sendable, Equatable {
    case redirect(url: String, state: String)
    /// The provider cannot be reached: 503 with `Retry-After`.
    case unavailable(String)
}

public enum WebSignOnResult: Sendable, Equatable {
    /// `user` exists (made on the first sign-in) and may sign in; `next` is where they were going.
    case signedIn(user: String, next: String)
    /// Counted and logged as a wrong password is (the reason is shown to the browser).
    case refused(String)
    /// Too many failed sign-ins from the browser's network: 429, the provider not asked.
    case throttled(retryAfter: Duration)
    /// The provider cannot be reached: 503 with `Retry-After` (the server logs the outage).
    case unavailable(String)
}

extension WebApp {
    static let signOnRetryAfter = 30

    /// The state cookie of a sign-in under way: SameSite=Lax, so the provider's redirect back
    /// (a top-level GET from another site) brings it.
    static func signOnCookieName(secure: Bool) -> String { secure ? "__Host-rolo_sso" : "rolo_sso" }

    /// Where the provider sends the browser back: the public URL's origin when one is set,
    /// else the origin this request came to.
    func signOnRedirectURI(_ request: WebRequest) -> String {
        let origin = expectedOrigins(request).last ?? ""
        return origin + base + "/login/oidc/callback"
    }

    /// `GET /web/login/oidc`: off to the provider, with the state in a cookie.
    func beginSignOn(_ request: WebRequest, signOn: any WebSingleSignOn) async -> WebResponse {
        let next = Self.safeNext(request.query("next"), base: base) ?? base + "/"
        switch await signOn.begin(redirectURI: signOnRedirectURI(request), next: next) {
        case .redirect(let url, let state):
            var response = WebResponse.redirect(url)
            response.headers.append(("Set-Cookie", Cookies.setCookie(name: Self.signOnCookieName(secure: request.isSecure),
                                                                      value: state, secure: request.isSecure, maxAge: 600)))
            return response
        case .unavailable(let reason):
            return signOnUnavailable(request, reason: reason)
        }
    }

    /// `GET /web/login/oidc/callback`: the provider's answer checked by the server, then a
    /// session as after a password sign-in.
    func finishSignOn(_ request: WebRequest, signOn: any WebSingleSignOn) async throws -> WebResponse {
        var query: [String: String] = [:]
        for (name, value) in request.query { query[name] = value }
        let cookies = Cookies.parse(request.header("cookie"))
        let state = cookies[Self.signOnCookieName(secure: request.isSecure)]
        let clear = Cookies.setCookie(name: Self.signOnCookieName(secure: request.isSecure), value: "",
                                      secure: request.isSecure, maxAge: 0)
        switch await signOn.finish(query: query, state: state, redirectURI: signOnRedirectURI(request),
                                   remoteAddress: request.remoteAddress) {
        case .signedIn(let user, let next):
            if let old = cookies[Cookies.sessionName(secure: request.isSecure)] {
                try? await store.deleteWebSession(tokenHash: Tokens.sha256Hex(old))
            }
            var response = WebResponse.redirect(Self.safeNext(next, base: base) ?? base + "/")
            response.headers.append(("Set-Cookie", try await startSession(user: user, request: request)))
            response.headers.append(("Set-Cookie", clear))
            return response
        case .refused(let reason):
            var response = loginPage(request, error: "Sign-in with \(signOn.displayName) failed: \(reason)", status: 401)
            response.headers.append(("Set-Cookie", clear))
            return response
        case .throttled(let retryAfter):
            var response = loginPage(request, error: "Too many failed sign-ins from your network. Try again later.", status: 429)
            response.headers.append(("Retry-After", String(max(1, retryAfter.components.seconds))))
            response.headers.append(("Set-Cookie", clear))
            return response
        case .unavailable(let reason):
            var response = signOnUnavailable(request, reason: reason)
            response.headers.append(("Set-Cookie", clear))
            return response
        }
    }

    /// The server has logged the outage (once per outage, not once per browser).
    private func signOnUnavailable(_ request: WebRequest, reason: String) -> WebResponse {
        var response = errorPage(.unavailable("\(singleSignOn?.displayName ?? "The sign-in provider") cannot be reached "
            + "right now. Try again in a minute, or sign in with your password."), request: request)
        response.headers.append(("Retry-After", String(Self.signOnRetryAfter)))
        return response
    }
}
