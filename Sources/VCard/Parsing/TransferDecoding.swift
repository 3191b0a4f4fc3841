/// Turns the value bytes of a content line into text: vCard 2.1 QUOTED-PRINTABLE and
/// CHARSET are decoded (and their parameters dropped, since the value is now plain
/// Unicode); 3.0/4.0 values must be UTF-8 without control characters.
enum TransferDecoding {
    /// Text properties whose 2.1 BASE64 value is encoded text, not binary data.
    private static let textProperties: Set<String> = [
        "FN", "N", "NOTE", "ADR", "ORG", "TITLE", "ROLE", "LABEL", "NICKNAME", "CATEGORIES", "SORT-STRING",
        "X-PHONETIC-FIRST-NAME", "X-PHONETIC-LAST-NAME", "X-PHONETIC-MIDDLE-NAME",
    ]

    static func decodeValue(
        _ value: UnsafeBufferPointer<UInt8>,
        parameters: inout [VCardParameter],
        context: inout ContentLineParser.Context,
        propertyName: String
    ) throws(VCardError) -> String {
        // One branch-free pass over the value (the parser's hottest loop): is it ASCII, and
        // does it hold a control byte other than TAB? Only then is the first one looked for.
        var highBits: UInt8 = 0
        var controls: UInt8 = 0
        for byte in value {
            highBits |= byte
            controls |= byte < 0x20 && byte != Byte.tab ? 1 : 0
        }
        let isASCII = highBits < 0x80
        var control: UInt8?
        if controls != 0 {
            let allowsLineBreaks = context.allowsLineBreaks
            control = value.first { $0 < 0x20 && $0 != Byte.tab && !($0 == Byte.lf && allowsLineBreaks) }
        }
        if parameters.isEmpty || !hasTransferParameters(parameters) {
            if let control { throw controlError(control, context: context, propertyName: propertyName) }
            if isASCII { return String(decoding: value, as: UTF8.self) }
            return try decodeText(value, charset: nil, context: &context, propertyName: propertyName)
        }
        var charset: String?
        var quotedPrintable = false
        var base64 = false
        let textual = textProperties.contains(propertyName) || parameters.contains { $0.name == "CHARSET" }
        parameters.removeAll { parameter in
            switch parameter.name {
            case "CHARSET":
                charset = parameter.values.first.map(CharsetDecoding.normalize)
                context.sawV21Shape = true
                return true
            case "ENCODING" where parameter.values.contains { $0.uppercased() == "QUOTED-PRINTABLE" }:
                quotedPrintable = true
                context.sawV21Shape = true
                return true
            case "ENCODING" where parameter.values.contains { $0.uppercased() == "BASE64" }:
                context.sawV21Shape = true
                // BASE64 text (Japanese phones wrote `N;CHARSET=SHIFT_JIS;ENCODING=BASE64:`) is
                // decoded here; a binary value keeps its parameter for the converter.
                base64 = textual
                return textual
            case "ENCODING" where parameter.values.contains { $0.uppercased() == "B" }:
                base64 = textual
                return textual
            default:
                return false
            }
        }
        if let control, !(control == 0x1B || control == 0x0E || control == 0x0F) || !CharsetDecoding.usesEscapes(charset ?? "") {
            throw controlError(control, context: context, propertyName: propertyName)
        }
        if let charset, !CharsetDecoding.isUTF8(charset) { context.lastDeclaredCharset = charset }
        if quotedPrintable {
            let decoded = decodeQuotedPrintable(value)
            return try decoded.withUnsafeBufferPointer { (bytes) throws(VCardError) -> String in
                try decodeText(bytes, charset: charset, context: &context, propertyName: propertyName)
            }
        }
        if base64 {
            guard let decoded = Base64.decode(String(decoding: value, as: UTF8.self)) else {
                throw VCardError("the BASE64 value of \(propertyName) is not valid base64", line: context.lineNumber)
            }
            return try decoded.withUnsafeBufferPointer { (bytes) throws(VCardError) -> String in
                try decodeText(bytes, charset: charset, context: &context, propertyName: propertyName)
            }
        }
        if let label = charset, CharsetDecoding.isUTF16(label), context.transcodedFromUTF16 {
            // The whole file was UTF-16 and is now UTF-8: the label describes the file, not the value.
            return try decodeText(value, charset: "utf-8", context: &context, propertyName: propertyName)
        }
        return try decodeText(value, charset: charset, context: &context, propertyName: propertyName)
    }

    private static func controlError(_ byte: UInt8, context: ContentLineParser.Context, propertyName: String) -> VCardError {
        VCardError(
            "control character \(ContentLineParser.describe(byte)) in the value of \(propertyName)",
            line: context.lineNumber)
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

    /// UTF-8 unless a charset is declared (decoded through iconv); undeclared non-UTF-8
    /// bytes are read, before a 3.0/4.0 VERSION has been seen (2.1 exports), in the last
    /// legacy charset the stream declared (a whole Shift_JIS file tags only some values),
    /// else as Windows-1252. Strict mode refuses an unknown charset or bytes that are not
    /// valid in the declared one; lenient mode reads them best-effort (see `VCardParseMode`).
    private static func decodeText(
        _ bytes: UnsafeBufferPointer<UInt8>,
        charset: String?,
        context: inout ContentLineParser.Context,
        propertyName: String
    ) throws(VCardError) -> String {
        guard let charset else {
            if let text = String(validating: bytes, as: UTF8.self) { return text }
            if context.requiresUTF8 {
                if context.lenient { return String(decoding: bytes, as: UTF8.self) }
                throw VCardError("the value of \(propertyName) is not valid UTF-8", line: context.lineNumber)
            }
            if let fallback = context.lastDeclaredCharset, case .decoded(let text) = CharsetDecoding.decode(bytes, label: fallback) {
                return text
            }
            return windows1252(bytes)
        }
        switch CharsetDecoding.decode(bytes, label: charset) {
        case .decoded(let text):
            return text
        case .invalidBytes(let lossy):
            if isLatin1Family(charset) { return windows1252(bytes) }
            guard context.lenient else {
                throw VCardError("the value of \(propertyName) is not valid \(charset.uppercased())", line: context.lineNumber)
            }
            // Mislabelled values are common (UTF-8 bytes tagged with the phone's legacy charset).
            if let text = String(validating: bytes, as: UTF8.self) { return text }
            return lossy
        case .unknownCharset:
            guard context.lenient else {
                throw VCardError(
                    "unsupported CHARSET \(charset.uppercased()) on \(propertyName) (not a character set iconv knows)",
                    line: context.lineNumber)
            }
            if let text = String(validating: bytes, as: UTF8.self) { return text }
            return windows1252(bytes)
        }
    }

    private static func isLatin1Family(_ charset: String) -> Bool {
        CharsetDecoding.iconvNames(for: charset) == ["WINDOWS-1252"]
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
