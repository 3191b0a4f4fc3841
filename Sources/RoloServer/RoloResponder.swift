import Authorization
import DAV
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RoloStore
import RoloWeb

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
}

/// The protocol engine as the server calls it: one DAV request in, one response out.
public typealias DAVHandler = @Sendable (DAVRequest) async -> DAVResponse

/// Takes every method on every path and answers it through the route table
/// (`routeTable`, Routing/Route.swift): the first route whose path and method match, after
/// its authentication and body limit. The access log and metrics cover every request.
/// A class: every request's task and closures hold it, and a struct of this size was copied
/// into each of them (2 % of a PUT's samples, issue 34).
final class RoloResponder: HTTPResponder, Sendable {
    typealias Context = RoloRequestContext

    let configuration: ServerConfiguration
    let authenticator: BasicAuthenticator
    let handler: DAVHandler
    /// The store lookup a DAV request on a path makes first, bound for its sign-in
    /// (`LookupAhead`): a store that reads the login's stamp over a network reads it too.
    let lookupAhead: RoloServer.LookupAheadMaker?
    let accessLog: AccessLog
    /// The access history: what each credential read and wrote, counted per request.
    let recorder: AccessRecorder?
    /// `/api/`: shares, app passwords and history of the signed-in user, as JSON.
    let api: AccountAPI
    /// `/web/`: the web UI, which signs browsers in with its own session cookie. Nil: no UI.
    let web: WebApp?
    /// `/feeds/<secret>`: birthday calendars and phone books. Nil: every feed is 404.
    let feeds: FeedEndpoint?
    let routes: [Route]
    /// The `proxy` source with its header's name, when `auth_sources` lists it.
    let proxy: (source: ProxySource, header: HTTPField.Name)?

    init(configuration: ServerConfiguration, authenticator: BasicAuthenticator, handler: @escaping DAVHandler,
         lookupAhead: RoloServer.LookupAheadMaker? = nil, accessLog: AccessLog, recorder: AccessRecorder?,
         api: AccountAPI, web: WebApp?, feeds: FeedEndpoint? = nil) {
        self.configuration = configuration; self.authenticator = authenticator; self.handler = handler
        self.feeds = feeds
        self.lookupAhead = lookupAhead
        self.accessLog = accessLog; self.recorder = recorder; self.api = api; self.web = web
        self.routes = Self.routeTable(webUI: web != nil)
        if configuration.authSources.contains(.proxy), let header = configuration.proxyUserHeader,
           let name = HTTPField.Name(header) {
            proxy = (ProxySource(header: header, trustedProxies: configuration.trustedProxies, store: authenticator.store), name)
        } else {
            proxy = nil
        }
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        let started = ContinuousClock.now
        let method = request.method.rawValue
        var user = "-"
        // Worked out only when a password is checked or a line is logged.
        let remote = {
            ClientAddress.resolve(peer: context.remoteAddress, forwardedFor: request.headers[.xForwardedFor],
                                  trustedProxies: self.configuration.trustedProxies)
        }
        let response: Response
        do {
            if let path = Self.decodedPath(request.uri.path) {
                let ahead = lookupAhead?(path, method) { name in
                    HTTPField.Name(name).flatMap { request.headers[values: $0] }.flatMap { $0.isEmpty ? nil : $0.joined(separator: ", ") }
                }
                response = try await LookupAhead.$current.withValue(ahead) {
                    try await route(request, method: method, path: path, remote: remote, peer: { context.remoteAddress },
                                    user: &user)
                }
            } else {
                response = Self.plain(.badRequest, "The path is not percent-encoded UTF-8, or encodes '/' or NUL in a name.\n")
            }
        } catch {
            // Only reading the body throws: the client went away or sent a broken stream.
            response = Self.plain(.badRequest, "Could not read the request body.\n")
        }
        accessLog.record(method: method, path: request.uri.path, status: Int(response.status.code), since: started,
                         user: user, remote: remote)
        return response
    }

