import HTTPTypes
import Hummingbird
import RoloWeb

/// One line of the route table (`RoloResponder.routeTable`): which requests it takes, what
/// runs before its handler (authentication, then the body within its limit) and the handler.
/// The access log and metrics wrap every route, the 400 for an undecodable path included.
struct Route: Sendable {
    /// Which percent-decoded paths a route takes.
    enum Paths: Sendable {
        /// Exactly these.
        case exactly([String])
        /// `root` itself and everything below it (`/web`, `/web/…`).
        case tree(String)
        /// Every path starting with this string (`/api/`).
        case prefix(String)
        /// Every path: the DAV tree, last in the table.
        case all

        func match(_ path: String) -> Bool {
            switch self {
            case .exactly(let paths): paths.contains(path)
            case .tree(let root): path == root || (path.hasPrefix(root) && path.dropFirst(root.count).first == "/")
            case .prefix(let prefix): path.hasPrefix(prefix)
            case .all: true
            }
        }
    }

    enum Methods: Sendable {
        case all
        case only([String])

        func match(_ method: String) -> Bool {
            switch self {
            case .all: true
            case .only(let methods): methods.contains(method)
            }
        }
    }

    /// Who may send the request, checked before any byte of the body is read.
    enum Authentication: Sendable {
        /// Anyone.
        case none
        /// The web UI's own session cookie, which the UI checks itself; its sign-in form goes
        /// through the same login throttle as Basic (`BasicAuthenticator.checkWebLogin`).
        case webSession
        /// HTTP Basic with the account password or an app password (`BasicAuthenticator`,
        /// behind the login throttle): 401 with `WWW-Authenticate`, 429 with `Retry-After`
        /// for a blocked subnet (before the password is looked at), 503 when the database is
        /// down. OPTIONS goes through without credentials (as the user "").
        case basic
    }

    /// How much of the body is read before the handler runs; over it, 413 before reading.
    enum BodyLimit: Sendable {
        /// None is read.
        case none
        /// `RequestLimits.maxBodySize(forMethod:)`; PUT's 413 carries CardDAV's
        /// `max-resource-size`.
        case request
        /// The web UI's for the form (`WebApp.maxBodySize`: an import, another form, none).
        case webForm
    }

    /// What answers.
    enum Handler: Sendable {
        case wellKnownRedirect, health, metrics, web, browserRedirect, accountAPI, dav, feed, loginFlow
    }

    let paths: Paths
    let methods: Methods
    /// A condition on the request beyond its path and method (the browser redirect's `Accept`).
    var when: (@Sendable (_ method: String, _ path: String, _ request: Request) -> Bool)?
    let authentication: Authentication
    let body: BodyLimit
    let handler: Handler

    init(_ paths: Paths, _ methods: Methods, when: (@Sendable (String, String, Request) -> Bool)? = nil,
         authentication: Authentication, body: BodyLimit, _ handler: Handler) {
        self.paths = paths; self.methods = methods; self.when = when
        self.authentication = authentication; self.body = body; self.handler = handler
    }

    func matches(method: String, path: String, request: Request) -> Bool {
        methods.match(method) && paths.match(path) && (when?(method, path, request) ?? true)
    }
}

extension RoloResponder {
    /// Every route the server answers, first match wins. GETs and HEADs of cards mostly never
    /// get here: `InlineGetHandler` answers them before NIO's codec, with the same fields and
    /// the same access log, when the login is cached (see Docs/architecture.md).
    static func routeTable(webUI: Bool) -> [Route] {
        var routes = [
            // Service discovery (RFC 6764): any method, no credentials.
            Route(.exactly(["/.well-known/carddav", "/.well-known/carddav/"]), .all,
                  authentication: .none, body: .none, .wellKnownRedirect),
            Route(.exactly(["/health"]), .only(["GET", "HEAD"]), authentication: .none, body: .none, .health),
            Route(.exactly(["/metrics"]), .only(["GET"]), authentication: .none, body: .none, .metrics),
            // Feeds at secret URLs (issue 33): the secret is the credential; every method, so
            // that no request below /feeds meets a Basic challenge (405 but for GET and HEAD).
            Route(.tree(FeedEndpoint.root), .all, authentication: .none, body: .none, .feed),
        ]
        if webUI {
            routes += [
                // The web UI's session cookie opens nothing else: DAV and `/api/` answer it 401.
                Route(.tree(WebApp.prefix), .all, authentication: .webSession, body: .webForm, .web),
                // Nextcloud Login Flow v2: a client gets an app password through the UI.
                Route(.exactly([LoginFlowEndpoint.start, LoginFlowEndpoint.poll]), .only(["POST"]),
                      authentication: .none, body: .request, .loginFlow),
                // A browser asking for `/` goes to the UI; DAV clients never ask for HTML.
                Route(.exactly(["/", ""]), .only(["GET", "HEAD"]), when: { method, path, request in
                    WebApp.wantsRedirectToUI(method: method, path: path, accept: request.headers[.accept])
                }, authentication: .none, body: .none, .browserRedirect),
            ]
        }
        routes += [
            // Shares, app passwords and history of the signed-in user, as JSON.
            Route(.prefix(AccountAPI.prefix), .all, authentication: .basic, body: .request, .accountAPI),
            // Everything else is WebDAV/CardDAV: the engine answers unknown paths and methods.
            Route(.all, .all, authentication: .basic, body: .request, .dav),
        ]
        return routes
    }
}
