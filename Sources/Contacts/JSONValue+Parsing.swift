/// A small strict JSON reader, so tests and tools compare oracle documents as `JSONValue`s
/// without Foundation's platform differences (NSNumber booleans on Linux).
extension JSONValue {
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var offset: Int
        public var description: String { "JSON offset \(offset): \(message)" }
    }

    public init(parsing text: String) throws(ParseError) {
        var parser = JSONParser(bytes: Array(text.utf8))
        self = try parser.parseDocument()
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() throws(JSONValue.ParseError) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        guard position == bytes.count else { throw error("trailing characters") }
        return value
    }

    private func error(_ message: String) -> JSONValue.ParseError {
        JSONValue.ParseError(message: message, offset: position)
    }

    private mutating func skipWhitespace() {
        while position < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[position]) { position += 1 }
    }

    private mutating func expect(_ literal: String) throws(JSONValue.ParseError) {
        for byte in literal.utf8 {
            guard position < bytes.count, bytes[position] == byte else { throw error("expected \(literal)") }
            position += 1
        }
    }

    private mutating func parseValue() throws(JSONValue.ParseError) -> JSONValue {
        skipWhitespace()
        guard position < bytes.count else { throw error("unexpected end") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        default: return try parseNumber()
        }
    }

    private mutating func parseObject() throws(JSONValue.ParseError) -> JSONValue {
        position += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .object(members) }
        while true {
            skipWhitespace()
            let key = try parseString()
            skipWhitespace()
            try expect(":")
            members[key] = try parseValue()
            skipWhitespace()
            guard position < bytes.count else { throw error("unterminated object") }
            position += 1
            if bytes[position - 1] == UInt8(ascii: "}") { return .object(members) }
            guard bytes[position - 1] == UInt8(ascii: ",") else { throw error("expected , or }") }
        }
    }

    private mutating func parseArray() throws(JSONValue.ParseError) -> JSONValue {
        position += 1
        var values: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return .array(values) }
        while true {
            values.append(try parseValue())
            skipWhitespace()
            guard position < bytes.count else { throw error("unterminated array") }
            position += 1
            if bytes[position - 1] == UInt8(ascii: "]") { return .array(values) }
            guard bytes[position - 1] == UInt8(ascii: ",") else { throw error("expected , or ]") }
        }
    }

    private mutating func parseString() throws(JSONValue.ParseError) -> String {
        try expect("\"")
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
            run.removeAll(keepingCapacity: true)
        }
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                guard position < bytes.count else { break }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800..<0xDC00).contains(code) {
                        try expect("\\u")
                        let low = try parseHex4()
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("bad \\u escape") }
                    scalars.append(scalar)
                default: scalars.append(Unicode.Scalar(escape))
                }
            default:
                run.append(byte)
            }
        }
        throw error("unterminated string")
    }

    private mutating func parseHex4() throws(JSONValue.ParseError) -> UInt32 {
        guard position + 4 <= bytes.count,
              let code = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
        else { throw error("bad \\u escape") }
        position += 4
        return code
    }

    private mutating func parseNumber() throws(JSONValue.ParseError) -> JSONValue {
        let start = position
        while position < bytes.count, "+-0123456789.eE".utf8.contains(bytes[position]) { position += 1 }
        guard let number = Double(String(decoding: bytes[start..<position], as: UTF8.self)) else {
            throw error("bad number")
        }
        return .number(number)
    }
}