    /// The first matching route's authentication, body limit and handler, in that order.
    private func route(_ request: Request, method: String, path: String, remote: () -> String, peer: () -> String,
                       user: inout String) async throws -> Response {
        // The table ends with the DAV route, which takes every request.
        let matched = routes.first { $0.matches(method: method, path: path, request: request) } ?? routes[routes.count - 1]
        var credential = Credential.accountPassword("")
        switch matched.authentication {
        case .none, .webSession:
            break
        case .basic:
            switch await authenticate(request, method: method, remote: remote, peer: peer) {
            case .success(let authenticated):
                credential = authenticated
                user = authenticated.user
            case .failure(let refusal):
                return refusal.response
            }
        }
        let body: Data
        switch matched.body {
        case .none:
            body = Data()
        case .request:
            let limit = configuration.limits.maxBodySize(forMethod: method)
            guard let collected = try await collectBody(request, limit: limit) else {
                return Self.tooLarge(method: method, limit: limit)
            }
            body = collected
        case .webForm:
            let limit = web?.maxBodySize(method: method, path: path) ?? 0
            guard let collected = try await collectBody(request, limit: limit) else {
                return Self.plain(.contentTooLarge, "Request body larger than \(limit) bytes.\n")
            }
            body = collected
        }
        switch matched.handler {
        case .wellKnownRedirect:
            var headers = HTTPFields()
            headers[.location] = configuration.publicPathPrefix + configuration.basePath + "/"
            return Response(status: .movedPermanently, headers: headers)
        case .health:
            return Self.plain(.ok, "ok\n")
        case .feed:
            guard let feeds else { return FeedEndpoint.notFound() }
            return await feeds.answer(method: method, path: path, ifNoneMatch: request.headers[.ifNoneMatch],
                                      ifModifiedSince: request.headers[.ifModifiedSince])
        case .metrics:
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers,
                            body: ResponseBody(byteBuffer: ByteBuffer(string: await accessLog.metrics.exposition())))
        case .browserRedirect:
            var headers = HTTPFields()
            headers[.location] = configuration.publicPathPrefix + WebApp.prefix + "/"
            headers[.vary] = "Accept"
            return Response(status: .seeOther, headers: headers)
        case .loginFlow:
            guard let flows = web?.loginFlows else { return Self.plain(.notFound, "Not Found\n") }
            return await LoginFlowEndpoint(flows: flows, root: publicRoot(request, peer: peer()))
                .answer(path: path, userAgent: request.headers[.userAgent], body: body)
        case .web:
            guard let web else { return Self.plain(.notFound, "Not Found\n") }
            return await webResponse(request, path: path, body: body, web: web, remote: remote(), peer: peer())
        case .accountAPI where !credential.user.isEmpty:
            let answer = await api.handle(method: method, path: path, query: Self.query(of: request), body: body,
                                          credential: credential)
            if let counts = answer.counts, let recorder {
                recorder.record(credential, counts: counts, address: remote(), userAgent: request.headers[.userAgent])
            }
            var headers = HTTPFields()
            if !answer.json.isEmpty { headers[.contentType] = "application/json; charset=utf-8" }
            if answer.status == 503 { headers[.retryAfter] = String(DAVResponse.unavailableRetryAfter) }
            return Response(status: HTTPResponse.Status(code: answer.status), headers: headers,
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.json)))
        case .accountAPI, .dav:
            // An OPTIONS of `/api/` without credentials gets DAV's answer (its `Allow`).
            return await davResponse(request, method: method, path: path, body: body, credential: credential,
                                     remote: remote)
        }
    }

    /// Why a request is refused before its route's handler runs.
    private struct Refusal: Error {
        let response: Response
    }

    /// `Route.Authentication.basic`: Basic or an app password, through the login throttle.
    /// A trusted proxy's header (the `proxy` source) decides before Basic is read.
    private func authenticate(_ request: Request, method: String, remote: () -> String,
                              peer: () -> String) async -> Result<Credential, Refusal> {
        if let proxy, let name = proxy.source.user(peer: peer(), value: request.headers[proxy.header]) {
            let enabled: Bool
            do {
                enabled = try await proxy.source.ensureUser(name)
            } catch {
                return .failure(Refusal(response: Self.unavailable()))
            }
            guard enabled else { return .failure(Refusal(response: Self.unauthorized())) }
            return .success(.accountPassword(name))
        }
        let outcome = await authenticator.authenticate(authorization: request.headers[.authorization],
                                                       remoteAddress: remote())
        switch outcome {
        case .authenticated(let authenticated):
            return .success(authenticated)
        case .missingCredentials where method == "OPTIONS", .rejected where method == "OPTIONS",
             .throttled where method == "OPTIONS", .unavailable where method == "OPTIONS":
            return .success(.accountPassword(""))
        case .missingCredentials:
            return .failure(Refusal(response: Self.unauthorized()))
        case .rejected(let delay):
            if delay > .zero { try? await Task.sleep(for: delay) }
            return .failure(Refusal(response: Self.unauthorized()))
        case .throttled(let retryAfter):
            return .failure(Refusal(response: Self.tooManyRequests(retryAfter: retryAfter)))
        case .unavailable:
            return .failure(Refusal(response: Self.unavailable()))
        }
    }

    /// The engine's answer to a DAV request, its tally recorded once the answer is sent.
    private func davResponse(_ request: Request, method: String, path: String, body: Data, credential: Credential,
                             remote: () -> String) async -> Response {
        let tally = recorder == nil || credential.user.isEmpty ? nil : RequestTally()
        let davRequest = DAVRequest(method: method, path: path, headers: Self.lowercasedHeaders(request.headers),
                                    body: body, credential: credential, tally: tally)
        let davResponse = await handler(davRequest)
        guard let tally, let recorder else { return Self.response(from: davResponse, forHead: method == "HEAD") }
        let address = remote()
        let userAgent = request.headers[.userAgent]
        // Counted once the answer is sent: a streamed listing counts its cards as it goes.
        return Self.response(from: davResponse, forHead: method == "HEAD") {
            recorder.record(credential, counts: tally.counts, address: address, userAgent: userAgent)
        }
    }

    /// Hands a `/web/` request, its body read within the UI's limit for the path, to the web
    /// UI: whether the browser came over TLS (the public URL is https, or a trusted proxy
    /// says so), and the answer back as HTTP (streamed for an export).
    private func webResponse(_ request: Request, path: String, body: Data, web: WebApp, remote: String,
                             peer: String) async -> Response {
        let method = request.method.rawValue
        var headers = Self.lowercasedHeaders(request.headers)
        if let authority = request.head.authority { headers["host"] = authority }
        let query = request.uri.query.map { WebRequest.parseQuery($0) } ?? []
        var webRequest = WebRequest(method: method, path: path, query: query, headers: headers, body: body,
                                    remoteAddress: remote, isSecure: isSecure(request, peer: peer))
        // The same rule as DAV's: the header counts from a trusted peer only, and a disabled
        // account gets no session (the UI then shows its sign-in page).
        if let proxy, let name = proxy.source.user(peer: peer, value: request.headers[proxy.header]) {
            do {
                if try await proxy.source.ensureUser(name) { webRequest.proxyUser = name }
            } catch {
                return Self.unavailable()
            }
        }
        let answer = await web.handle(webRequest)
        if let access = answer.access, let recorder {
            var counts = RequestTally.Counts(bookID: access.bookID)
            counts.cardsRead = access.cardsRead; counts.cardsWritten = access.cardsWritten
            counts.cardsDeleted = access.cardsDeleted; counts.fullDownload = access.fullDownload
            recorder.record(.accountPassword(access.user), counts: counts, address: remote, userAgent: request.headers[.userAgent])
        }
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        let status = HTTPResponse.Status(code: answer.status, reasonPhrase: Self.reasonPhrase(answer.status))
        switch answer.body {
        case .bytes(let data):
            return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        case .stream(let next):
            return Response(status: status, headers: fields, body: ResponseBody { writer in
                var buffer = ByteBuffer()
                while let chunk = try await next() {
                    buffer.clear(minimumCapacity: chunk.count)
                    buffer.writeBytes(chunk)
                    try await writer.write(buffer)
                }
                try await writer.finish(nil)
            })
        }
    }

    /// The server's address as clients outside see it, without a trailing `/`: the public
    /// URL's origin and path, else this request's host with the proxy prefix.
    func publicRoot(_ request: Request, peer: String) -> String {
        if let url = configuration.publicURL, let scheme = url.scheme, let host = url.host {
            var path = url.path
            while path.hasSuffix("/") { path.removeLast() }
            return "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "") + path
        }
        let scheme = isSecure(request, peer: peer) ? "https" : "http"
        return "\(scheme)://\(request.head.authority ?? "localhost")" + configuration.publicPathPrefix
    }

    /// The browser reached the server over TLS: the public URL says https, or the request
    /// came through a trusted proxy that says `X-Forwarded-Proto: https`.
    private func isSecure(_ request: Request, peer: String) -> Bool {
        if configuration.publicURL?.scheme?.lowercased() == "https" { return true }
        guard configuration.trustedProxies.contains(peer),
              let proto = request.headers[.xForwardedProto]?.split(separator: ",").last?
                .trimmingCharacters(in: .whitespaces).lowercased() else { return false }
        return proto == "https"
    }

    /// The query string's parameters, percent-decoded (the last of a repeated name wins).
    static func query(of request: Request) -> [String: String] {
        var parameters: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { parameters[String(name)] = String(value) }
        return parameters
    }

    /// The whole body, or nil as soon as it is known to exceed `limit` (from Content-Length
    /// before reading anything, or while streaming a chunked body).
    private func collectBody(_ request: Request, limit: Int) async throws -> Data? {
        if let length = request.headers[.contentLength] {
            if let declared = Int(length) {
                if declared > limit { return nil }
                if declared == 0 { return Data() }
            }
        } else if request.headers[.transferEncoding] == nil {
            // Neither a length nor chunked: a request without a body (RFC 9112 §6.3).
            return Data()
        }
        var body = Data()
        // Room for the whole declared body at once: growing by doubling copied a 10 MB card
        // four times on its way in and held twice its size at the last step.
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > 0 { body.reserveCapacity(declared) }
        for try await chunk in request.body {
            if body.count + chunk.readableBytes > limit { return nil }
            body.append(contentsOf: chunk.readableBytesView)
        }
        return body
    }

    /// The request path percent-decoded, as the engine takes it; nil when it cannot be
    /// (`PercentEncoding.decode`), which the client is told with 400.
    static func decodedPath(_ raw: String) -> String? {
        PercentEncoding.decode(raw)
    }

    static func lowercasedHeaders(_ fields: HTTPFields) -> [String: String] {
        var headers: [String: String] = [:]
        for field in fields {
            let name = field.name.canonicalName
            if let existing = headers[name] {
                headers[name] = existing + ", " + field.value
            } else {
                headers[name] = field.value
            }
        }
        return headers
    }

    /// `sent` runs once the body has been handed over (after the last chunk of a streamed one).
    static func response(from dav: DAVResponse, forHead isHead: Bool, sent: (@Sendable () -> Void)? = nil) -> Response {
        let head = responseHead(from: dav)
        if let stream = dav.streamedBody, !isHead {
            // Length unknown: chunked.
            return Response(status: head.status, headers: head.headerFields, body: streamedBody(stream, sent: sent))
        }
        sent?()
        if isHead { return Response(status: head.status, headers: head.headerFields) }
        return Response(status: head.status, headers: head.headerFields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: dav.body)))
    }

    /// The status line and header fields of the engine's answer (`forEachField`).
    static func responseHead(from dav: DAVResponse) -> HTTPResponse {
        var headers = HTTPFields()
        headers.reserveCapacity(dav.headers.count + 3)
        forEachField(of: dav) { name, value in
            if let fieldName = fieldName(name) { headers.append(HTTPField(name: fieldName, value: value)) }
        }
        return HTTPResponse(status: HTTPResponse.Status(code: dav.status, reasonPhrase: reasonPhrase(dav.status)),
                            headerFields: headers)
    }

    /// The header fields of the engine's answer in order; for a whole body, then its
    /// `Content-Length` when the engine set none (a HEAD's answer has the length of the GET's
    /// body, which the engine sets itself). Both `responseHead(from:)` and
    /// `writeWholeAnswer` (the inline path) take an answer's fields from here.
    static func forEachField(of dav: DAVResponse, _ body: (_ name: String, _ value: String) -> Void) {
        var hasLength = false
        for (name, value) in dav.headers {
            if !hasLength, name.utf8.count == 14, name.lowercased() == "content-length" { hasLength = true }
            body(name, value)
        }
        if dav.streamedBody == nil, !hasLength { body("Content-Length", String(dav.body.count)) }
    }

    /// The field name for a header the engine set. The names of a GET's answer come as
    /// constants, not parsed from the string (a check of every character and a lower-cased
    /// copy, for every answer).
    static func fieldName(_ name: String) -> HTTPField.Name? {
        switch name {
        case "ETag": .eTag
        case "Last-Modified": .lastModified
        case "Content-Type": .contentType
        case "Content-Length": .contentLength
        case "Vary": .vary
        default: HTTPField.Name(name)
        }
    }

    /// Each chunk goes to the connection as it is made; `writer.write` waits while the
    /// channel is not writable (NIO's back-pressure), so a slow client holds up the
    /// producer, not the server's memory. When the stream throws, the error leaves the
    /// closure before `finish`: Hummingbird then closes the connection, and the client sees
    /// a cut chunked body instead of a well-formed but incomplete document.
    ///
    /// One `ByteBuffer` carries every chunk: once the channel has written a chunk and let
    /// go of it, `clear()` keeps its storage, so a 2-30 MB answer is not a fresh 256 KB
    /// allocation per chunk (glibc's mmap, with a page fault per 4 KB written). While the
    /// channel still holds the previous chunk, `clear()` allocates new storage instead.
    private static func streamedBody(_ stream: DAVBodyStream, sent: (@Sendable () -> Void)?) -> ResponseBody {
        ResponseBody { writer in
            defer { sent?() }
            var buffer = ByteBuffer()
            try await stream.write { chunk in
                buffer.clear(minimumCapacity: chunk.count)
                buffer.writeBytes(chunk)
                try await writer.write(buffer)
            }
            try await writer.finish(nil)
        }
    }

    static func reasonPhrase(_ code: Int) -> String {
        switch code {
        case 207: "Multi-Status"
        case 422: "Unprocessable Content"
        case 423: "Locked"
        case 424: "Failed Dependency"
        case 507: "Insufficient Storage"
        default: HTTPResponse.Status(code: code).reasonPhrase
        }
    }

    static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func unauthorized() -> Response {
        var response = plain(.unauthorized, "Authentication required.\n")
        response.headers[.wwwAuthenticate] = BasicAuthenticator.challenge
        return response
    }

    /// 429 with `Retry-After` in whole seconds (rounded up, at least 1).
    static func tooManyRequests(retryAfter: Duration) -> Response {
        var response = plain(.tooManyRequests, "Too many failed logins from your network; try again later.\n")
        response.headers[.retryAfter] = String(retryAfterSeconds(retryAfter))
        return response
    }

    /// 503 with `Retry-After`: the database could not be reached to check the credentials.
    static func unavailable() -> Response {
        var response = plain(.serviceUnavailable, "The database is unavailable; try again later.\n")
        response.headers[.retryAfter] = String(DAVResponse.unavailableRetryAfter)
        return response
    }

    static func retryAfterSeconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, seconds + (attoseconds > 0 ? 1 : 0))
    }

    /// 413; for PUT with the CardDAV precondition element the RFC names.
    static func tooLarge(method: String, limit: Int) -> Response {
        guard method == "PUT" else {
            return plain(.contentTooLarge, "Request body larger than \(limit) bytes.\n")
        }
        let xml = """
            <?xml version="1.0" encoding="utf-8"?>
            <D:error xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"><C:max-resource-size/></D:error>

            """
        var headers = HTTPFields()
        headers[.contentType] = "application/xml; charset=utf-8"
        return Response(status: .contentTooLarge, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
    }
}
