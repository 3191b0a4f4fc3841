/// Parses one unfolded content line (`group.NAME;PARAM=a,"b:c":value`) from bytes.
///
/// Works on bytes so that names, parameters and the value are each decoded once; the value
/// goes through 2.1 transfer decoding (QUOTED-PRINTABLE, CHARSET) before becoming a String.
enum ContentLineParser {
    /// Why the value decoding may fall back to Latin-1: vCard 2.1 files are often not UTF-8.
    struct Context {
        var lineNumber: Int
        /// True once the card declared 3.0 or 4.0: bytes must then be UTF-8.
        var requiresUTF8: Bool
        /// `VCardParseMode.lenient`: best-effort charset decoding.
        var lenient = false
        /// The line was assembled from continuation lines without leading space (lenient):
        /// the value holds LF bytes where those lines were joined.
        var allowsLineBreaks = false
        /// The whole input was UTF-16 and has been transcoded to UTF-8 before reading.
        var transcodedFromUTF16 = false
        /// Set by the parse: the last non-UTF-8 CHARSET declared in the stream so far.
        var lastDeclaredCharset: String?
        /// Set by the parse: the line used a vCard 2.1 construct (bare parameter token,
        /// QUOTED-PRINTABLE, BASE64, CHARSET).
        var sawV21Shape = false
    }

    static func parse(_ line: UnsafeBufferPointer<UInt8>, context: inout Context) throws(VCardError) -> VCardProperty {
        let count = line.count
        var position = 0

        // group.name
        var dotIndex = -1
        while position < count {
            let byte = line[position]
            if byte == Byte.colon || byte == Byte.semicolon { break }
            if byte == Byte.dot, dotIndex < 0 {
                dotIndex = position
            } else if !isNameByte(byte) {
                if !line.contains(Byte.colon) {
                    throw VCardError("content line has no ':' between name and value", line: context.lineNumber)
                }
                throw VCardError(
                    "invalid character \(describe(byte)) in property name (expected letters, digits or '-')",
                    line: context.lineNumber)
            }
            position += 1
        }
        guard position < count else {
            throw VCardError("content line has no ':' between name and value", line: context.lineNumber)
        }
        let nameStart = dotIndex >= 0 ? dotIndex + 1 : 0
        guard nameStart < position else {
            throw VCardError("content line has no property name", line: context.lineNumber)
        }
        let group: String? = dotIndex > 0 ? String(decoding: UnsafeBufferPointer(rebasing: line[0..<dotIndex]), as: UTF8.self) : nil
        if dotIndex == 0 {
            throw VCardError("content line has an empty group before '.'", line: context.lineNumber)
        }
        let name = upperASCII(line, nameStart..<position)

        // ;PARAM=value,"quoted";BARE
        var parameters: [VCardParameter] = []
        while position < count, line[position] == Byte.semicolon {
            position += 1
            let parameterStart = position
            while position < count {
                let byte = line[position]
                if byte == Byte.equals || byte == Byte.semicolon || byte == Byte.colon { break }
                position += 1
            }
            guard position < count else {
                throw VCardError("content line has no ':' after its parameters", line: context.lineNumber)
            }
            var parameterName = upperASCII(line, parameterStart..<position)
            if parameterName.isEmpty {
                throw VCardError("empty parameter name in \(name)", line: context.lineNumber)
            }
            if line[position] != Byte.equals {
                parameters.append(bareToken(parameterName))
                context.sawV21Shape = true
                continue
            }
            // A parameter name is a token (RFC 6350 §3.3), like a property name: anything
            // else could not be written as jCard, or read back from it (found by fuzzing).
            // Lenient reading forgives spaces around it and drops what is still no name.
            var keepParameter = true
            if !parameterName.utf8.allSatisfy(isNameByte) {
                guard context.lenient else {
                    throw VCardError("invalid parameter name \"\(parameterName)\" in \(name) (expected letters, digits or '-')",
                                     line: context.lineNumber)
                }
                parameterName = parameterName.trimmingASCIISpaces()
                keepParameter = !parameterName.isEmpty && parameterName.utf8.allSatisfy(isNameByte)
            }
            position += 1
            var values: [String] = []
            while true {
                if position < count, line[position] == Byte.dquote {
                    let open = position
                    position += 1
                    while position < count, line[position] != Byte.dquote { position += 1 }
                    guard position < count else {
                        throw VCardError(
                            "parameter \(parameterName) of \(name) opens a double quote that is never closed (unterminated quoted value)",
                            line: context.lineNumber)
                    }
                    values.append(ParameterEncoding.decode(line, open + 1..<position))
                    position += 1
                    if position < count {
                        let byte = line[position]
                        if byte != Byte.comma && byte != Byte.semicolon && byte != Byte.colon {
                            throw VCardError(
                                "unexpected \(describe(byte)) after the closing quote of parameter \(parameterName)",
                                line: context.lineNumber)
                        }
                    }
                } else {
                    let valueStart = position
                    while position < count {
                        let byte = line[position]
                        if byte == Byte.comma || byte == Byte.semicolon || byte == Byte.colon { break }
                        position += 1
                    }
                    values.append(ParameterEncoding.decode(line, valueStart..<position))
                }
                guard position < count else {
                    throw VCardError("content line has no ':' after its parameters", line: context.lineNumber)
                }
                if line[position] == Byte.comma {
                    position += 1
                    continue
                }
                break
            }
            if keepParameter { parameters.append(VCardParameter(upperName: parameterName, values: values)) }
        }
        guard position < count, line[position] == Byte.colon else {
            throw VCardError("content line has no ':' between name and value", line: context.lineNumber)
        }
        position += 1

        let value = UnsafeBufferPointer(rebasing: line[position..<count])
        let rawValue = try TransferDecoding.decodeValue(value, parameters: &parameters, context: &context, propertyName: name)
        return VCardProperty(group: group, upperName: name, parameters: parameters, rawValue: rawValue, line: context.lineNumber)
    }

    /// vCard 2.1 bare tokens: `TEL;CELL;PREF` is `TYPE=CELL;TYPE=PREF`, `;QUOTED-PRINTABLE` an encoding.
    private static func bareToken(_ token: String) -> VCardParameter {
        switch token {
        case "QUOTED-PRINTABLE", "BASE64", "8BIT", "7BIT":
            return VCardParameter(upperName: "ENCODING", values: [token])
        default:
            return VCardParameter(upperName: "TYPE", values: [token])
        }
    }

    @inline(__always)
    static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2D || byte == 0x5F
    }

    /// Upper-cases ASCII without a round trip through `String.uppercased()`.
    static func upperASCII(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        var hasLower = false
        for index in range where line[index] >= 0x61 && line[index] <= 0x7A {
            hasLower = true
            break
        }
        if !hasLower {
            return String(decoding: UnsafeBufferPointer(rebasing: line[range]), as: UTF8.self)
        }
        return String(unsafeUninitializedCapacity: range.count) { buffer in
            var out = 0
            for index in range {
                let byte = line[index]
                buffer[out] = (byte >= 0x61 && byte <= 0x7A) ? byte - 0x20 : byte
                out += 1
            }
            return out
        }
    }

    static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x" + (hex.count == 1 ? "0" + hex : hex)
    }
}
