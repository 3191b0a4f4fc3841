import Crypto
import Foundation

/// The server's VAPID key (RFC 8292): one persistent P-256 signing key whose public half is
/// advertised in `P:vapid-public-key`. A push service that got that key at subscription
/// time accepts only messages signed by it, so the key must survive restarts; changing it
/// orphans every subscription.
public struct VAPIDKey: Sendable {
    /// The 32-byte private scalar: what the store keeps. (Kept as bytes, not as swift-crypto's
    /// key, which is not `Sendable`.)
    public let rawRepresentation: Data
    /// 65 bytes, `0x04` ‖ x ‖ y (X9.63): the form `k=` and `vapid-public-key` carry. The
    /// 64-byte `rawRepresentation` of a public key has no prefix and is wrong here.
    public let publicKey: Data

    /// A new random key.
    public init() {
        self.init(P256.Signing.PrivateKey())
    }

    /// A stored key: the 32-byte private scalar from `rawRepresentation`.
    public init(rawRepresentation: Data) throws {
        self.init(try P256.Signing.PrivateKey(rawRepresentation: rawRepresentation))
    }

    private init(_ key: P256.Signing.PrivateKey) {
        rawRepresentation = key.rawRepresentation
        publicKey = key.publicKey.x963Representation
    }

    /// `publicKey` as base64url without padding: 87 characters, the only form UnifiedPush accepts.
    public var publicKeyBase64URL: String { Base64URL.encode(publicKey) }

    /// The `Authorization` header value for a push to `audience`:
    /// `vapid t=<JWT>, k=<publicKeyBase64URL>` (RFC 8292 §3). The JWT is ES256 over the
    /// claims `aud` (the push resource's origin, see `origin(of:)`), `exp` (RFC 8292 §2:
    /// at most 24 hours ahead) and `sub` (a `mailto:` or `https:` contact for the push
    /// service's operator).
    public func authorization(audience: String, subject: String, expires: Date) throws -> String {
        "vapid t=\(try token(audience: audience, subject: subject, expires: expires)), k=\(publicKeyBase64URL)"
    }

    /// The JWT alone (JWS compact serialization).
    public func token(audience: String, subject: String, expires: Date) throws -> String {
        let encoder = JSONEncoder()
        // Sorted for output that repeats; unescaped so `https://` stays as written.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = try encoder.encode(["typ": "JWT", "alg": "ES256"])
        let claims = try encoder.encode(Claims(aud: audience, exp: Int(expires.timeIntervalSince1970.rounded(.down)),
                                               sub: subject))
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        // ES256 hashes with SHA-256 itself; JWS wants r ‖ s (64 bytes), not DER.
        let signingKey = try P256.Signing.PrivateKey(rawRepresentation: rawRepresentation)
        let signature = try signingKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    private struct Claims: Encodable {
        var aud: String
        var exp: Int
        var sub: String
    }

    /// The origin of `url` as the `aud` claim wants it (RFC 6454): `scheme://host[:port]`,
    /// lower-cased, the port left out when it is the scheme's default, an IPv6 host in
    /// brackets. Nil without a scheme or a host.
    public static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = PushTarget.host(of: url) else { return nil }
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let defaultPort: Int? = switch scheme {
        case "https": 443
        case "http": 80
        default: nil
        }
        if let port = url.port, port != defaultPort { return "\(scheme)://\(hostPart):\(port)" }
        return "\(scheme)://\(hostPart)"
    }
}
