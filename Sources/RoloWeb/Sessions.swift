import Authorization
import Foundation
import RoloStore

/// A signed-in request: the session, the user's account and, inside a book's pages, the book.
struct PageContext: Sendable {
    let request: WebRequest
    let session: WebSession
    let account: UserAccount
    var form = FormData()
    var book: BookContext?
    let base: String
    let assets: [String: String]
    /// What the request read and wrote, for the access history (`WebAccess`).
    let tally = WebTally()

    init(request: WebRequest, session: ActiveSession, app: WebApp) {
        self.request = request
        self.session = session.session
        self.account = session.account
        self.base = app.base
        self.assets = ["css": app.base + "/static/" + app.assets.css.fileName, "js": app.base + "/static/" + app.assets.js.fileName]
    }

    var user: String { session.user }
    var csrf: String { session.csrfToken }
    /// A web session is signed in with the account password.
    var credential: Credential { .accountPassword(user) }

    /// Refuses an account action `Access` does not allow this user (403 with its reason).
    func require(_ action: AccountAction) throws {
        do {
            try Access.require(action, by: .user(credential, admin: account.admin))
        } catch {
            throw WebError.forbidden(error.message)
        }
    }

    /// The book of a book page (routing sets it before any book page runs).
    var currentBook: BookContext {
        get throws {
            guard let book else { throw WebError.notFound }
            return book
        }
    }

    /// What every page's layout reads.
    func layout(title: String, bodyClass: String = "", flash: [String: Any]? = nil) -> [String: Any] {
        [
            "title": title, "base": base, "assets": assets, "csrf": csrf, "bodyClass": bodyClass,
            "user": ["name": user, "admin": account.admin] as [String: Any],
            "flash": flash ?? false, "search": false, "hasDetail": false,
        ]
    }
}

/// A session found for a request, with its user's account.
struct ActiveSession: Sendable {
    var session: WebSession
    var account: UserAccount
}

extension WebApp {
    // MARK: Session lookup

    /// The session the request's cookie names, if it is known, not past its idle or absolute
    /// timeout, and its user may sign in. Notes the use (at most once a minute).
    func session(for request: WebRequest) async throws -> ActiveSession? {
        let cookies = Cookies.parse(request.header("cookie"))
        guard let token = cookies[Cookies.sessionName(secure: request.isSecure)], token.count >= 32, token.count <= 64 else {
            return nil
        }
        let hash = Tokens.sha256Hex(token)
        guard let session = try await store.webSession(tokenHash: hash) else { return nil }
        let now = store.clock.now
        if now.timeIntervalSince(session.lastSeen) > configuration.idleTimeout
            || now.timeIntervalSince(session.created) > configuration.absoluteTimeout {
            try await store.deleteWebSession(tokenHash: hash)
            return nil
        }
        guard let account = try await store.account(name: session.user), !account.disabled else { return nil }
        if now.timeIntervalSince(session.lastSeen) > 60 { try await store.touchWebSession(tokenHash: hash) }
        return ActiveSession(session: session, account: account)
    }

    // MARK: Sign in and out

    func loginPage(_ request: WebRequest, error: String?, userName: String = "", status: Int = 200) -> WebResponse {
        // A nonce in a cookie and in the form (double submit): a login form posted from
        // another site has neither.
        let nonce = Tokens.random(bytes: 16)
        let model: [String: Any] = [
            "title": "Sign in", "base": base, "assets": assetModel, "bodyClass": "login", "search": false,
            "user": false, "flash": false, "hasDetail": false,
            "loginToken": nonce, "next": Self.safeNext(request.query("next"), base: base) ?? "",
            "error": error ?? false, "userName": userName,
            "signOn": signOnModel(request),
        ]
        var response = WebResponse.html(renderer.render("login", model), status: status)
        response.headers.append(("Set-Cookie", Cookies.setCookie(name: Cookies.loginName(secure: request.isSecure), value: nonce,
                                                                  secure: request.isSecure, maxAge: 3600)))
        return response
    }

    /// The "Sign in with <provider>" link of the sign-in page, or false without one.
    private func signOnModel(_ request: WebRequest) -> Any {
        guard let singleSignOn else { return false }
        let next = Self.safeNext(request.query("next"), base: base).map(URLs.queryEscape) ?? ""
        return ["name": singleSignOn.displayName, "next": next]
    }

    static let genericLoginError = "The user name or password is wrong, or the account cannot sign in."
    /// Says nothing of whether the password was right: nobody could check it.
    static let sourceUnavailableError = "Your password cannot be checked right now: the directory that holds it "
        + "cannot be reached. Try again in a minute."

