/// How the bytes of a contacts CSV were turned into text. Exporters write what their platform
/// likes: Google UTF-8 without a BOM, Excel and Outlook's "Unicode" UTF-8 with a BOM or UTF-16
/// with one, older Outlook the Windows ANSI code page (Windows-1252 in Western Europe).
public enum CSVTextEncoding: String, Sendable, Hashable {
    case utf8 = "UTF-8"
    case utf8BOM = "UTF-8 with BOM"
    case utf16LE = "UTF-16 LE"
    case utf16BE = "UTF-16 BE"
    case windows1252 = "Windows-1252"
}

/// The whole file refused before any row is read, with the reason shown to the user.
public struct CSVRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

enum CSVText {
    /// Decodes by BOM first (UTF-8, UTF-16 LE/BE); without one, bytes that are valid UTF-8
    /// are UTF-8, bytes with a NUL in every other position are BOM-less UTF-16, and anything
    /// else is Windows-1252: a legacy file is never valid UTF-8 once it holds an accented
    /// letter (é is one byte, 0xE9, that UTF-8 never lets stand alone), and every byte has a
    /// meaning in 1252, so the guess cannot fail, only mislabel a rarer code page.
    /// Text with NULs left after decoding is no CSV.
    static func decode(_ bytes: [UInt8]) throws(CSVRefusal) -> (text: String, encoding: CSVTextEncoding) {
        guard !bytes.isEmpty else { throw CSVRefusal("the file is empty") }
        let decoded: (String, CSVTextEncoding)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            decoded = (String(decoding: bytes.dropFirst(3), as: UTF8.self), .utf8BOM)
        } else if bytes.starts(with: [0xFF, 0xFE]) {
            decoded = (utf16(bytes.dropFirst(2), bigEndian: false), .utf16LE)
        } else if bytes.starts(with: [0xFE, 0xFF]) {
            decoded = (utf16(bytes.dropFirst(2), bigEndian: true), .utf16BE)
        } else if let text = String(validating: bytes, as: UTF8.self), !text.contains("\u{0}") {
            decoded = (text, .utf8)
        } else if bytes.count >= 2, bytes.count % 2 == 0, let bigEndian = nulPattern(bytes) {
            decoded = (utf16(bytes[...], bigEndian: bigEndian), bigEndian ? .utf16BE : .utf16LE)
        } else {
            decoded = (String(String.UnicodeScalarView(bytes.map(windows1252))), .windows1252)
        }
        guard !decoded.0.unicodeScalars.contains("\u{0}") else {
            throw CSVRefusal("the file is not text (it holds NUL bytes in no encoding a contacts CSV comes in)")
        }
        return decoded
    }

    /// UTF-16 without BOM: the high bytes of ASCII text are zero, so one of the two positions
    /// is NUL in most code units. Nil when neither is.
    private static func nulPattern(_ bytes: [UInt8]) -> Bool? {
        var even = 0, odd = 0
        for (index, byte) in bytes.prefix(512).enumerated() where byte == 0 {
            if index % 2 == 0 { even += 1 } else { odd += 1 }
        }
        let units = min(bytes.count, 512) / 2
        if odd * 2 > units, even == 0 { return false }
        if even * 2 > units, odd == 0 { return true }
        return nil
    }

    private static func utf16(_ bytes: ArraySlice<UInt8>, bigEndian: Bool) -> String {
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            let first = UInt16(bytes[index]), second = UInt16(bytes[index + 1])
            units.append(bigEndian ? first << 8 | second : second << 8 | first)
            index += 2
        }
        return String(decoding: units, as: UTF16.self)
    }

    /// Windows-1252: Latin-1 except 0x80-0x9F; the five bytes 1252 leaves undefined map to
    /// the C1 control of the same number, as Windows' own conversion does.
    private static func windows1252(_ byte: UInt8) -> Unicode.Scalar {
        guard (0x80...0x9F).contains(byte) else { return Unicode.Scalar(byte) }
        let table: [UInt32] = [
            0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
            0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
        ]
        return Unicode.Scalar(table[Int(byte - 0x80)])!
    }
}
