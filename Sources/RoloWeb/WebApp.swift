import Authorization
import DeviceProfiles
import Foundation
import RoloStore

/// How the server checks an account password for the web sign-in: the same login throttle
/// (per client subnet and per account) and failure log as DAV Basic authentication, so
/// guessing through the web form costs the same as guessing through DAV. RoloServer
/// injects it; RoloWeb never runs bcrypt itself.
public typealias WebPasswordCheck = @Sendable (_ user: String, _ password: String, _ remoteAddress: String) async -> WebLoginVerdict

public enum WebLoginVerdict: Sendable, Equatable {
    case valid
    /// Wrong user or password: answer after `delay`.
    case rejected(delay: Duration)
    /// Too many failures from the client's network: refuse without checking.
    case throttled(retryAfter: Duration)
    /// The source that holds the password (the LDAP directory) cannot be reached: 503 with
    /// `Retry-After`, no failure counted, and never a fall-back to another source.
    case unavailable(retryAfter: Duration)
}

/// What the web UI needs to know of the server it runs in.
public struct WebConfiguration: Sendable {
    /// What clients see before `/web` (a reverse proxy's prefix, e.g. `/carddav`); empty by default.
    public var pathPrefix: String
    /// The server's public URL (`ServerConfiguration.publicURL`): its origin is accepted by
    /// the Origin check, and app-password profiles name it.
    public var publicURL: URL?
    /// The DAV tree's path as clients see it (`/dav`), for profiles and the server address shown.
    public var davPath: String
    /// Shown on the admin page.
    public var version: String
    /// The SQLite file, for the admin page's database size (nil: not shown).
    public var databasePath: String?
    /// A session unused this long ends (2 hours).
    public var idleTimeout: TimeInterval
    /// A session ends this long after sign-in, used or not (7 days).
    public var absoluteTimeout: TimeInterval
    /// Largest .vcf upload (50 MB).
    public var maxImportSize: Int
    /// Largest request body of any other form (a photo upload, before the browser's resize: 10 MB).
    public var maxFormSize: Int
    /// Largest photo stored in a card by the editor (256 KB).
    public var maxStoredPhotoSize: Int
    /// Largest card the store takes (the DAV limit).
    public var maxCardSize: Int
    /// Bytes a user may store in total (the DAV quota); nil means no quota.
    public var quotaBytes: Int64?
    /// Signs device profiles (`profile_signing_certificate`, `profile_signing_key`); nil: unsigned.
    public var profileSigner: ProfileSigner?
    /// The organisation's directory (`directory`, issue 32): unless `off`, the account page
    /// has the user's directory entry ("my card"), and saving it rebuilds the directory.
    public var directory: DirectoryMode = .off
    /// `directory_fields`: the fields "My card" offers (the cards carry no others).
    public var directoryFields: Set<DirectoryField> = Set(DirectoryField.allCases)
    /// `directory_opt_out`: "My card" offers "Leave me out of the directory" (off: not offered,
    /// and a post asking for it is refused).
    public var directoryOptOut = true
    /// Brings one user's directory cards up to date as the server's rebuild would (with their
    /// LDAP values when users come from it); nil: from the accounts and entries alone.
    public var rebuildDirectory: (@Sendable (_ user: String) async throws -> Void)?

    public init(pathPrefix: String = "", publicURL: URL? = nil, davPath: String = "/dav", version: String = "dev",
                databasePath: String? = nil, idleTimeout: TimeInterval = 2 * 3600, absoluteTimeout: TimeInterval = 7 * 86_400,
                maxImportSize: Int = 50 << 20, maxFormSize: Int = 12 << 20, maxStoredPhotoSize: Int = 256 << 10,
                maxCardSize: Int = 10 << 20, quotaBytes: Int64? = nil, profileSigner: ProfileSigner? = nil) {
        self.pathPrefix = pathPrefix; self.publicURL = publicURL; self.davPath = davPath; self.version = version
        self.databasePath = databasePath; self.idleTimeout = idleTimeout; self.absoluteTimeout = absoluteTimeout
        self.maxImportSize = maxImportSize; self.maxFormSize = maxFormSize; self.maxStoredPhotoSize = maxStoredPhotoSize
        self.maxCardSize = maxCardSize; self.quotaBytes = quotaBytes; self.profileSigner = profileSigner
    }
}

