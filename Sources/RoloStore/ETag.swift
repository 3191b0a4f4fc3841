import Crypto
import Foundation

/// Strong ETags derived from the stored bytes, so the same bytes always get the same tag
/// and a PUT can return it: the first 128 bits of SHA-256 in hex, quoted.
public enum ETag {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    public static func of(_ data: Data) -> String {
        let digest = SHA256.hash(data: data)
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        bytes.reserveCapacity(34)
        for byte in digest.prefix(16) {
            bytes.append(hexDigits[Int(byte >> 4)])
            bytes.append(hexDigits[Int(byte & 0x0F)])
        }
        bytes.append(UInt8(ascii: "\""))
        return String(decoding: bytes, as: UTF8.self)
    }
}
