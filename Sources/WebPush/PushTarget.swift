import Foundation

/// Checks on a push resource URL that a client registered. The server will POST to it, so
/// an unchecked URL would let any user make the server reach its own loopback, the LAN or
/// a cloud metadata address (SSRF). This is the check on the text; the sender also checks
/// what the host name resolves to, right before each POST.
public enum PushTarget {
    /// The longest push resource accepted, in UTF-8 bytes (UnifiedPush's endpoint limit).
    public static let maxLength = 1000

    /// Which push resources are acceptable.
    public struct Policy: Sendable, Hashable {
        /// For tests only: lets `http://` and `https://` to 127.0.0.0/8, `[::1]` and
        /// `localhost` through, so a fake push service on loopback can be used.
        public var allowLoopback: Bool
        /// Origins (`https://push.example.net`, as `VAPIDKey.origin(of:)` writes them) that
        /// may be used; nil allows any public one.
        public var allowedOrigins: [String]?

        public init(allowLoopback: Bool = false, allowedOrigins: [String]? = nil) {
            self.allowLoopback = allowLoopback
            self.allowedOrigins = allowedOrigins
        }

        /// Whether the server may connect to `address`: a public one, or a loopback one
        /// when `allowLoopback` is set.
        public func permits(_ address: IPAddress) -> Bool {
            address.isPublic || (allowLoopback && address.isLoopback)
        }
    }

    /// `text` as a URL the server may POST to, or why not: an absolute `https` URL of at
    /// most `maxLength` bytes, without user info, whose host is a name or a public IP
    /// address (loopback and `http` too with `allowLoopback`), at an allowed origin.
    /// Names are not resolved here: that is the sender's check, at send time.
    public static func validate(_ text: String, policy: Policy) throws(PushTargetError) -> URL {
        let length = text.utf8.count
        guard length <= maxLength else { throw .tooLong(bytes: length) }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else { throw .notAbsolute }
        guard scheme == "https" || scheme == "http" else { throw .schemeNotAllowed(scheme) }
        guard url.user == nil, url.password == nil else { throw .userInfo }
        guard let host = host(of: url), !host.isEmpty else { throw .missingHost }
        if let port = url.port, !(1...65535).contains(port) { throw .invalidPort(port) }

        let loopback: Bool
        switch classify(host: host) {
        case .invalid:
            throw .invalidHost(host)
        case .name:
            loopback = false
        case .localhost:
            guard policy.allowLoopback else { throw .notPublic(host) }
            loopback = true
        case .address(let address):
            guard policy.permits(address) else { throw .notPublic(host) }
            loopback = address.isLoopback
        }
        // Plain http only where nothing crosses a network: a fake push service in a test.
        guard scheme == "https" || loopback else { throw .schemeNotAllowed(scheme) }

        if let allowed = policy.allowedOrigins {
            let origin = VAPIDKey.origin(of: url) ?? ""
            let normalized = allowed.map { entry in URL(string: entry).flatMap(VAPIDKey.origin(of:)) ?? entry }
            guard normalized.contains(origin) else { throw .originNotAllowed(origin) }
        }
        return url
    }

    /// The host of `url` as a resolver wants it, and as AsyncHTTPClient connects to it
    /// (`URL.host`: percent-escapes decoded, IDNA applied): lower-cased, without the
    /// brackets of an IPv6 literal; nil when the URL has none.
    public static func host(of url: URL) -> String? {
        guard var host = url.host else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.lowercased()
    }

    /// What a URL's host is, for the checks above.
    public enum HostKind: Sendable, Hashable {
        /// A DNS name, to be resolved and checked at send time.
        case name
        /// `localhost` or a name under `.localhost`, which resolvers answer with loopback.
        case localhost
        /// An IP literal.
        case address(IPAddress)
        /// Neither: a `%` (an IPv6 zone) in the host, or a number that resolvers would
        /// read as an IPv4 address in a form other than dotted decimal (`2130706433`,
        /// `0x7f.1`, `127.1`), which could otherwise slip a private address past the check.
        case invalid
    }

    public static func classify(host: String) -> HostKind {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty, !name.contains("%") else { return .invalid }
        if let address = IPAddress(name) { return .address(address) }
        if name.contains(":") { return .invalid }
        if name == "localhost" || name.hasSuffix(".localhost") { return .localhost }
        // No top-level domain is numeric, so a numeric last label means an IPv4 address in
        // one of inet_aton's older spellings.
        let last = name.split(separator: ".", omittingEmptySubsequences: false).last ?? ""
        if last.allSatisfy({ ("0"..."9").contains($0) }) || last.hasPrefix("0x") { return .invalid }
        return .name
    }
}

/// Why a push resource was refused. The message names what was wrong, for the log and the
/// client.
public enum PushTargetError: Error, Sendable, Hashable, CustomStringConvertible {
    case tooLong(bytes: Int)
    case notAbsolute
    case schemeNotAllowed(String)
    case userInfo
    case missingHost
    case invalidPort(Int)
    case invalidHost(String)
    /// The host is loopback, private, link-local or otherwise not on the public internet.
    case notPublic(String)
    case originNotAllowed(String)

    public var description: String {
        switch self {
        case .tooLong(let bytes):
            "the push resource is \(bytes) bytes long; at most \(PushTarget.maxLength) are accepted"
        case .notAbsolute:
            "the push resource is not an absolute URL"
        case .schemeNotAllowed(let scheme):
            "the push resource must be an https URL, not \(scheme)"
        case .userInfo:
            "the push resource must not contain a user name or password"
        case .missingHost:
            "the push resource has no host"
        case .invalidPort(let port):
            "the push resource's port \(port) is out of range"
        case .invalidHost(let host):
            "the push resource's host \(host) is not a valid name or IP address"
        case .notPublic(let host):
            "the push resource's host \(host) is not a public address"
        case .originNotAllowed(let origin):
            "push resources at \(origin) are not allowed by this server"
        }
    }
}
