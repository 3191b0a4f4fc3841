import HTTPTypes
import Hummingbird

/// The server's own answers, in the shape the route table sends them, for a front
/// middleware (the test-control API's faults) that must answer exactly as the server would.
public enum ServerAnswers {
    /// A `text/plain` answer.
    public static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        RoloResponder.plain(status, text)
    }

    /// 413 for a body over `limit`, with the CardDAV precondition for PUT.
    public static func tooLarge(method: String, limit: Int) -> Response {
        RoloResponder.tooLarge(method: method, limit: limit)
    }

    /// The reason phrase the server sends with `code` (WebDAV's own codes included).
    public static func reasonPhrase(_ code: Int) -> String {
        RoloResponder.reasonPhrase(code)
    }

    /// The user an `Authorization: Basic` header names, if it is well-formed.
    public static func basicUser(_ authorization: String) -> String? {
        BasicAuthenticator.parseBasic(authorization)?.user
    }
}