/// The web UI at `/web/`: server-rendered pages over the store for people (contacts,
/// privacy) and admins (users, health). Framework-free like the DAV engine: the server
/// hands it a `WebRequest` and sends back the `WebResponse`. See Docs/web-ui.md for the
/// URLs and forms, and Docs/architecture.md for how it fits.
///
/// Every answer carries a strict Content-Security-Policy (no inline script or style),
/// `Referrer-Policy: same-origin` and `nosniff`. A session cookie (never accepted by DAV)
/// signs a browser in; every POST needs the session's CSRF token and a same-origin
/// `Origin`/`Sec-Fetch-Site`; no GET changes anything.
/// The store roles the web UI uses: every one but coordination (it takes no locks and follows
/// no change feed); maintenance only for the admin page's figures.
public typealias WebAppStore = CardStore & AccountStore & SharingStore & PushStore & WebStore & StoreMaintenance

public struct WebApp: Sendable {
    public static let prefix = "/web"

    let store: any WebAppStore
    let configuration: WebConfiguration
    let checkPassword: WebPasswordCheck
    /// Sign-in through an identity provider (`oidc`); nil: the password form alone.
    let singleSignOn: (any WebSingleSignOn)?
    /// Nextcloud Login Flow v2 under way: the server starts and polls them, the UI grants them.
    public let loginFlows: LoginFlows?
    let renderer: Renderer
    let assets: StaticAssets
    /// Device profiles waiting for the phone that scans their QR code.
    let profileDownloads = ProfileDownloads()
    /// Told of every error a page could not handle (the person sees a generic page).
    let logError: @Sendable (String) -> Void

    public init(store: any WebAppStore, configuration: WebConfiguration = WebConfiguration(),
                logError: @escaping @Sendable (String) -> Void = { _ in },
                singleSignOn: (any WebSingleSignOn)? = nil, loginFlows: LoginFlows? = nil,
                checkPassword: @escaping WebPasswordCheck) throws {
        self.store = store
        self.singleSignOn = singleSignOn
        self.loginFlows = loginFlows
        self.configuration = configuration
        self.logError = logError
        self.checkPassword = checkPassword
        self.renderer = try Renderer()
        self.assets = StaticAssets()
    }

    /// Whether the server should hand this path to the web UI.
    public static func handles(path: String) -> Bool {
        path == prefix || path.hasPrefix(prefix + "/")
    }

    /// A browser asking for `/` (its `Accept` lists `text/html`) is sent to the web UI; DAV
    /// clients, which never ask for HTML, are not.
    public static func wantsRedirectToUI(method: String, path: String, accept: String?) -> Bool {
        guard method == "GET" || method == "HEAD", path == "/" || path.isEmpty, let accept else { return false }
        return accept.lowercased().contains("text/html")
    }

    /// The largest body a request to `path` may bring (checked before it is read).
    public func maxBodySize(method: String, path: String) -> Int {
        guard method == "POST" else { return 0 }
        return path.hasSuffix("/import") || path.hasSuffix("/import-csv") ? configuration.maxImportSize : configuration.maxFormSize
    }

    /// The URL prefix of every page as the browser sees it.
    var base: String { configuration.pathPrefix + Self.prefix }

    public func handle(_ request: WebRequest) async -> WebResponse {
        var response: WebResponse
        do {
            response = try await route(request)
        } catch {
            response = errorResponse(error, request: request)
        }
        Self.addSecurityHeaders(&response)
        if request.method == "HEAD" { response.body = .bytes(Data()) }
        return response
    }

