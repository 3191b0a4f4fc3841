import Crypto
import Foundation

/// Message encryption for Web Push (RFC 8291) in the `aes128gcm` content coding (RFC 8188):
/// what a push service forwards and the client's UnifiedPush connector decrypts. Clients
/// drop messages they cannot decrypt, so this is the whole of "delivered" for them.
public enum WebPushEncryption {
    /// The record size written into the header: RFC 8291's and everyone's default.
    public static let defaultRecordSize = 4096
    /// The largest body push services must accept (RFC 8030 §7.2); UnifiedPush refuses
    /// bigger ones. That leaves 3993 bytes of plaintext.
    public static let maxBodySize = 4096
    /// salt(16) ‖ rs(4) ‖ idlen(1) ‖ keyid(65).
    public static let headerSize = 86
    /// The padding delimiter (1) and the GCM tag (16) that a record adds to its plaintext.
    public static let recordOverhead = 17

    /// `plaintext` encrypted to `keys` as one `aes128gcm` record, with a fresh ephemeral key
    /// and a fresh random salt: the body of the push POST.
    public static func encrypt(_ plaintext: Data, for keys: SubscriptionKeys,
                               recordSize: Int = defaultRecordSize) throws -> Data {
        let salt = SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }
        return try encrypt(plaintext, for: keys, recordSize: recordSize,
                           ephemeralKey: P256.KeyAgreement.PrivateKey(), salt: salt)
    }

    /// For tests only (the RFC 8291 §5 vector): the same with a given ephemeral key and
    /// salt. Reusing either for a second message gives away the key stream: never do that
    /// outside a test.
    public static func encrypt(_ plaintext: Data, for keys: SubscriptionKeys, recordSize: Int = defaultRecordSize,
                               ephemeralKey: P256.KeyAgreement.PrivateKey, salt: Data) throws -> Data {
        guard salt.count == 16 else { throw WebPushEncryptionError.invalidSalt(length: salt.count) }
        // RFC 8188 §2: a record size under 18 cannot hold even one byte; rs is a uint32.
        guard recordSize >= 18, recordSize <= Int(UInt32.max) else {
            throw WebPushEncryptionError.invalidRecordSize(recordSize)
        }
        // RFC 8291 §4: one record, so the whole message must fit in it.
        guard plaintext.count + recordOverhead <= recordSize else {
            throw WebPushEncryptionError.plaintextTooLarge(size: plaintext.count,
                                                           limit: recordSize - recordOverhead)
        }
        guard headerSize + plaintext.count + recordOverhead <= maxBodySize else {
            throw WebPushEncryptionError.plaintextTooLarge(size: plaintext.count,
                                                           limit: maxBodySize - headerSize - recordOverhead)
        }

        let clientKey = try P256.KeyAgreement.PublicKey(x963Representation: keys.publicKey)
        let serverPublic = ephemeralKey.publicKey.x963Representation
        let shared = try ephemeralKey.sharedSecretFromKeyAgreement(with: clientKey)
        // RFC 8291 §3.4: the auth secret salts the ECDH secret into the input keying material.
        let keyInfo = Data("WebPush: info\0".utf8) + keys.publicKey + serverPublic
        let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: keys.authSecret,
                                                 sharedInfo: keyInfo, outputByteCount: 32)
        // RFC 8188 §2.2 and §2.3: the content key and the nonce of record 0 (XOR 0 is a no-op).
        let contentKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt,
                                                info: Data("Content-Encoding: aes128gcm\0".utf8),
                                                outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt,
                                           info: Data("Content-Encoding: nonce\0".utf8),
                                           outputByteCount: 12)
            .withUnsafeBytes { Data($0) }
        // 0x02 marks the last record; no further padding.
        let sealed = try AES.GCM.seal(plaintext + [0x02], using: contentKey, nonce: AES.GCM.Nonce(data: nonce))

        var body = Data(capacity: headerSize + plaintext.count + recordOverhead)
        body.append(salt)
        withUnsafeBytes(of: UInt32(recordSize).bigEndian) { body.append(contentsOf: $0) }
        body.append(UInt8(serverPublic.count))
        body.append(serverPublic)
        // Ciphertext and tag only: `combined` would put the nonce in front.
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }
}

/// Why a message could not be encrypted.
public enum WebPushEncryptionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The message does not fit one record, or the body would pass `maxBodySize`.
    case plaintextTooLarge(size: Int, limit: Int)
    case invalidRecordSize(Int)
    case invalidSalt(length: Int)

    public var description: String {
        switch self {
        case .plaintextTooLarge(let size, let limit):
            "the push message is \(size) bytes; at most \(limit) fit one record"
        case .invalidRecordSize(let size):
            "record size \(size) is outside 18...\(UInt32.max)"
        case .invalidSalt(let length):
            "the salt is \(length) bytes, not 16"
        }
    }
}
