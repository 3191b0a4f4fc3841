/// RFC 6868 caret encoding of parameter values (`^n` newline, `^'` double quote, `^^` caret)
/// and the quoting rules of RFC 6350 §5 / RFC 2426 §4.
enum ParameterEncoding {
    /// Decodes `^n`, `^N`, `^'` and `^^`; any other `^x` stays as written.
    static func decode(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        var hasCaret = false
        for index in range where line[index] == Byte.caret {
            hasCaret = true
            break
        }
        let slice = UnsafeBufferPointer(rebasing: line[range])
        if !hasCaret { return String(decoding: slice, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = line[index]
            if byte == Byte.caret, index + 1 < range.upperBound {
                switch line[index + 1] {
                case 0x6E, 0x4E: out.append(Byte.lf); index += 2; continue
                case 0x27: out.append(Byte.dquote); index += 2; continue
                case Byte.caret: out.append(Byte.caret); index += 2; continue
                default: break
                }
            }
            out.append(byte)
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends one parameter value, RFC 6868-encoded and double-quoted when it holds
    /// `:` `;` `,` or characters that need the quotes.
    static func append(_ value: String, to out: inout [UInt8]) {
        var needsQuotes = false
        var needsCaret = false
        for byte in value.utf8 {
            switch byte {
            case Byte.colon, Byte.semicolon, Byte.comma, Byte.space, Byte.tab: needsQuotes = true
            case Byte.caret, Byte.dquote, Byte.lf, Byte.cr: needsCaret = true
            default: break
            }
        }
        if needsQuotes { out.append(Byte.dquote) }
        if needsCaret {
            var previousWasCR = false
            for byte in value.utf8 {
                switch byte {
                case Byte.caret: out.append(Byte.caret); out.append(Byte.caret)
                case Byte.dquote: out.append(Byte.caret); out.append(0x27)
                case Byte.lf:
                    if !previousWasCR { out.append(Byte.caret); out.append(0x6E) }
                case Byte.cr: out.append(Byte.caret); out.append(0x6E)
                default: out.append(byte)
                }
                previousWasCR = byte == Byte.cr
            }
        } else {
            out.append(contentsOf: value.utf8)
        }
        if needsQuotes { out.append(Byte.dquote) }
    }
}