    /// The error page for what a page threw.
    func errorResponse(_ error: any Error, request: WebRequest) -> WebResponse {
        switch error {
        case let error as WebError:
            return errorPage(error, request: request)
        case let exceeded as QuotaExceeded:
            return errorPage(.quotaExceeded(exceeded.message), request: request)
        default:
            logError("web \(request.method) \(request.path): \(error)")
            return errorPage(.internal("\(error)"), request: request)
        }
    }

    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    static func addSecurityHeaders(_ response: inout WebResponse) {
        response.setHeader("Content-Security-Policy", contentSecurityPolicy)
        response.setHeader("Referrer-Policy", "same-origin")
        response.setHeader("X-Content-Type-Options", "nosniff")
        response.setHeader("X-Frame-Options", "DENY")
        if response.header("Cache-Control") == nil { response.setHeader("Cache-Control", "no-store") }
    }

    // MARK: Routing

    private func route(_ request: WebRequest) async throws -> WebResponse {
        let rest = String(request.path.dropFirst(Self.prefix.count))
        let segments = rest.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let method = request.method == "HEAD" ? "GET" : request.method
        switch (method, segments.first) {
        case ("GET", "static"):
            return staticAsset(segments.dropFirst().joined(separator: "/"))
        case ("GET", "login") where segments.count == 2 && segments[1] == "oidc":
            guard let singleSignOn else { throw WebError.notFound }
            return await beginSignOn(request, signOn: singleSignOn)
        case ("GET", "login") where segments.count == 3 && segments[1] == "oidc" && segments[2] == "callback":
            guard let singleSignOn else { throw WebError.notFound }
            return try await finishSignOn(request, signOn: singleSignOn)
        case ("GET", "login") where request.proxyUser != nil:
            // Signed in by the proxy: no form to fill; the session is made on the next page.
            return .redirect(Self.safeNext(request.query("next"), base: base) ?? base + "/")
        case ("GET", "login"):
            return loginPage(request, error: nil)
        case ("GET", "profile") where segments.count == 2:
            return await oneTimeProfile(token: segments[1])
        case ("POST", "login"):
            return try await signIn(request)
        case (_, _) where method != "GET" && method != "POST":
            return WebResponse(status: 405, headers: [("Allow", "GET, HEAD, POST")])
        default:
            break
        }
        var found = try await session(for: request)
        var setCookie: String?
        if let proxyUser = request.proxyUser {
            let proxied = try await proxySession(for: request, user: proxyUser, current: found)
            found = proxied?.session
            setCookie = proxied?.setCookie
        }
        guard let session = found else {
            if method == "GET", !request.wantsFragment {
                return .redirect(base + "/login?next=" + URLs.queryEscape(request.path + queryString(request)))
            }
            return WebResponse.plain("Sign in first.", status: 401)
        }
        var context = PageContext(request: request, session: session, app: self)
        if method == "POST" {
            let form = try parseForm(request)
            guard checkCSRF(request, form: form, session: session.session) else {
                throw WebError.forbidden("This form is out of date or came from another site. Reload the page and try again.")
            }
            context.form = form
        }
        var response: WebResponse
        do {
            response = try await page(context, method: method, segments: segments)
        } catch where setCookie != nil {
            // The session the proxy's header just made goes to the browser even with an
            // error page, or every such page would leave one behind.
            response = errorResponse(error, request: request)
        }
        if let setCookie { response.headers.append(("Set-Cookie", setCookie)) }
        return response
    }

    /// The signed-in pages, by their first path segment.
    private func page(_ context: PageContext, method: String, segments: [String]) async throws -> WebResponse {
        switch (method, segments.first) {
        case ("POST", "logout"):
            return try await signOut(context)
        case ("GET", nil):
            return try await home(context)
        case (_, "b") where segments.count >= 2:
            return try await bookRoute(context, slug: segments[1], rest: Array(segments.dropFirst(2)), method: method)
        case (_, "privacy"):
            return try await privacyRoute(context, rest: Array(segments.dropFirst()), method: method)
        case (_, "feeds"):
            return try await feedsRoute(context, rest: Array(segments.dropFirst()), method: method)
        case (_, "account"):
            return try await accountRoute(context, rest: Array(segments.dropFirst()), method: method)
        case (_, "books"):
            return try await newBookRoute(context, rest: Array(segments.dropFirst()), method: method)
        case (_, "admin"):
            return try await adminRoute(context, rest: Array(segments.dropFirst()), method: method)
        case (_, "login-flow") where segments.count == 2:
            return try await loginFlowPage(context, loginID: segments[1], method: method)
        default:
            throw WebError.notFound
        }
    }

