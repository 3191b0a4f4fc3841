import Foundation
import Hummingbird

/// The server's responder with the test-control hook in front: when the test API is on,
/// `/_rolo/` goes to the control endpoints (bearer token, no DAV auth, not logged, never
/// faulted) and every other request is recorded and exposed to fault rules around the
/// normal handling. When it is off, requests go straight through, `/_rolo/` included.
struct TestControlResponder<Inner: HTTPResponder>: HTTPResponder {
    typealias Context = Inner.Context

    let inner: Inner
    let control: TestControl?

    func respond(to request: Request, context: Context) async throws -> Response {
        guard let control else { return try await inner.respond(to: request, context: context) }
        let path = request.uri.path.removingPercentEncoding ?? request.uri.path
        if TestControl.isControlPath(path) {
            return await control.respondToControl(request, path: path)
        }
        return try await control.intercept(request, path: path) { request in
            try await inner.respond(to: request, context: context)
        }
    }
}
