/// Serialises cards to bytes: CRLF, upper-case names, parameters quoted and RFC 6868-encoded
/// where needed, values as stored (already escaped), lines folded at 75 octets.
enum CardWriter {
    static let maxLineOctets = 75

    static func append(_ input: VCard, to out: inout [UInt8]) {
        let card = input.version == .v21 ? VCardConverter.convert(input, to: .v30) : input
        appendLine("BEGIN:VCARD", to: &out)
        if !card.properties.contains(where: { $0.name == "VERSION" }) {
            appendLine("VERSION:" + card.version.rawValue, to: &out)
        }
        for property in card.properties {
            if property.name == "VERSION" {
                appendLine("VERSION:" + card.version.rawValue, to: &out)
            } else {
                append(property, to: &out)
            }
        }
        appendLine("END:VCARD", to: &out)
    }

    private static func appendLine(_ line: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: line.utf8Start, count: line.utf8CodeUnitCount))
        out.append(Byte.cr)
        out.append(Byte.lf)
    }

    private static func appendLine(_ line: String, to out: inout [UInt8]) {
        out.append(contentsOf: line.utf8)
        out.append(Byte.cr)
        out.append(Byte.lf)
    }

    static func append(_ property: VCardProperty, to out: inout [UInt8]) {
        let lineStart = out.count
        if let group = property.group, !group.isEmpty {
            out.append(contentsOf: group.utf8)
            out.append(Byte.dot)
        }
        appendUpper(property.name, to: &out)
        for parameter in property.parameters {
            out.append(Byte.semicolon)
            appendUpper(parameter.name, to: &out)
            out.append(Byte.equals)
            for (index, value) in parameter.values.enumerated() {
                if index > 0 { out.append(Byte.comma) }
                ParameterEncoding.append(value, to: &out)
            }
        }
        out.append(Byte.colon)
        appendValue(property.rawValue, to: &out)
        if out.count - lineStart > maxLineOctets {
            fold(&out, from: lineStart)
        }
        out.append(Byte.cr)
        out.append(Byte.lf)
    }

    private static func appendUpper(_ name: String, to out: inout [UInt8]) {
        for byte in name.utf8 {
            out.append(byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte)
        }
    }

    /// Line breaks inside a value (from 2.1 QUOTED-PRINTABLE or code) are written as `\n`;
    /// other control characters cannot be represented and are dropped.
    private static func appendValue(_ value: String, to out: inout [UInt8]) {
        var clean = true
        for byte in value.utf8 where byte < 0x20 && byte != Byte.tab {
            clean = false
            break
        }
        if clean {
            out.append(contentsOf: value.utf8)
            return
        }
        var previousWasCR = false
        for byte in value.utf8 {
            if byte == Byte.cr || (byte == Byte.lf && !previousWasCR) {
                out.append(Byte.backslash)
                out.append(0x6E)
            } else if byte >= 0x20 || byte == Byte.tab {
                out.append(byte)
            }
            previousWasCR = byte == Byte.cr
        }
    }

    /// Re-writes `out[start...]` folded: each physical line at most 75 octets, a
    /// continuation starting with one space, never splitting a UTF-8 sequence.
    private static func fold(_ out: inout [UInt8], from start: Int) {
        let line = Array(out[start...])
        out.removeSubrange(start...)
        out.reserveCapacity(out.count + line.count + line.count / 70 * 3 + 3)
        var lineLength = 0
        var index = 0
        while index < line.count {
            let charLength = min(utf8SequenceLength(line[index]), line.count - index)
            if lineLength + charLength > maxLineOctets {
                out.append(Byte.cr)
                out.append(Byte.lf)
                out.append(Byte.space)
                lineLength = 1
            }
            out.append(contentsOf: line[index..<(index + charLength)])
            lineLength += charLength
            index += charLength
        }
    }

    @inline(__always)
    private static func utf8SequenceLength(_ lead: UInt8) -> Int {
        switch lead {
        case 0xF0...0xF7: return 4
        case 0xE0...0xEF: return 3
        case 0xC0...0xDF: return 2
        default: return 1
        }
    }
}