    private func bookRoute(_ context: PageContext, slug: String, rest: [String], method: String) async throws -> WebResponse {
        guard let book = try await book(slug: slug, user: context.user) else { throw WebError.notFound }
        var context = context
        context.book = book
        // The book itself (rename, delete, leave), not its cards: nothing for the access history.
        if rest.first == "settings" { return try await bookSettingsRoute(context, rest: rest, method: method) }
        var response = try await bookPage(context, rest: rest, method: method)
        if response.status < 400 {
            // A write's cards are counted by the kind of form; reads by what the page showed.
            switch (method, rest.first, rest.last) {
            case ("POST", "c", "delete"): context.tally.deleted(1)
            case ("POST", "undo-changes", _): break // the page counts what it put back and removed
            case ("POST", _, _): context.tally.wrote(1)
            default: break
            }
            response.access = context.tally.access(user: context.user, bookID: book.id)
        }
        return response
    }

    /// A book page runs only after its book grants what the page needs: the route says it
    /// here, once, so no handler can forget, and the page offers what `BookContext.privileges` holds.
    private func bookPage(_ context: PageContext, rest: [String], method: String) async throws -> WebResponse {
        guard let (needs, page) = bookPage(method: method, rest: rest) else { throw WebError.notFound }
        try context.currentBook.require(needs)
        return try await page(context)
    }

    private typealias Page = @Sendable (PageContext) async throws -> WebResponse

    private func bookPage(method: String, rest: [String]) -> (needs: Privileges, page: Page)? {
        let name = rest.count > 1 ? rest[1] : ""
        switch (method, rest.first, rest.count) {
        case ("GET", nil, _): return (.read, { try await listPage($0) })
        case ("GET", "new", 1): return (.bind, { try await newContactPage($0) })
        case ("POST", "new", 1): return (.bind, { try await createContact($0) })
        case ("GET", "c", 2): return (.read, { try await contactPage($0, name: name) })
        case ("GET", "c", 3) where rest[2] == "edit": return (.writeContent, { try await editPage($0, name: name) })
        case ("POST", "c", 3) where rest[2] == "edit": return (.writeContent, { try await saveContact($0, name: name) })
        case ("GET", "c", 3) where rest[2] == "photo": return (.read, { try await photo($0, name: name) })
        case ("POST", "c", 3) where rest[2] == "delete": return (.unbind, { try await deleteContact($0, name: name) })
        case ("GET", "c", 3) where rest[2] == "groups": return (.writeContent, { try await membershipPage($0, name: name) })
        case ("POST", "c", 3) where rest[2] == "groups": return ([.writeContent, .bind], { try await saveMembership($0, name: name) })
        case ("GET", "trash", 1): return (.bind, { try await trashPage($0) })
        case ("POST", "trash", 2) where rest[1] == "restore": return (.bind, { try await restore($0) })
        case ("POST", "undo", 1): return ([.bind, .writeContent], { try await undo($0) })
        case ("POST", "c", 3) where rest[2] == "restore-version": return ([.writeContent, .bind], { try await restoreVersion($0, name: name) })
        case ("GET", "undo-changes", 1): return ([.bind, .writeContent, .unbind], { try await undoChangesPage($0) })
        case ("POST", "undo-changes", 1): return ([.bind, .writeContent, .unbind], { try await undoChanges($0) })
        case ("GET", "duplicates", 1): return ([.writeContent, .unbind], { try await duplicatesPage($0) })
        case ("GET", "merge", 1): return ([.writeContent, .unbind], { try await mergePage($0) })
        case ("POST", "merge", 1): return ([.writeContent, .unbind], { try await merge($0) })
        case ("GET", "import", 1): return ([.bind, .writeContent], { try await importPage($0) })
        case ("POST", "import", 1): return ([.bind, .writeContent], { try await importCards($0) })
        case ("GET", "export", 1): return (.read, { try await export($0) })
        case ("GET", "import-csv", 1): return ([.bind, .writeContent], { try await csvImportPage($0) })
        case ("POST", "import-csv", 1): return ([.bind, .writeContent], { try await csvImport($0) })
        case ("GET", "export-csv", 1): return (.read, { try await exportCSV($0) })
        default: return nil
        }
    }

