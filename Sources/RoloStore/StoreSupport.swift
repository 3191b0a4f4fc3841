import Crypto
import Foundation

// Rules every implementation of `RoloStore` applies the same way, shared with the other
// store targets of the package (`package` access): the formats of app-password tokens and
// push registration ids, and the bound that turns a starts-with into a range.

/// App-password tokens: `rolo_<8 hex>_<40 hex>`, the first part the lookup key, the second
/// the secret whose keyed hash the store keeps.
package enum AppPasswordToken {
    /// A new token's public id and secret.
    package static func make() -> (publicID: String, secret: String) {
        (randomHex(bytes: 4), randomHex(bytes: 20))
    }

    package static func format(publicID: String, secret: String) -> String { "rolo_\(publicID)_\(secret)" }

    /// `rolo_<8 hex>_<40 hex>` split into its id and secret; nil for anything else.
    package static func split(_ token: String) -> (publicID: Substring, secret: Substring)? {
        guard token.hasPrefix("rolo_") else { return nil }
        let parts = token.dropFirst(5).split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 8, parts[1].utf8.count == 40 else { return nil }
        return (parts[0], parts[1])
    }

    /// A keyed hash, not bcrypt: the secret has 160 random bits, nothing to stretch, and it
    /// is checked on every request a device makes.
    package static func hash(_ secret: some StringProtocol, pepper: Data) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data(secret.utf8), using: SymmetricKey(data: pepper)))
    }

    /// Whether two hashes are equal, in time that does not tell how many leading bytes were right.
    package static func hashesMatch(_ expected: Data, _ stored: Data) -> Bool {
        expected.count == stored.count && zip(expected, stored).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0
    }

    /// A new server-wide pepper: 256 random bits.
    package static func newPepper() -> Data {
        Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }
}

package enum StoreRandom {
    /// `bytes` random bytes in lower-case hex.
    package static func hex(bytes: Int) -> String { randomHex(bytes: bytes) }

    /// 128 random bits in hex: a push registration's id, the only thing that names its URL,
    /// so it must not be guessable; also a book's push topic.
    package static func token128() -> String {
        SymmetricKey(size: .bits128).withUnsafeBytes { bytes in bytes.map { String(format: "%02x", $0) }.joined() }
    }
}

private func randomHex(bytes: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<bytes).map { _ in
        let byte = UInt8.random(in: .min ... .max, using: &generator)
        return String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16)
    }.joined()
}

package enum TextBounds {
    /// The smallest string greater than every string starting with `prefix` (its last
    /// scalar incremented: UTF-8 byte order is code point order), nil when none exists.
    package static func prefixUpperBound(_ prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var value = last.value + 1
            if value == 0xD800 { value = 0xE000 }
            if let next = Unicode.Scalar(value) {
                var result = String.UnicodeScalarView()
                result.append(contentsOf: scalars)
                result.append(next)
                return String(result)
            }
        }
        return nil
    }
}
