import Authorization
import Foundation
import RoloStore

/// A DAV request as the protocol engine sees it: no HTTP framework types.
/// `path` is the percent-decoded request path; `headers` names are lower-cased.
public struct DAVRequest: Sendable {
    public var method: String
    public var path: String
    public var headers: [String: String]
    public var body: Data
    /// Who asks, with which credential: what `Access` decides from.
    public var credential: Credential
    /// Counts what the request served for the access history; nil when nobody keeps one.
    public var tally: RequestTally?

    /// The authenticated user.
    public var user: String { credential.user }

    public init(method: String, path: String, headers: [String: String], body: Data, user: String) {
        self.init(method: method, path: path, headers: headers, body: body, credential: .accountPassword(user))
    }

    public init(method: String, path: String, headers: [String: String], body: Data, credential: Credential,
                tally: RequestTally? = nil) {
        self.method = method; self.path = path; self.headers = headers; self.body = body
        self.credential = credential; self.tally = tally
    }
}

/// A DAV response: status, headers and either a whole body (`body`, everything small) or,
/// for listings too big to hold, a body written while it is sent (`streamedBody`; `body`
/// is then empty and the length is not known in advance).
public struct DAVResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: Data
    /// Set for big multistatus answers (see `DAVBodyStream`).
    public var streamedBody: DAVBodyStream?

    public init(status: Int, headers: [(String, String)] = [], body: Data = Data()) {
        self.status = status; self.headers = headers; self.body = body; self.streamedBody = nil
    }

    public init(status: Int, headers: [(String, String)] = [], streamedBody: DAVBodyStream) {
        self.status = status; self.headers = headers; self.body = Data(); self.streamedBody = streamedBody
    }

    /// Seconds a client is asked to wait (`Retry-After`) when the store's database cannot be
    /// reached: the server answers 503 and the store reconnects by itself.
    public static let unavailableRetryAfter = 5

    /// The same response with a streamed body read into `body` (tests, in-process callers).
    public func collected() async throws -> DAVResponse {
        guard let streamedBody else { return self }
        return DAVResponse(status: status, headers: headers, body: try await streamedBody.collect())
    }
}
