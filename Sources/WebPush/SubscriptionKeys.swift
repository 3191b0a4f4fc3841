import Crypto
import Foundation

/// The keys a client registers with its push subscription (RFC 8291 §3): the user agent's
/// P-256 public key (`p256dh`) and its authentication secret. Checked once, on the way in,
/// so that a stored subscription can always be encrypted to.
public struct SubscriptionKeys: Sendable, Hashable {
    /// 65 bytes: `0x04` ‖ x ‖ y, an uncompressed point on P-256 (X9.63).
    public let publicKey: Data
    /// 16 bytes (RFC 8291 §3.2).
    public let authSecret: Data

    public init(publicKey: Data, authSecret: Data) throws(SubscriptionKeyError) {
        guard publicKey.count == 65 else {
            throw .invalidPublicKey("the public key is \(publicKey.count) bytes, not 65")
        }
        guard publicKey.first == 0x04 else {
            throw .invalidPublicKey("the public key is not an uncompressed point (it does not start with 0x04)")
        }
        // Also catches points that are not on the curve, which ECDH would trip over later.
        guard (try? P256.KeyAgreement.PublicKey(x963Representation: publicKey)) != nil else {
            throw .invalidPublicKey("the public key is not a point on P-256")
        }
        guard authSecret.count == 16 else {
            throw .invalidAuthSecret("the auth secret is \(authSecret.count) bytes, not 16")
        }
        self.publicKey = Data(publicKey)
        self.authSecret = Data(authSecret)
    }

    /// The keys as a push-register body carries them: base64url, with or without padding.
    public init(publicKeyBase64URL: String, authSecretBase64URL: String) throws(SubscriptionKeyError) {
        guard let publicKey = Base64URL.decode(publicKeyBase64URL.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw .invalidPublicKey("the public key is not base64url")
        }
        guard let authSecret = Base64URL.decode(authSecretBase64URL.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw .invalidAuthSecret("the auth secret is not base64url")
        }
        try self.init(publicKey: publicKey, authSecret: authSecret)
    }

    /// `publicKey` as the subscription carried it, base64url without padding.
    public var publicKeyBase64URL: String { Base64URL.encode(publicKey) }
    /// `authSecret`, base64url without padding.
    public var authSecretBase64URL: String { Base64URL.encode(authSecret) }
}

/// Why subscription keys were refused; the message says what was wrong, for a log line or
/// an error body.
public enum SubscriptionKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidPublicKey(String)
    case invalidAuthSecret(String)

    public var description: String {
        switch self {
        case .invalidPublicKey(let reason), .invalidAuthSecret(let reason): reason
        }
    }
}
