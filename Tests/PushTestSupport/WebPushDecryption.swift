import Crypto
import Foundation
import WebPush

/// The client's half of RFC 8291, written apart from `WebPushEncryption` so a test that
/// round-trips through both does not just agree with itself.
public enum WebPushDecryption {
    public enum Failure: Error, Equatable {
        case truncatedHeader
        case keyIDNotAPublicKey(length: Int)
        case moreThanOneRecord(ciphertext: Int, recordSize: Int)
        case noDelimiter
    }

    /// The header fields of an `aes128gcm` body (RFC 8188 §2.1).
    public struct Header: Equatable {
        public var salt: Data
        public var recordSize: UInt32
        public var keyID: Data
        public var ciphertext: Data
    }

    public static func header(of body: Data) throws -> Header {
        let bytes = [UInt8](body)
        guard bytes.count >= 21 else { throw Failure.truncatedHeader }
        let recordSize = bytes[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let idLength = Int(bytes[20])
        guard bytes.count >= 21 + idLength else { throw Failure.truncatedHeader }
        return Header(salt: Data(bytes[0..<16]), recordSize: recordSize, keyID: Data(bytes[21..<(21 + idLength)]),
                      ciphertext: Data(bytes[(21 + idLength)...]))
    }

    /// The plaintext of a one-record body sent to the holder of `privateKey` and `authSecret`.
    public static func decrypt(_ body: Data, privateKey: P256.KeyAgreement.PrivateKey, authSecret: Data) throws -> Data {
        let header = try header(of: body)
        guard header.keyID.count == 65 else { throw Failure.keyIDNotAPublicKey(length: header.keyID.count) }
        guard header.ciphertext.count <= Int(header.recordSize) else {
            throw Failure.moreThanOneRecord(ciphertext: header.ciphertext.count, recordSize: Int(header.recordSize))
        }
        let senderKey = try P256.KeyAgreement.PublicKey(x963Representation: header.keyID)
        let shared = try privateKey.sharedSecretFromKeyAgreement(with: senderKey)
        var info = Data("WebPush: info".utf8)
        info.append(0)
        info.append(privateKey.publicKey.x963Representation)
        info.append(header.keyID)
        let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: authSecret, sharedInfo: info,
                                                 outputByteCount: 32)
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: header.salt,
                                         info: Data("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: header.salt,
                                           info: Data("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        let box = try AES.GCM.SealedBox(
            nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }),
            ciphertext: header.ciphertext.dropLast(16), tag: header.ciphertext.suffix(16))
        var record = [UInt8](try AES.GCM.open(box, using: key))
        // RFC 8188 §2: padding is zeros after the delimiter; 0x02 ends the last record.
        while record.last == 0 { record.removeLast() }
        guard record.last == 0x02 else { throw Failure.noDelimiter }
        record.removeLast()
        return Data(record)
    }
}

/// A push subscriber's keys, as a test holds them: the private half stays here, the public
/// half and the auth secret go into the registration.
public struct PushClientKeys: Sendable {
    /// The private scalar (swift-crypto's key type is not `Sendable`).
    public let privateKeyBytes: Data
    public let authSecret: Data

    public init(privateKey: P256.KeyAgreement.PrivateKey = .init(),
                authSecret: Data = SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }) {
        self.privateKeyBytes = privateKey.rawRepresentation
        self.authSecret = authSecret
    }

    public var privateKey: P256.KeyAgreement.PrivateKey {
        // Bytes that came from a key are always a valid key.
        try! P256.KeyAgreement.PrivateKey(rawRepresentation: privateKeyBytes)
    }

    public var publicKey: Data { privateKey.publicKey.x963Representation }

    public var subscriptionKeys: SubscriptionKeys {
        // Freshly generated keys are always valid.
        try! SubscriptionKeys(publicKey: publicKey, authSecret: authSecret)
    }

    public func decrypt(_ body: Data) throws -> Data {
        try WebPushDecryption.decrypt(body, privateKey: privateKey, authSecret: authSecret)
    }
}
