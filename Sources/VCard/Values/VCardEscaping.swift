#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Text escaping of vCard values (RFC 6350 §3.4, RFC 2426 §4): `\n` `\N` newline,
/// `\,` `\;` `\\` `\:` literal; any other `\x` is kept as written.
public enum VCardEscaping {
    /// Escapes text for a TEXT value: backslash, `,`, `;` and line breaks (CRLF, CR, LF -> `\n`).
    public static func escape(_ text: String) -> String {
        var needsWork = false
        for byte in text.utf8 where byte == Byte.backslash || byte == Byte.comma || byte == Byte.semicolon
            || byte == Byte.lf || byte == Byte.cr {
            needsWork = true
            break
        }
        if !needsWork { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 8)
        var previousWasCR = false
        for byte in text.utf8 {
            switch byte {
            case Byte.backslash, Byte.comma, Byte.semicolon:
                out.append(Byte.backslash)
                out.append(byte)
            case Byte.cr:
                out.append(Byte.backslash)
                out.append(0x6E)
            case Byte.lf:
                if !previousWasCR {
                    out.append(Byte.backslash)
                    out.append(0x6E)
                }
            default:
                out.append(byte)
            }
            previousWasCR = byte == Byte.cr
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reverses `escape`: `\n`/`\N` become a newline, `\,` `\;` `\\` `\:` their character.
    public static func unescape(_ raw: Substring) -> String {
        guard raw.utf8Contains(Byte.backslash) else { return String(raw) }
        var out: [UInt8] = []
        out.reserveCapacity(raw.utf8.count)
        var iterator = raw.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == Byte.backslash else {
                out.append(byte)
                continue
            }
            guard let next = iterator.next() else {
                out.append(byte)
                break
            }
            switch next {
            case 0x6E, 0x4E: out.append(Byte.lf)
            case Byte.comma, Byte.semicolon, Byte.backslash, Byte.colon: out.append(next)
            default:
                out.append(byte)
                out.append(next)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Splits escaped text on every `separator` not preceded by an escaping backslash;
    /// the parts stay escaped.
    public static func splitEscaped(_ raw: String, on separator: UInt8) -> [Substring] {
        var parts: [Substring] = []
        let utf8 = raw.utf8
        var partStart = utf8.startIndex
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == Byte.backslash {
                index = utf8.index(after: index)
                if index != utf8.endIndex { index = utf8.index(after: index) }
                continue
            }
            if byte == separator {
                parts.append(raw[partStart..<index])
                index = utf8.index(after: index)
                partStart = index
                continue
            }
            index = utf8.index(after: index)
        }
        parts.append(raw[partStart..<utf8.endIndex])
        return parts
    }
}

extension StringProtocol {
    /// Whether the text's UTF-8 holds `byte`, by `memchr` over its bytes where they are
    /// contiguous (a native string's always are). Most values hold no backslash or line
    /// feed, and the generic `utf8.contains` walked them one index at a time: a tenth of a
    /// card's list row (issue 34).
    package func utf8Contains(_ byte: UInt8) -> Bool {
        utf8.withContiguousStorageIfAvailable { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
            return memchr(base, Int32(byte), bytes.count) != nil
        } ?? utf8.contains(byte)
    }
}