    private func staticAsset(_ name: String) -> WebResponse {
        guard let asset = assets.asset(named: name) else { return .plain("Not found.", status: 404) }
        return WebResponse(status: 200, headers: [("Content-Type", asset.contentType),
                                                  ("Cache-Control", "public, max-age=31536000, immutable")],
                           body: .bytes(Data(asset.bytes)))
    }

    private func queryString(_ request: WebRequest) -> String {
        request.query.isEmpty ? "" : "?" + request.query.map { URLs.queryEscape($0.name) + "=" + URLs.queryEscape($0.value) }
            .joined(separator: "&")
    }

    // MARK: Forms and CSRF

    func parseForm(_ request: WebRequest) throws -> FormData {
        do {
            return try FormData.parse(body: request.body, contentType: request.header("content-type"))
        } catch {
            throw WebError.badRequest("The form could not be read.")
        }
    }

    /// The session's token (form field `csrf` or header `X-CSRF-Token`) and a same-origin request.
    func checkCSRF(_ request: WebRequest, form: FormData, session: WebSession) -> Bool {
        guard OriginCheck.allows(fetchSite: request.header("sec-fetch-site"), origin: request.header("origin"),
                                 expected: expectedOrigins(request)) else { return false }
        guard let token = form["csrf"].flatMap({ $0.isEmpty ? nil : $0 }) ?? request.header("x-csrf-token") else { return false }
        return Tokens.constantTimeEquals(token, session.csrfToken)
    }

    func expectedOrigins(_ request: WebRequest) -> [String] {
        var origins: [String] = []
        if let own = OriginCheck.origin(host: request.header("host"), secure: request.isSecure) { origins.append(own) }
        if let url = configuration.publicURL, let scheme = url.scheme, let host = url.host {
            origins.append("\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? ""))
        }
        return origins
    }

    // MARK: Errors

    func errorPage(_ error: WebError, request: WebRequest) -> WebResponse {
        if request.wantsFragment || request.path.hasSuffix("/photo") {
            return .plain(error.message, status: error.status)
        }
        let model: [String: Any] = [
            "title": error.heading, "heading": error.heading, "message": error.message, "back": base + "/",
            "base": base, "assets": assetModel, "bodyClass": "error-page",
        ]
        return .html(renderer.render("error", model), status: error.status)
    }

    var assetModel: [String: Any] {
        ["css": base + "/static/" + assets.css.fileName, "js": base + "/static/" + assets.js.fileName]
    }
}

/// Why a page cannot be shown; each becomes an error page with its status.
enum WebError: Error {
    case notFound
    case forbidden(String)
    case badRequest(String)
    case tooLarge(String)
    /// A write would pass the book owner's quota (`QuotaExceeded`).
    case quotaExceeded(String)
    /// Something the page needs cannot be reached (the sign-in provider): 503.
    case unavailable(String)
    case `internal`(String)

    var status: Int {
        switch self {
        case .notFound: 404
        case .forbidden: 403
        case .badRequest: 400
        case .tooLarge: 413
        case .quotaExceeded: 507
        case .unavailable: 503
        case .internal: 500
        }
    }

    var heading: String {
        switch self {
        case .notFound: "Not found"
        case .forbidden: "Not allowed"
        case .badRequest: "Cannot do that"
        case .tooLarge: "Too large"
        case .quotaExceeded: "Storage full"
        case .unavailable: "Try again later"
        case .internal: "Something went wrong"
        }
    }

    var message: String {
        switch self {
        case .notFound: "There is nothing here, or it is not yours to see."
        case .forbidden(let text), .badRequest(let text), .tooLarge(let text), .quotaExceeded(let text),
             .unavailable(let text): text
        case .internal: "The server could not answer. Try again; if it keeps happening, tell the administrator."
        }
    }
}
