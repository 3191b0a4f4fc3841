/// Turns the value bytes of a content line into text: vCard 2.1 QUOTED-PRINTABLE and
/// CHARSET are decoded (and their parameters dropped, since the value is now plain
/// Unicode); 3.0/4.0 values must be UTF-8 without control characters.
enum TransferDecoding {
    static func decodeValue(
        _ value: UnsafeBufferPointer<UInt8>,
        parameters: inout [VCardParameter],
        context: ContentLineParser.Context,
        propertyName: String
    ) throws(VCardError) -> String {
        var isASCII = true
        for byte in value {
            if byte >= 0x80 {
                isASCII = false
            } else if byte < 0x20 && byte != Byte.tab {
                throw VCardError(
                    "control character \(ContentLineParser.describe(byte)) in the value of \(propertyName)",
                    line: context.lineNumber)
            }
        }
        if parameters.isEmpty || !hasTransferParameters(parameters) {
            if isASCII { return String(decoding: value, as: UTF8.self) }
            return try decodeText(value, charset: nil, context: context, propertyName: propertyName)
        }
        var charset: String?
        var quotedPrintable = false
        parameters.removeAll { parameter in
            switch parameter.name {
            case "CHARSET":
                charset = parameter.values.first?.lowercased()
                return true
            case "ENCODING" where parameter.values.contains { $0.uppercased() == "QUOTED-PRINTABLE" }:
                quotedPrintable = true
                return true
            default:
                return false
            }
        }
        if quotedPrintable {
            let decoded = decodeQuotedPrintable(value)
            return try decoded.withUnsafeBufferPointer { (bytes) throws(VCardError) -> String in
                try decodeText(bytes, charset: charset, context: context, propertyName: propertyName)
            }
        }
        return try decodeText(value, charset: charset, context: context, propertyName: propertyName)
    }

    private static func hasTransferParameters(_ parameters: [VCardParameter]) -> Bool {
        parameters.contains { $0.name == "CHARSET" || $0.name == "ENCODING" }
    }

    /// `=XX` hex escapes; a `=` not followed by two hex digits stays as written.
    /// Soft line breaks were already joined by the line reader.
    static func decodeQuotedPrintable(_ value: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(value.count)
        var index = 0
        while index < value.count {
            let byte = value[index]
            if byte == Byte.equals, index + 2 < value.count,
               let high = hexValue(value[index + 1]), let low = hexValue(value[index + 2]) {
                out.append(high << 4 | low)
                index += 3
                continue
            }
            out.append(byte)
            index += 1
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    /// UTF-8 unless a Latin-1 family charset is declared; undeclared non-UTF-8 bytes are
    /// read as Windows-1252 only before a 3.0/4.0 VERSION has been seen (2.1 exports).
    private static func decodeText(
        _ bytes: UnsafeBufferPointer<UInt8>,
        charset: String?,
        context: ContentLineParser.Context,
        propertyName: String
    ) throws(VCardError) -> String {
        switch charset {
        case nil, "utf-8", "utf8", "us-ascii", "ascii":
            if let text = String(validating: bytes, as: UTF8.self) { return text }
            if context.requiresUTF8 || charset != nil {
                throw VCardError("the value of \(propertyName) is not valid UTF-8", line: context.lineNumber)
            }
            return windows1252(bytes)
        case "iso-8859-1", "latin1", "latin-1", "iso8859-1", "iso-8859-15", "windows-1252", "cp1252":
            return windows1252(bytes)
        default:
            throw VCardError("unsupported CHARSET \(charset ?? "") on \(propertyName) (use UTF-8)", line: context.lineNumber)
        }
    }

    /// Windows-1252 (a superset of printable Latin-1) to String.
    private static func windows1252(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            if byte >= 0x80 && byte <= 0x9F, let mapped = Unicode.Scalar(cp1252High[Int(byte - 0x80)]) {
                scalars.append(mapped)
            } else {
                scalars.append(Unicode.Scalar(byte))
            }
        }
        return String(scalars)
    }

    private static let cp1252High: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ]
}
