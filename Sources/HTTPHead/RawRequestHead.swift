/// An HTTP/1.1 request head read straight from the bytes a client sent, for
/// `InlineGetHandler`: where the head ends, how long the body behind it is, and whether the
/// request is a plain GET or HEAD this server may answer without NIO's HTTP codec.
///
/// The reading is strict on purpose (RFC 9112 §2-§6): every line ends in CRLF, the request
/// line is `method SP target SP HTTP/1.x` with single spaces, field names are tokens followed
/// at once by `:`, values hold only visible characters, spaces, tabs and obs-text. Bytes
/// outside that grammar (a bare CR or LF, obs-fold, a space before the colon, control
/// characters, an empty first line, a head of `maximumSize` or more) are `unreadable`: the
/// caller then stops reading the connection itself and leaves every byte to the codec, which
/// decides what they mean. A head that reads fine but whose end of request another parser
/// could place elsewhere, or after which NIO's parser reads nothing more (`Transfer-Encoding`,
/// more than one or an odd `Content-Length`, `Upgrade`, a `Connection` or `Proxy-Connection`
/// option other than `keep-alive`, HTTP/1.0, CONNECT) has `isDelimited` false, with the same consequence once
/// it is passed on.
///
/// A module of its own, with no dependencies, so that its tests and the `head` fuzz target
/// (which compares each verdict with NIO's HTTP/1 parser on the same bytes) reach it without
/// building the server.
public struct RawRequestHead: Equatable, Sendable {
    public enum Scan: Equatable, Sendable {
        /// No blank line yet, and nothing wrong so far: more bytes may complete the head.
        case incomplete
        /// Bytes this reading cannot delimit (see the type's comment).
        case unreadable
        case head(RawRequestHead)
    }

    /// Heads this long or longer are left to the codec (CardDAV clients send a few hundred bytes).
    public static let maximumSize = 8192

    /// Bytes of the head, the blank line included.
    public let size: Int
    /// Body bytes after the head, by `Content-Length` (0 without one).
    public let bodyLength: Int
    /// True when the request certainly ends `size + bodyLength` bytes from its start, for NIO's
    /// parser as for this one.
    public let isDelimited: Bool
    /// A GET or HEAD of an origin-form path without query, HTTP/1.1, no body, no `Expect`,
    /// exactly one `Authorization`, only ASCII in its fields, `Connection` at most
    /// `keep-alive`: one this server may answer itself when the card is at hand.
    public let isPlainGet: Bool
    /// The method is HEAD: the answer has no body.
    public let isHead: Bool
    /// Where the target and the field lines are in the scanned bytes.
    private let target: Range<Int>
    private let fieldsStart: Int

    /// Reads the head at the start of `bytes`. `checked`: how many of its first bytes an
    /// earlier scan found `incomplete` (a head that comes in pieces is not read again from its
    /// start each time).
    public static func scan(_ bytes: UnsafeRawBufferPointer, checked: Int = 0) -> Scan {
        guard let size = headSize(bytes, from: max(0, checked - 3)) else {
            return bytes.count >= maximumSize ? .unreadable : .incomplete
        }
        guard size > 0 else { return .unreadable }
        return parse(bytes, size: size).map(Scan.head) ?? .unreadable
    }

    /// The bytes up to and including the blank line; nil while there is none in the first
    /// `maximumSize - 1` bytes; 0 (unreadable) at a bare CR or LF. Looks from `start` on (a
    /// blank line ends at least 3 bytes after where an incomplete scan stopped).
    private static func headSize(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let limit = min(bytes.count, maximumSize - 1)
        var index = start
        while index < limit {
            let byte = bytes[index]
            if byte == lf {
                guard index > 0, bytes[index - 1] == cr else { return 0 }
                // The LF two back had its CR checked when it was read.
                if index >= 3, bytes[index - 2] == lf { return index + 1 }
            } else if byte == cr, index + 1 < bytes.count, bytes[index + 1] != lf {
                return 0
            }
            index += 1
        }
        return nil
    }

    /// The request line and field lines of a head whose lines all end in CRLF (`headSize`).
    private static func parse(_ bytes: UnsafeRawBufferPointer, size: Int) -> RawRequestHead? {
        // Request line. Every loop below stops at the latest at a line's CR.
        var index = 0
        while isToken(bytes[index]) { index += 1 }
        let methodEnd = index
        guard methodEnd > 0, bytes[index] == space else { return nil }
        index += 1
        let targetStart = index
        while bytes[index] > space, bytes[index] < 0x7F { index += 1 }
        let target = targetStart..<index
        guard !target.isEmpty, bytes[index] == space, size - index >= 11 else { return nil }
        index += 1
        guard matches(bytes, index..<index + 7, "HTTP/1.", ignoringCase: false),
              bytes[index + 7] == UInt8(ascii: "1") || bytes[index + 7] == UInt8(ascii: "0"),
              bytes[index + 8] == cr else { return nil }
        let isHTTP11 = bytes[index + 7] == UInt8(ascii: "1")
        index += 10
        let fieldsStart = index

        var contentLengths = 0, bodyLength = 0, authorizations = 0
        var isDelimited = true, isPlain = true
        while index < size - 2 {
            let nameStart = index
            while isToken(bytes[index]) { index += 1 }
            let name = nameStart..<index
            // Also refuses obs-fold (a line starting with a space) and a space before the colon.
            guard !name.isEmpty, bytes[index] == colon else { return nil }
            index += 1
            let valueStart = index
            while bytes[index] != cr {
                let byte = bytes[index]
                guard byte == tab || (byte >= space && byte != 0x7F) else { return nil }
                if byte >= 0x80 { isPlain = false }
                index += 1
            }
            let value = trimmed(bytes, valueStart..<index)
            index += 2
            switch FieldKind(bytes, name) {
            case .contentLength:
                contentLengths += 1
                if let length = decimal(bytes, value) { bodyLength = length } else { isDelimited = false }
            case .transferEncoding, .upgrade:
                isDelimited = false
            case .connection:
                if !onlyKeepAlive(bytes, value) { isDelimited = false }
            case .expect:
                isPlain = false
            case .authorization:
                authorizations += 1
            case .other:
                break
            }
        }
        // HTTP/1.0 without keep-alive ends the connection: NIO's parser refuses what follows.
        if contentLengths > 1 || !isHTTP11 || matches(bytes, 0..<methodEnd, "CONNECT", ignoringCase: false) {
            isDelimited = false
        }
        let isGet = matches(bytes, 0..<methodEnd, "GET", ignoringCase: false)
        let isHead = matches(bytes, 0..<methodEnd, "HEAD", ignoringCase: false)
        isPlain = isPlain && isDelimited && isHTTP11 && (isGet || isHead) && bodyLength == 0 && authorizations == 1
            && bytes[target.lowerBound] == slash && target.allSatisfy { isPathByte(bytes[$0]) }
        return RawRequestHead(size: size, bodyLength: bodyLength, isDelimited: isDelimited, isPlainGet: isPlain,
                              isHead: isHead, target: target, fieldsStart: fieldsStart)
    }

