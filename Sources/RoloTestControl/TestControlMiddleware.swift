import Foundation
import Hummingbird
import RoloServer

/// The test-control API as the server's front middleware: `/_rolo/` goes to the control
/// endpoints (bearer token, no DAV auth, not logged, never faulted) and every other request
/// is recorded and exposed to fault rules around the route table.
struct TestControlMiddleware: MiddlewareProtocol {
    let control: TestControl

    func handle(_ request: Request, context: RoloRequestContext,
                next: (Request, RoloRequestContext) async throws -> Response) async throws -> Response {
        let path = request.uri.path.removingPercentEncoding ?? request.uri.path
        if TestControl.isControlPath(path) {
            return await control.respondToControl(request, path: path)
        }
        return try await control.intercept(request, path: path) { request in
            try await next(request, context)
        }
    }
}

extension TestAPIConfiguration: FrontMiddlewareFactory {
    public func makeMiddleware(_ server: ServerParts) -> any MiddlewareProtocol<Request, Response, RoloRequestContext> {
        TestControlMiddleware(control: TestControl(configuration: self, store: server.store, limits: server.limits,
                                                   forgetServerState: server.forgetServerState))
    }
}

extension ServerConfiguration {
    /// The test-control API under `/_rolo/` (`rolo serve --test-api`); nil (the default)
    /// answers 404 there, as any unknown DAV path.
    public var testAPI: TestAPIConfiguration? {
        get { frontMiddleware as? TestAPIConfiguration }
        set { frontMiddleware = newValue }
    }
}
