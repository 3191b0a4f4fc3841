/// RFC 5545's text rules, in one place: TEXT escaping (§3.3.11) and content-line folding
/// (§3.1: lines of at most 75 octets, CRLF, continuation lines start with one space).
public enum ICalendarText {
    /// Escapes a TEXT value: backslash, semicolon and comma get a backslash, a line break
    /// becomes `\n`; other control characters (not allowed in TEXT) are dropped.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        var previousWasCR = false
        for scalar in text.unicodeScalars {
            defer { previousWasCR = scalar == "\r" }
            switch scalar {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\r": out += "\\n"
            case "\n": if !previousWasCR { out += "\\n" }
            case "\t": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// One content line, folded so that no line is longer than 75 octets (CRLF not counted),
    /// never inside a UTF-8 sequence, and ended with CRLF.
    public static func folded(_ line: String) -> String {
        var out = ""
        var octets = 0
        var limit = 75
        for character in line.unicodeScalars {
            let size = String(character).utf8.count
            if octets + size > limit {
                out += "\r\n "
                octets = 0
                limit = 74 // the leading space is one of the 75
            }
            out.unicodeScalars.append(character)
            octets += size
        }
        return out + "\r\n"
    }
}