    func signIn(_ request: WebRequest) async throws -> WebResponse {
        let form = try parseForm(request)
        let cookies = Cookies.parse(request.header("cookie"))
        guard OriginCheck.allows(fetchSite: request.header("sec-fetch-site"), origin: request.header("origin"),
                                 expected: expectedOrigins(request)),
              let nonce = cookies[Cookies.loginName(secure: request.isSecure)], let posted = form["csrf"],
              Tokens.constantTimeEquals(nonce, posted) else {
            return loginPage(request, error: "The sign-in form was out of date. Try again.", status: 403)
        }
        let user = (form["user"] ?? "").trimmingCharacters(in: .whitespaces)
        let password = form["password"] ?? ""
        guard !user.isEmpty, !password.isEmpty else {
            return loginPage(request, error: Self.genericLoginError, userName: user, status: 401)
        }
        switch await checkPassword(user, password, request.remoteAddress) {
        case .throttled(let retryAfter):
            var response = loginPage(request, error: "Too many failed sign-ins from your network. Try again later.",
                                     userName: user, status: 429)
            response.headers.append(("Retry-After", String(max(1, retryAfter.components.seconds))))
            return response
        case .unavailable(let retryAfter):
            var response = loginPage(request, error: Self.sourceUnavailableError, userName: user, status: 503)
            response.headers.append(("Retry-After", String(max(1, retryAfter.components.seconds))))
            return response
        case .rejected(let delay):
            if delay > .zero { try? await Task.sleep(for: delay) }
            return loginPage(request, error: Self.genericLoginError, userName: user, status: 401)
        case .valid:
            break
        }
        guard let account = try await store.account(name: user), !account.disabled else {
            return loginPage(request, error: Self.genericLoginError, userName: user, status: 401)
        }
        // A fresh token at every sign-in; the old session of this browser, if any, ends.
        if let old = cookies[Cookies.sessionName(secure: request.isSecure)] {
            try? await store.deleteWebSession(tokenHash: Tokens.sha256Hex(old))
        }
        let next = Self.safeNext(form["next"], base: base) ?? base + "/"
        var response = WebResponse.redirect(next)
        response.headers.append(("Set-Cookie", try await startSession(user: account.name, request: request)))
        response.headers.append(("Set-Cookie", Cookies.setCookie(name: Cookies.loginName(secure: request.isSecure), value: "",
                                                                  secure: request.isSecure, maxAge: 0)))
        return response
    }

    /// A new session for `user` (a fresh token and CSRF token): the `Set-Cookie` value that
    /// gives it to this browser.
    func startSession(user: String, request: WebRequest) async throws -> String {
        try await newSession(user: user, request: request).cookie
    }

    private func newSession(user: String, request: WebRequest) async throws -> (cookie: String, tokenHash: String) {
        let token = Tokens.random(bytes: 32)
        let hash = Tokens.sha256Hex(token)
        try await store.createWebSession(tokenHash: hash, user: user, csrfToken: Tokens.random(bytes: 32))
        return (Cookies.setCookie(name: Cookies.sessionName(secure: request.isSecure), value: token,
                                  secure: request.isSecure, maxAge: Int(configuration.absoluteTimeout)), hash)
    }

    /// The session of a request a trusted proxy names the user of (`WebRequest.proxyUser`):
    /// the browser's own when it is that user's, else a new one (the proxy signed someone
    /// else in: the old session ends), with the `Set-Cookie` that gives it to the browser.
    /// Nil when the account is gone or disabled.
    func proxySession(for request: WebRequest, user: String,
                      current: ActiveSession?) async throws -> (session: ActiveSession, setCookie: String?)? {
        if let current, current.session.user == user { return (current, nil) }
        guard let account = try await store.account(name: user), !account.disabled else { return nil }
        if let old = Cookies.parse(request.header("cookie"))[Cookies.sessionName(secure: request.isSecure)] {
            try? await store.deleteWebSession(tokenHash: Tokens.sha256Hex(old))
        }
        let made = try await newSession(user: user, request: request)
        guard let session = try await store.webSession(tokenHash: made.tokenHash) else { return nil }
        return (ActiveSession(session: session, account: account), made.cookie)
    }

    func signOut(_ context: PageContext) async throws -> WebResponse {
        let request = context.request
        if let token = Cookies.parse(request.header("cookie"))[Cookies.sessionName(secure: request.isSecure)] {
            try await store.deleteWebSession(tokenHash: Tokens.sha256Hex(token))
        }
        var response = WebResponse.redirect(base + "/login")
        response.headers.append(("Set-Cookie", Cookies.setCookie(name: Cookies.sessionName(secure: request.isSecure), value: "",
                                                                  secure: request.isSecure, maxAge: 0)))
        return response
    }

    /// A `next` that stays inside the web UI (no `//host`, no scheme): anything else is dropped.
    static func safeNext(_ next: String?, base: String) -> String? {
        guard let next, next.hasPrefix(base + "/") || next == base, !next.contains("//"), !next.contains("\\"),
              !next.contains(where: { $0.isNewline || $0 == "\0" }) else { return nil }
        return next
    }
}
