import Crypto
import Foundation
import PushTestSupport
import Testing
import WebPush

@Suite struct WebPushEncryptionTests {
    /// RFC 8291 §5.
    enum Vector {
        static let senderPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let senderPublic = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        static let clientPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let clientPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let plaintext = "When I grow up, I want to be a watermelon"
        static let body = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

        static var keys: SubscriptionKeys {
            get throws { try SubscriptionKeys(publicKeyBase64URL: clientPublic, authSecretBase64URL: authSecret) }
        }
    }

    @Test func reproducesTheRFC8291VectorByteForByte() throws {
        let ephemeral = try P256.KeyAgreement.PrivateKey(rawRepresentation: Base64URL.decode(Vector.senderPrivate)!)
        #expect(Base64URL.encode(ephemeral.publicKey.x963Representation) == Vector.senderPublic)
        let body = try WebPushEncryption.encrypt(Data(Vector.plaintext.utf8), for: Vector.keys, recordSize: 4096,
                                                 ephemeralKey: ephemeral, salt: Base64URL.decode(Vector.salt)!)
        #expect(body.count == 144)
        #expect(Base64URL.encode(body) == Vector.body)
    }

    @Test func theRFCVectorDecryptsWithTheClientKey() throws {
        let client = PushClientKeys(privateKey: try .init(rawRepresentation: Base64URL.decode(Vector.clientPrivate)!),
                                    authSecret: Base64URL.decode(Vector.authSecret)!)
        #expect(Base64URL.encode(client.publicKey) == Vector.clientPublic)
        #expect(try client.decrypt(Base64URL.decode(Vector.body)!) == Data(Vector.plaintext.utf8))
    }

    @Test func roundTripsWithRandomKeys() throws {
        for length in [0, 1, 15, 16, 17, 200, 3993] {
            let client = PushClientKeys()
            let plaintext = Data((0..<length).map { UInt8(truncatingIfNeeded: $0) })
            let body = try WebPushEncryption.encrypt(plaintext, for: client.subscriptionKeys)
            #expect(body.count == 86 + length + 17)
            #expect(try client.decrypt(body) == plaintext)
        }
    }

    @Test func writesTheAes128gcmHeader() throws {
        let client = PushClientKeys()
        let body = try WebPushEncryption.encrypt(Data("<push-message/>".utf8), for: client.subscriptionKeys)
        let header = try WebPushDecryption.header(of: body)
        #expect(header.recordSize == 4096)
        #expect(body[body.startIndex + 20] == 0x41)
        #expect(header.keyID.count == 65 && header.keyID.first == 0x04)
        #expect(try P256.KeyAgreement.PublicKey(x963Representation: header.keyID).x963Representation == header.keyID)
        #expect(header.ciphertext.count == 15 + 1 + 16)
    }

    @Test func usesAFreshSaltAndKeyForEveryMessage() throws {
        let keys = PushClientKeys().subscriptionKeys
        let plaintext = Data("same message".utf8)
        let first = try WebPushDecryption.header(of: WebPushEncryption.encrypt(plaintext, for: keys))
        let second = try WebPushDecryption.header(of: WebPushEncryption.encrypt(plaintext, for: keys))
        #expect(first.salt != second.salt)
        #expect(first.keyID != second.keyID)
        #expect(first.ciphertext != second.ciphertext)
    }

    @Test func anotherClientCannotDecrypt() throws {
        let client = PushClientKeys()
        let body = try WebPushEncryption.encrypt(Data("secret".utf8), for: client.subscriptionKeys)
        let stranger = PushClientKeys(authSecret: client.authSecret)
        #expect(throws: (any Error).self) { try stranger.decrypt(body) }
        let wrongSecret = PushClientKeys(privateKey: client.privateKey)
        #expect(throws: (any Error).self) { try wrongSecret.decrypt(body) }
    }

    @Test func refusesAMessageLargerThanOneRecordOrTheBodyLimit() throws {
        let keys = PushClientKeys().subscriptionKeys
        #expect(throws: WebPushEncryptionError.plaintextTooLarge(size: 3994, limit: 3993)) {
            try WebPushEncryption.encrypt(Data(count: 3994), for: keys)
        }
        #expect(throws: WebPushEncryptionError.plaintextTooLarge(size: 10, limit: 9)) {
            try WebPushEncryption.encrypt(Data(count: 10), for: keys, recordSize: 26)
        }
        #expect(try WebPushEncryption.encrypt(Data(count: 10), for: keys, recordSize: 27).count == 86 + 27)
        #expect(throws: WebPushEncryptionError.invalidRecordSize(17)) {
            try WebPushEncryption.encrypt(Data(), for: keys, recordSize: 17)
        }
        #expect(throws: WebPushEncryptionError.invalidSalt(length: 12)) {
            try WebPushEncryption.encrypt(Data(), for: keys, ephemeralKey: .init(), salt: Data(count: 12))
        }
    }
}
