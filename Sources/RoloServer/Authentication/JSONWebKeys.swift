import _CryptoExtras
import Crypto
import Foundation

/// A provider's signing keys (its JWKS document, RFC 7517) and the check of a JWS
/// signature (RFC 7515) against them. Only what ID tokens use: RS256 and ES256; `none` and
/// the HMAC algorithms are refused (an HMAC "signature" keyed with a public key is the
/// classic forgery).
struct JSONWebKeys: Sendable {
    /// A public key as its bytes (swift-crypto's key types are not `Sendable`): an RSA key's
    /// DER SubjectPublicKeyInfo, a P-256 key's x || y.
    enum Key: Sendable, Equatable {
        case rsa(Data)
        case p256(Data)
    }

    struct Entry: Sendable {
        var kid: String?
        var key: Key
    }

    var entries: [Entry]

    /// The usable keys of a JWKS document; keys of other types, curves or uses are skipped.
    init(json: Data) throws {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
              let keys = object["keys"] as? [[String: Any]] else {
            throw OIDCError.provider("the JWKS document is not a JSON object with \"keys\"")
        }
        entries = keys.compactMap { jwk in
            if let use = jwk["use"] as? String, use != "sig" { return nil }
            let kid = jwk["kid"] as? String
            switch jwk["kty"] as? String {
            case "RSA":
                guard let n = (jwk["n"] as? String).flatMap(Base64URL.decode),
                      let e = (jwk["e"] as? String).flatMap(Base64URL.decode),
                      let key = try? _RSA.Signing.PublicKey(n: n, e: e) else { return nil }
                return Entry(kid: kid, key: .rsa(key.derRepresentation))
            case "EC":
                guard jwk["crv"] as? String == "P-256",
                      let x = (jwk["x"] as? String).flatMap(Base64URL.decode),
                      let y = (jwk["y"] as? String).flatMap(Base64URL.decode), x.count == 32, y.count == 32,
                      let key = try? P256.Signing.PublicKey(rawRepresentation: x + y) else { return nil }
                return Entry(kid: kid, key: .p256(key.rawRepresentation))
            default:
                return nil
            }
        }
    }

    init(entries: [Entry]) { self.entries = entries }

    /// The key a token's header names: by `kid`, or without one the only key of its type.
    func key(kid: String?, algorithm: String) -> Key? {
        let fitting = entries.filter { entry in
            switch (entry.key, algorithm) {
            case (.rsa, "RS256"), (.p256, "ES256"): true
            default: false
            }
        }
        if let kid { return fitting.first { $0.kid == kid }?.key }
        return fitting.count == 1 ? fitting[0].key : nil
    }

    /// Whether `signature` is `key`'s signature of `input` under `algorithm`.
    static func verify(_ signature: Data, of input: Data, with key: Key, algorithm: String) -> Bool {
        switch (key, algorithm) {
        case (.rsa(let der), "RS256"):
            guard let key = try? _RSA.Signing.PublicKey(derRepresentation: der) else { return false }
            let signature = _RSA.Signing.RSASignature(rawRepresentation: signature)
            return key.isValidSignature(signature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        case (.p256(let raw), "ES256"):
            guard let key = try? P256.Signing.PublicKey(rawRepresentation: raw) else { return false }
            // JWS carries ES256 as r || s, 64 bytes: P256's raw representation.
            guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: SHA256.hash(data: input))
        default:
            return false
        }
    }
}

/// base64url without padding (RFC 7515 §2), as JOSE writes every part.
enum Base64URL {
    static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            .replacingOccurrences(of: "=", with: "")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    static func encode(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
