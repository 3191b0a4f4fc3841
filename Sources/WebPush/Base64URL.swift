import Foundation

/// base64url (RFC 4648 §5) as Web Push writes keys, salts and JWTs: no padding out, and
/// lenient in, because clients send keys in either alphabet, with or without `=`.
public enum Base64URL {
    /// `bytes` in the URL-safe alphabet, without `=` padding.
    public static func encode<D: DataProtocol>(_ bytes: D) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.last == "=" { text.removeLast() }
        return String(text.map { character -> Character in
            switch character {
            case "+": "-"
            case "/": "_"
            default: character
            }
        })
    }

    /// The bytes of `text` in either alphabet (`+/` or `-_`, even mixed), with or without
    /// `=` padding; nil for anything else: other characters, whitespace, misplaced or
    /// excess padding, or a length no encoder produces (one char past a 4-char group).
    public static func decode(_ text: String) -> Data? {
        var body = Substring(text)
        var padding = 0
        while body.last == "=" { body.removeLast(); padding += 1 }
        guard body.unicodeScalars.allSatisfy(isAlphabet) else { return nil }
        let remainder = body.unicodeScalars.count % 4
        guard remainder != 1 else { return nil }
        // Padding, when present, must be exactly what completes the last group.
        guard padding == 0 || (remainder != 0 && padding == 4 - remainder) else { return nil }
        var standard = String(body.map { character -> Character in
            switch character {
            case "-": "+"
            case "_": "/"
            default: character
            }
        })
        if remainder != 0 { standard += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: standard)
    }

    private static func isAlphabet(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "+", "/", "-", "_": true
        default: false
        }
    }
}