    /// What the engine takes of a plain GET (`isPlainGet`), read again from the same bytes:
    /// the method, the target as sent, and the fields by lower-cased name, repeated fields
    /// joined with ", " (as `RoloResponder.lowercasedHeaders` makes them on the full path).
    /// The same for any head, which is how the fuzz target compares it with NIO's reading.
    public func request(in bytes: UnsafeRawBufferPointer) -> (method: String, target: String, headers: [String: String]) {
        var headers: [String: String] = [:]
        var index = fieldsStart
        while index < size - 2 {
            let nameStart = index
            while bytes[index] != Self.colon { index += 1 }
            let nameLength = index - nameStart
            let name = String(unsafeUninitializedCapacity: nameLength) { name in
                for offset in 0..<nameLength { name[offset] = Self.lowercased(bytes[nameStart + offset]) }
                return nameLength
            }
            index += 1
            let valueStart = index
            while bytes[index] != Self.cr { index += 1 }
            let value = Self.string(bytes, Self.trimmed(bytes, valueStart..<index))
            index += 2
            if let existing = headers[name] {
                headers[name] = existing + ", " + value
            } else {
                headers[name] = value
            }
        }
        return (Self.string(bytes, 0..<target.lowerBound - 1), Self.string(bytes, target), headers)
    }

    private enum FieldKind {
        case contentLength, transferEncoding, connection, upgrade, expect, authorization, other

        init(_ bytes: UnsafeRawBufferPointer, _ name: Range<Int>) {
            switch name.count {
            case 14 where RawRequestHead.matches(bytes, name, "content-length"): self = .contentLength
            case 17 where RawRequestHead.matches(bytes, name, "transfer-encoding"): self = .transferEncoding
            case 10 where RawRequestHead.matches(bytes, name, "connection"): self = .connection
            // llhttp reads it as `Connection`: after `Proxy-Connection: close` it reads nothing more.
            case 16 where RawRequestHead.matches(bytes, name, "proxy-connection"): self = .connection
            case 7 where RawRequestHead.matches(bytes, name, "upgrade"): self = .upgrade
            case 6 where RawRequestHead.matches(bytes, name, "expect"): self = .expect
            case 13 where RawRequestHead.matches(bytes, name, "authorization"): self = .authorization
            default: self = .other
            }
        }
    }

    /// `Connection` whose every list element is `keep-alive` (what HTTP/1.1 does anyway); any
    /// other option (`close`, `upgrade`, a hop-by-hop field name) is for the codec and
    /// Hummingbird to act on.
    private static func onlyKeepAlive(_ bytes: UnsafeRawBufferPointer, _ value: Range<Int>) -> Bool {
        var start = value.lowerBound
        while start <= value.upperBound {
            var end = start
            while end < value.upperBound, bytes[end] != comma { end += 1 }
            let element = trimmed(bytes, start..<end)
            guard element.isEmpty || matches(bytes, element, "keep-alive") else { return false }
            start = end + 1
        }
        return true
    }

    /// Digits only, as `Content-Length` must be (RFC 9110 §8.6), and few enough to fit.
    private static func decimal(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, range.count <= 15 else { return nil }
        var value = 0
        for index in range {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    /// Whether the bytes are `expected`; with `ignoringCase`, `expected` is lower-case and ASCII
    /// letters are compared without case.
    private static func matches(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ expected: StaticString,
                                ignoringCase: Bool = true) -> Bool {
        guard range.count == expected.utf8CodeUnitCount else { return false }
        let characters = expected.utf8Start
        for offset in 0..<range.count {
            let byte = bytes[range.lowerBound + offset]
            guard (ignoringCase ? lowercased(byte) : byte) == characters[offset] else { return false }
        }
        return true
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, bytes[lower] == space || bytes[lower] == tab { lower += 1 }
        while upper > lower, bytes[upper - 1] == space || bytes[upper - 1] == tab { upper -= 1 }
        return lower..<upper
    }

    private static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// tchar (RFC 9110 §5.6.2).
    private static func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "!"), UInt8(ascii: "#")...UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^")...UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// pchar and "/" (RFC 3986 §3.3): no "?", no "#".
    private static func isPathByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "%"),
             UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&")...UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
             UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    private static let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n"), space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
    private static let colon = UInt8(ascii: ":"), comma = UInt8(ascii: ","), slash = UInt8(ascii: "/")
}
