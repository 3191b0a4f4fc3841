import Foundation
import RoloStore

/// A DAV request as the protocol engine sees it: no HTTP framework types.
/// `path` is the percent-decoded request path; `headers` names are lower-cased.
public struct DAVRequest: Sendable {
    public var method: String
    public var path: String
    public var headers: [String: String]
    public var body: Data
    /// The authenticated user.
    public var user: String

    public init(method: String, path: String, headers: [String: String], body: Data, user: String) {
        self.method = method; self.path = path; self.headers = headers; self.body = body; self.user = user
    }
}

/// A DAV response: status, headers and a whole body.
public struct DAVResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: Data

    public init(status: Int, headers: [(String, String)] = [], body: Data = Data()) {
        self.status = status; self.headers = headers; self.body = body
    }
}
