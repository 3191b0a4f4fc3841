import Crypto
import Foundation
import Testing
import WebPush

@Suite struct SubscriptionKeysTests {
    /// RFC 8291 §5.
    static let clientPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"

    @Test func acceptsTheRFCKeys() throws {
        let keys = try SubscriptionKeys(publicKeyBase64URL: Self.clientPublic, authSecretBase64URL: Self.authSecret)
        #expect(keys.publicKey.count == 65 && keys.publicKey.first == 0x04)
        #expect(keys.authSecret.count == 16)
        #expect(keys.publicKeyBase64URL == Self.clientPublic)
        #expect(keys.authSecretBase64URL == Self.authSecret)
    }

    @Test func acceptsPaddingTheStandardAlphabetAndSurroundingWhitespace() throws {
        let publicKey = Base64URL.decode(Self.clientPublic)!.base64EncodedString()   // "+/" and "="
        let auth = Base64URL.decode(Self.authSecret)!.base64EncodedString()
        #expect(publicKey.hasSuffix("=") && auth.hasSuffix("="))
        let keys = try SubscriptionKeys(publicKeyBase64URL: "\n  \(publicKey)\n", authSecretBase64URL: " \(auth) ")
        #expect(keys.publicKeyBase64URL == Self.clientPublic)
    }

    @Test func refusesA63BytePublicKey() {
        let key = Base64URL.decode(Self.clientPublic)!.prefix(63)
        #expect(throws: SubscriptionKeyError.invalidPublicKey("the public key is 63 bytes, not 65")) {
            try SubscriptionKeys(publicKey: key, authSecret: Data(count: 16))
        }
    }

    @Test func refusesTheRawPublicKeyWithoutItsPrefix() {
        let raw = P256.KeyAgreement.PrivateKey().publicKey.rawRepresentation   // 64 bytes
        #expect(throws: SubscriptionKeyError.invalidPublicKey("the public key is 64 bytes, not 65")) {
            try SubscriptionKeys(publicKey: raw, authSecret: Data(count: 16))
        }
    }

    @Test func refusesACompressedOrHybridPrefix() {
        var key = Base64URL.decode(Self.clientPublic)!
        key[0] = 0x06
        #expect(throws: SubscriptionKeyError.self) { try SubscriptionKeys(publicKey: key, authSecret: Data(count: 16)) }
    }

    @Test func refusesAPointOffTheCurve() {
        var key = Base64URL.decode(Self.clientPublic)!
        key[64] ^= 0x01                                     // y no longer matches x
        #expect(throws: SubscriptionKeyError.invalidPublicKey("the public key is not a point on P-256")) {
            try SubscriptionKeys(publicKey: key, authSecret: Data(count: 16))
        }
    }

    @Test(arguments: [0, 15, 17, 32])
    func refusesAnAuthSecretThatIsNot16Bytes(length: Int) {
        let key = Base64URL.decode(Self.clientPublic)!
        #expect(throws: SubscriptionKeyError.invalidAuthSecret("the auth secret is \(length) bytes, not 16")) {
            try SubscriptionKeys(publicKey: key, authSecret: Data(count: length))
        }
    }

    @Test func refusesGarbageText() {
        #expect(throws: SubscriptionKeyError.invalidPublicKey("the public key is not base64url")) {
            try SubscriptionKeys(publicKeyBase64URL: "not a key!", authSecretBase64URL: Self.authSecret)
        }
        #expect(throws: SubscriptionKeyError.invalidAuthSecret("the auth secret is not base64url")) {
            try SubscriptionKeys(publicKeyBase64URL: Self.clientPublic, authSecretBase64URL: "BTBZ*qHH6r4Tts7J_aSIgg")
        }
        #expect(throws: SubscriptionKeyError.self) {
            try SubscriptionKeys(publicKeyBase64URL: "", authSecretBase64URL: Self.authSecret)
        }
    }

    @Test func describesTheProblem() {
        #expect("\(SubscriptionKeyError.invalidAuthSecret("the auth secret is 15 bytes, not 16"))"
            == "the auth secret is 15 bytes, not 16")
    }
}
