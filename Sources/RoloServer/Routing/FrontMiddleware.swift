import Hummingbird
import RoloStore

/// What a front middleware may use of the server it sits in front of.
public struct ServerParts: Sendable {
    /// The store the server serves.
    public let store: any RoloStore
    public let limits: RequestLimits
    /// Forgets the server's in-memory state outside the store: DAV locks, cached logins,
    /// the login throttle.
    public let forgetServerState: @Sendable () async -> Void
}

/// Makes a middleware that runs in front of the whole route table
/// (`ServerConfiguration.frontMiddleware`). The test-control API (`RoloTestControl`) is one,
/// and lives in its own target so the server does not contain it. A front middleware sees
/// every request, so the inline GET path is off while one is set; without one, requests go
/// to the route table directly and pay for nothing.
public protocol FrontMiddlewareFactory: Sendable {
    func makeMiddleware(_ server: ServerParts) -> any MiddlewareProtocol<Request, Response, RoloRequestContext>
}

/// The route table's responder behind a front middleware.
struct FrontedResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == RoloRequestContext {
    let front: any MiddlewareProtocol<Request, Response, RoloRequestContext>
    let inner: Inner

    func respond(to request: Request, context: RoloRequestContext) async throws -> Response {
        try await front.handle(request, context: context) { request, context in
            try await inner.respond(to: request, context: context)
        }
    }
}
