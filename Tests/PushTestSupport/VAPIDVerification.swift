import Crypto
import Foundation
import WebPush

/// A push service's check of an `Authorization: vapid t=…, k=…` header (RFC 8292 §3),
/// written apart from `VAPIDKey` for the same reason as `WebPushDecryption`.
public enum VAPIDVerification {
    public enum Failure: Error, Equatable {
        case notVAPID(String)
        case malformedToken
        case badPublicKey
        case badHeader(String)
        case signatureLength(Int)
        case badSignature
    }

    public struct Claims: Decodable, Equatable, Sendable {
        public var aud: String
        public var exp: Int
        public var sub: String

        public init(aud: String, exp: Int, sub: String) {
            self.aud = aud; self.exp = exp; self.sub = sub
        }
    }

    /// What a valid header carried.
    public struct Verified: Equatable, Sendable {
        public var claims: Claims
        /// `k`, decoded: 65 bytes.
        public var publicKey: Data
        /// `k` as sent.
        public var publicKeyText: String
        public var signatureLength: Int
    }

    /// Checks the signature of `t` against `k` and returns the claims; throws for anything
    /// a push service would refuse (DER signatures included).
    public static func verify(authorization: String) throws -> Verified {
        let pattern = /^vapid t=(\S+?)\s*,\s*k=(\S+)$/
        guard let match = authorization.wholeMatch(of: pattern) else { throw Failure.notVAPID(authorization) }
        let token = String(match.1), keyText = String(match.2)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerJSON = Base64URL.decode(String(parts[0])),
              let claimsJSON = Base64URL.decode(String(parts[1])),
              let signatureBytes = Base64URL.decode(String(parts[2])) else { throw Failure.malformedToken }
        guard let keyBytes = Base64URL.decode(keyText),
              let publicKey = try? P256.Signing.PublicKey(x963Representation: keyBytes) else { throw Failure.badPublicKey }
        let header = try JSONDecoder().decode([String: String].self, from: headerJSON)
        guard header["alg"] == "ES256", header["typ"] == "JWT" else {
            throw Failure.badHeader(String(decoding: headerJSON, as: UTF8.self))
        }
        guard signatureBytes.count == 64 else { throw Failure.signatureLength(signatureBytes.count) }
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        guard publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)) else {
            throw Failure.badSignature
        }
        let claims = try JSONDecoder().decode(Claims.self, from: claimsJSON)
        return Verified(claims: claims, publicKey: keyBytes, publicKeyText: keyText,
                        signatureLength: signatureBytes.count)
    }
}
