import _CryptoExtras
import Crypto
import Foundation
@testable import RoloServer
import Testing

/// The ID token's checks as a pure function: a token signed by the provider's key with the
/// right issuer, audience, expiry and nonce passes; each of those wrong, a tampered payload,
/// `alg: none` or HS256, and a key not in the JWKS are refused.
@Suite struct IDTokenCheckTests {
    static let issuer = "https://id.example.org/realms/rolo"
    static let check = IDTokenCheck(issuer: issuer, clientID: "rolo")
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    /// The provider's key, kept as bytes (swift-crypto's keys are not `Sendable`).
    static let keyBytes = P256.Signing.PrivateKey().rawRepresentation
    static var key: P256.Signing.PrivateKey { try! P256.Signing.PrivateKey(rawRepresentation: keyBytes) }
    static let keys = JSONWebKeys(entries: [.init(kid: "k1", key: .p256(key.publicKey.rawRepresentation))])

    static func claims(_ changes: [String: Any] = [:]) -> [String: Any] {
        var claims: [String: Any] = ["iss": issuer, "aud": "rolo", "sub": "1234", "preferred_username": "carol",
                                     "exp": now.timeIntervalSince1970 + 300, "iat": now.timeIntervalSince1970, "nonce": "n-1"]
        for (name, value) in changes { claims[name] = value }
        return claims
    }

    static func part(_ object: [String: Any]) -> String {
        Base64URL.encode(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    static func token(_ claims: [String: Any] = claims(), kid: String = "k1", key: P256.Signing.PrivateKey = key) -> String {
        let input = part(["alg": "ES256", "typ": "JWT", "kid": kid]) + "." + part(claims)
        let signature = try! key.signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Base64URL.encode(signature)
    }

    func refusal(_ token: String, nonce: String = "n-1", keys: JSONWebKeys = IDTokenCheckTests.keys) -> String? {
        do {
            _ = try Self.check.claims(of: token, keys: keys, nonce: nonce, now: Self.now)
            return nil
        } catch let error as OIDCError {
            return error.description
        } catch {
            return "\(error)"
        }
    }

    @Test func aWellSignedTokenForThisClientPasses() throws {
        let claims = try Self.check.claims(of: Self.token(), keys: Self.keys, nonce: "n-1", now: Self.now)
        #expect(claims["preferred_username"] as? String == "carol")
        // An audience list holding the client, issued to it, passes too.
        #expect(refusal(Self.token(Self.claims(["aud": ["other", "rolo"], "azp": "rolo"]))) == nil)
    }

    @Test func aTamperedPayloadFailsTheSignature() {
        let parts = Self.token().split(separator: ".").map(String.init)
        let forged = Self.part(Self.claims(["preferred_username": "admin"]))
        #expect(refusal(parts[0] + "." + forged + "." + parts[2])?.contains("signature") == true)
    }

    @Test func anotherKeysSignatureFailsEvenUnderTheRightKid() {
        #expect(refusal(Self.token(key: P256.Signing.PrivateKey()))?.contains("signature") == true)
    }

    @Test func theWrongIssuerAudienceOrAuthorizedPartyIsRefused() {
        #expect(refusal(Self.token(Self.claims(["iss": "https://evil.example.org"])))?.contains("issuer") == true)
        #expect(refusal(Self.token(Self.claims(["aud": "someone-else"])))?.contains("not meant for this client") == true)
        #expect(refusal(Self.token(Self.claims(["aud": ["rolo", "other"], "azp": "other"])))?.contains("another client") == true)
    }

    @Test func anExpiredTokenIsRefusedPastTheLeeway() {
        #expect(refusal(Self.token(Self.claims(["exp": Self.now.timeIntervalSince1970 - 61])))?.contains("expired") == true)
        #expect(refusal(Self.token(Self.claims(["exp": Self.now.timeIntervalSince1970 - 30]))) == nil)
        var noExpiry = Self.claims()
        noExpiry["exp"] = nil
        #expect(refusal(Self.token(noExpiry))?.contains("no expiry") == true)
    }

    @Test func anotherSignInsNonceIsRefused() {
        #expect(refusal(Self.token(), nonce: "n-2")?.contains("nonce") == true)
        var noNonce = Self.claims()
        noNonce["nonce"] = nil
        #expect(refusal(Self.token(noNonce))?.contains("nonce") == true)
    }

    @Test func unsignedAndHMACTokensAreRefusedWhateverTheirClaims() {
        let none = Self.part(["alg": "none"]) + "." + Self.part(Self.claims()) + "."
        #expect(refusal(none)?.contains("algorithm") == true)
        let hmac = Self.part(["alg": "HS256", "kid": "k1"]) + "." + Self.part(Self.claims()) + "." + Base64URL.encode(Data(repeating: 1, count: 32))
        #expect(refusal(hmac)?.contains("algorithm") == true)
        #expect(refusal("not.a-token")?.contains("not a signed JWT") == true)
    }

    @Test func aKidTheKeysDoNotHoldAsksForARefetch() {
        #expect(throws: IDTokenCheck.UnknownKey(kid: "k2")) {
            try Self.check.claims(of: Self.token(kid: "k2"), keys: Self.keys, nonce: "n-1", now: Self.now)
        }
    }

    @Test func anRS256TokenVerifiesAgainstItsJWK() throws {
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        // The JWK as a provider publishes it: n and e, base64url.
        let der = rsa.publicKey.derRepresentation
        let jwks = try JSONWebKeys(json: Self.jwks(rsaPublicKeyDER: der, kid: "r1"))
        let input = Self.part(["alg": "RS256", "kid": "r1"]) + "." + Self.part(Self.claims())
        let signature = try rsa.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        let token = input + "." + Base64URL.encode(signature.rawRepresentation)
        #expect(refusal(token, keys: jwks) == nil)
        #expect(refusal(input + "." + Base64URL.encode(Data(signature.rawRepresentation.reversed())), keys: jwks)?
            .contains("signature") == true)
    }

    /// The JWKS of one RSA key, its modulus and exponent read from the SubjectPublicKeyInfo
    /// DER (the last two INTEGERs of the RSAPublicKey).
    static func jwks(rsaPublicKeyDER der: Data, kid: String) throws -> Data {
        let bytes = [UInt8](der)
        var integers: [[UInt8]] = []
        var index = 0
        func length() -> Int {
            let first = Int(bytes[index]); index += 1
            guard first & 0x80 != 0 else { return first }
            var value = 0
            for _ in 0..<(first & 0x7f) { value = value << 8 | Int(bytes[index]); index += 1 }
            return value
        }
        while index < bytes.count {
            let tag = bytes[index]; index += 1
            let count = length()
            switch tag {
            case 0x30: continue
            case 0x03: index += 1 // the BIT STRING's unused-bits byte, then the RSAPublicKey SEQUENCE
            case 0x02:
                var value = Array(bytes[index..<index + count]); index += count
                while value.first == 0, value.count > 1 { value.removeFirst() }
                integers.append(value)
            default: index += count
            }
        }
        let n = integers[integers.count - 2], e = integers[integers.count - 1]
        let jwk: [String: Any] = ["kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                                  "n": Base64URL.encode(n), "e": Base64URL.encode(e)]
        return try JSONSerialization.data(withJSONObject: ["keys": [jwk]])
    }
}
