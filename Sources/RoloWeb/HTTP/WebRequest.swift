import Foundation

/// A request as the web UI sees it, framework-free like `DAVRequest`: the server turns its
/// HTTP request into one of these and the answer (`WebResponse`) back into HTTP. So every
/// page can be tested without a socket, and RoloWeb never depends on Hummingbird.
public struct WebRequest: Sendable {
    public var method: String
    /// Percent-decoded path, starting with `/web`.
    public var path: String
    /// The query string's parameters in order, percent-decoded (`+` is a space).
    public var query: [(name: String, value: String)]
    /// Header fields with lower-cased names; repeated fields joined with ", ".
    public var headers: [String: String]
    public var body: Data
    /// The client's address as the login throttle keys it (after a trusted proxy's
    /// `X-Forwarded-For`).
    public var remoteAddress: String
    /// The browser reached the server over TLS (directly, or a trusted proxy said so): the
    /// session cookie is then `Secure` and `__Host-` prefixed.
    public var isSecure: Bool
    /// The user a trusted reverse proxy named (the `proxy` source), already checked and made
    /// by the server: the UI signs this browser in as that user without the password form.
    public var proxyUser: String?

    public init(method: String, path: String, query: [(name: String, value: String)] = [], headers: [String: String] = [:],
                body: Data = Data(), remoteAddress: String = "unknown", isSecure: Bool = false) {
        self.method = method; self.path = path; self.query = query; self.headers = headers
        self.body = body; self.remoteAddress = remoteAddress; self.isSecure = isSecure
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The last value of a query parameter.
    public func query(_ name: String) -> String? { query.last { $0.name == name }?.value }

    /// Every value of a repeated query parameter (`?c=a&c=b`).
    public func queryValues(_ name: String) -> [String] { query.filter { $0.name == name }.map(\.value) }

    /// Asked for by the page's script: answer with the fragment, not the whole page.
    public var wantsFragment: Bool { header("x-requested-with") != nil }

    /// Parses a query string (`a=1&b=x+y`) into its parameters.
    public static func parseQuery(_ text: String) -> [(name: String, value: String)] {
        FormData.parseURLEncoded(text).map { ($0.name, $0.value) }
    }
}
