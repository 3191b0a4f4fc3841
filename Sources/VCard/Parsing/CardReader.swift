/// Reads a whole stream: joins physical lines into logical ones (RFC folds, 2.1
/// quoted-printable soft breaks, 2.1 base64 blocks and, in lenient mode, unindented
/// continuation lines), then assembles BEGIN…END blocks.
///
/// Linear in the input: every byte is visited a bounded number of times and no step
/// searches backwards.
struct CardReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var lines: PhysicalLineIterator
    private var pending: PhysicalLine?
    /// Holds a logical line that spans several physical lines.
    private var scratch: [UInt8] = []
    private let lenient: Bool
    private let transcodedFromUTF16: Bool
    /// Properties of the open card whose value was joined from unindented continuation
    /// lines (LF inside): kept here, not in `OpenCard`, which is moved once a property.
    private var joinedProperties: [Int] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>, mode: VCardParseMode = .strict, transcodedFromUTF16: Bool = false) {
        self.bytes = bytes
        self.lines = PhysicalLineIterator(bytes)
        self.pending = lines.next()
        self.lenient = mode == .lenient
        self.transcodedFromUTF16 = transcodedFromUTF16
    }

    /// Parses every card; see `VCardParser.parse`.
    static func readCards(_ input: UnsafeBufferPointer<UInt8>, mode: VCardParseMode = .strict) throws(VCardError) -> [VCard] {
        var bytes = input
        // A UTF-8 byte order mark (Windows editors) says nothing a vCard needs.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            bytes = UnsafeBufferPointer(rebasing: bytes[3...])
        }
        if let encoding = utf16Encoding(bytes) {
            // Whole-file UTF-16 (Outlook/Windows "Unicode" exports): read as the UTF-8 it means.
            let transcoded: [UInt8]
            switch CharsetDecoding.decode(bytes, label: encoding) {
            case .decoded(let text): transcoded = Array(text.utf8)
            case .invalidBytes(let lossy):
                guard mode == .lenient else { throw VCardError("the input looks like \(encoding) but is not valid \(encoding)") }
                transcoded = Array(lossy.utf8)
            case .unknownCharset: throw VCardError("the input is \(encoding), which this system cannot decode")
            }
            return try transcoded.withUnsafeBufferPointer { (buffer) throws(VCardError) -> [VCard] in
                try readUTF8OrLegacy(buffer, mode: mode, transcodedFromUTF16: true)
            }
        }
        return try readUTF8OrLegacy(bytes, mode: mode, transcodedFromUTF16: false)
    }

    private static func readUTF8OrLegacy(
        _ bytes: UnsafeBufferPointer<UInt8>, mode: VCardParseMode, transcodedFromUTF16: Bool
    ) throws(VCardError) -> [VCard] {
        var hasContent = false
        for byte in bytes where byte != Byte.space && byte != Byte.tab && byte != Byte.cr && byte != Byte.lf {
            hasContent = true
            break
        }
        guard hasContent else { throw VCardError("empty input: no vCard data") }
        var reader = CardReader(bytes, mode: mode, transcodedFromUTF16: transcodedFromUTF16)
        return try reader.readAll()
    }

    /// "UTF-16LE"/"UTF-16BE"/"UTF-16" when the input is UTF-16: a byte order mark, or the
    /// zero bytes of ASCII text (`B\0E\0…`, `\0B\0E…`) in its first characters.
    private static func utf16Encoding(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard bytes.count >= 2 else { return nil }
        if (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) {
            if bytes.count >= 4, bytes[0] == 0xFF, bytes[2] == 0, bytes[3] == 0 { return nil }  // UTF-32LE: not handled
            return "UTF-16"  // iconv reads the BOM and drops it.
        }
        guard bytes.count >= 8 else { return nil }
        var evenZeros = 0
        var oddZeros = 0
        for index in 0..<8 where bytes[index] == 0 {
            if index % 2 == 0 { evenZeros += 1 } else { oddZeros += 1 }
        }
        if oddZeros == 4 && evenZeros == 0 { return "UTF-16LE" }
        if evenZeros == 4 && oddZeros == 0 { return "UTF-16BE" }
        return nil
    }

    private struct OpenCard {
        var beginLine: Int
        var properties: [VCardProperty] = []
        var version: VCardVersion?
        var versionValue: String?
        /// A property used a 2.1-only construct (for reading a card without VERSION).
        var sawV21Shape = false
    }

    private mutating func readAll() throws(VCardError) -> [VCard] {
        var cards: [VCard] = []
        var open: OpenCard?
        // One context for the stream, updated per line (not built and torn down for each
        // line: this loop runs once a property). The parse keeps the last declared CHARSET in it.
        var context = ContentLineParser.Context(lineNumber: 0, requiresUTF8: false)
        context.lenient = lenient
        context.transcodedFromUTF16 = transcodedFromUTF16
        while let first = pending {
            pending = lines.next()
            if first.isEmpty { continue }
            let logical = joinContinuations(first, insideCard: open != nil)
            context.lineNumber = first.number
            context.requiresUTF8 = open?.version == .v30 || open?.version == .v40
            context.allowsLineBreaks = logical.hasLineBreaks
            context.sawV21Shape = false
            let property: VCardProperty
            if logical.isFolded {
                property = try scratch.withUnsafeBufferPointer { (buffer) throws(VCardError) -> VCardProperty in
                    try Self.parseLine(buffer, context: &context, insideCard: open != nil)
                }
            } else {
                let buffer = UnsafeBufferPointer(rebasing: bytes[first.start..<logical.end])
                property = try Self.parseLine(buffer, context: &context, insideCard: open != nil)
            }

            guard var card = open else {
                try Self.expectBegin(property)
                open = OpenCard(beginLine: first.number)
                joinedProperties.removeAll(keepingCapacity: true)
                continue
            }
            open = nil  // `card` owns the properties array: appends stay in place, not copies.
            if context.sawV21Shape { card.sawV21Shape = true }
            switch property.name {
            case "BEGIN":
                throw VCardError(
                    "BEGIN:\(property.rawValue) inside the vCard that begins on line \(card.beginLine) (missing END:VCARD before it)",
                    line: first.number)
            case "END":
                guard property.rawValue.uppercased() == "VCARD" else {
                    throw VCardError("END:\(property.rawValue) does not close BEGIN:VCARD", line: first.number)
                }
                cards.append(try finish(card))
                open = nil
                continue
            case "VERSION":
                let value = property.rawValue.trimmingASCIISpaces()
                if let previous = card.versionValue {
                    if previous != value {
                        throw VCardError(
                            "VERSION appears twice with different values (\(previous) and \(value))",
                            line: first.number)
                    }
                    open = card
                    continue
                }
                guard let version = VCardVersion(rawValue: value) else {
                    throw VCardError("unsupported VERSION \(value) (expected 2.1, 3.0 or 4.0)", line: first.number)
                }
                card.version = version
                card.versionValue = value
                // Kept as the version it names (`4.0 ` reads as 4.0), without group or
                // parameters, which is what the writer prints: a parse → write → parse
                // round trip is then the identity (a VERSION with parameters broke it:
                // found by fuzzing).
                card.properties.append(VCardProperty(group: nil, upperName: "VERSION", parameters: [],
                                                     rawValue: version.rawValue, line: property.line))
                open = card
                continue
            default:
                break
            }
            if logical.hasLineBreaks { joinedProperties.append(card.properties.count) }
            card.properties.append(consume property)
            open = card
        }
        if let card = open {
            throw VCardError(
                "missing END:VCARD: the vCard that begins on line \(card.beginLine) is not closed before the end of the input",
                line: lines.lastNumber)
        }
        return cards
    }

    /// The card at END:VCARD. Without a VERSION line, lenient mode reads the card by its
    /// shape (2.1 constructs -> 2.1, else 3.0) and adds the VERSION property it implies.
    private func finish(_ open: OpenCard) throws(VCardError) -> VCard {
        var card = open
        let version: VCardVersion
        if let declared = card.version {
            version = declared
        } else if lenient {
            version = card.sawV21Shape ? .v21 : .v30
            card.properties.insert(
                VCardProperty(group: nil, upperName: "VERSION", parameters: [], rawValue: version.rawValue, line: 0), at: 0)
        } else {
            throw VCardError(
                "missing VERSION property in the vCard that begins on line \(card.beginLine) (a vCard must say VERSION:3.0 or VERSION:4.0)")
        }
        if version != .v21 {
            // 3.0/4.0 text cannot hold a raw line break: the joined lines become `\n`.
            let shift = card.version == nil ? 1 : 0  // the VERSION inserted above
            for index in joinedProperties.lazy.map({ $0 + shift }) {
                card.properties[index].rawValue = card.properties[index].rawValue.replacingNewlines(with: "\\n")
            }
        }
        return VCard(version: version, properties: card.properties, line: card.beginLine)
    }

    private static func parseLine(
        _ buffer: UnsafeBufferPointer<UInt8>, context: inout ContentLineParser.Context, insideCard: Bool
    ) throws(VCardError) -> VCardProperty {
        if !insideCard, !startsWithBegin(buffer) {
            if startsWith(buffer, "END:") {
                throw VCardError("END without BEGIN:VCARD", line: context.lineNumber)
            }
            throw VCardError("expected BEGIN:VCARD, found other content", line: context.lineNumber)
        }
        return try ContentLineParser.parse(buffer, context: &context)
    }

    private static func expectBegin(_ property: VCardProperty) throws(VCardError) {
        let value = property.rawValue.trimmingASCIISpaces().uppercased()
        if value == "VCARD" { return }
        if value == "VCALENDAR" {
            throw VCardError("BEGIN:VCALENDAR is iCalendar data, not a vCard (expected BEGIN:VCARD)", line: property.line)
        }
        throw VCardError("BEGIN:\(property.rawValue) is not a vCard (expected BEGIN:VCARD)", line: property.line)
    }

    private static func startsWithBegin(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        startsWith(buffer, "BEGIN:") || startsWith(buffer, "BEGIN;")
    }

    /// Case-insensitive ASCII prefix test.
    private static func startsWith(_ buffer: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        guard buffer.count >= prefix.utf8CodeUnitCount else { return false }
        let start = prefix.utf8Start
        for index in 0..<prefix.utf8CodeUnitCount {
            var byte = buffer[index]
            if byte >= 0x61 && byte <= 0x7A { byte -= 0x20 }
            if byte != start[index] { return false }
        }
        return true
    }

    private struct LogicalLine {
        /// True when the line was assembled in `scratch`.
        var isFolded: Bool
        /// End of the first physical line (when not folded).
        var end: Int
        /// Lenient mode joined unindented continuation lines with LF bytes.
        var hasLineBreaks = false
    }

    /// Appends the physical lines that continue `first` into `scratch` when there are any.
    private mutating func joinContinuations(_ first: PhysicalLine, insideCard: Bool) -> LogicalLine {
        var folded = false
        var hasLineBreaks = false
        func startScratch(_ reader: inout CardReader) {
            if !folded {
                reader.scratch.removeAll(keepingCapacity: true)
                reader.scratch.append(contentsOf: UnsafeBufferPointer(rebasing: reader.bytes[first.start..<first.end]))
                folded = true
            }
        }
        while true {
            // RFC folding: a line starting with space or TAB continues the previous one.
            while let next = pending, !next.isEmpty, bytes[next.start] == Byte.space || bytes[next.start] == Byte.tab {
                startScratch(&self)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[(next.start + 1)..<next.end]))
                pending = lines.next()
            }
            // 2.1 quoted-printable soft line breaks: a value line ending in '=' continues.
            if endsWithEquals(folded, first), declares(folded, first, "QUOTED-PRINTABLE") {
                while endsWithEquals(folded, first), let next = pending {
                    startScratch(&self)
                    scratch.removeLast()
                    scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[next.start..<next.end]))
                    pending = lines.next()
                }
            }
            // 2.1 base64 blocks: unindented lines without ':' continue, a blank line ends them.
            if let next = pending, !next.isEmpty, !containsColon(next), declares(folded, first, "BASE64") {
                while let next = pending, !next.isEmpty, !containsColon(next) {
                    startScratch(&self)
                    var start = next.start
                    while start < next.end, bytes[start] == Byte.space || bytes[start] == Byte.tab { start += 1 }
                    scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<next.end]))
                    pending = lines.next()
                }
            }
            // Lenient: older iOS / Android exports continue multi-line NOTE and ADR values on
            // unindented lines. A line that cannot be a property line continues the value.
            guard lenient, insideCard, !isEndLine(first), let (blankLines, line) = unindentedContinuation() else { break }
            startScratch(&self)
            scratch.append(contentsOf: repeatElement(Byte.lf, count: blankLines + 1))
            scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[line.start..<line.end]))
            for _ in 0...blankLines { pending = lines.next() }
            hasLineBreaks = true
        }
        return LogicalLine(isFolded: folded, end: first.end, hasLineBreaks: hasLineBreaks)
    }

    /// Lenient mode: the line that continues the current value without a leading space
    /// (one that cannot start a property), and how many blank lines precede it; nil when
    /// the next non-blank line is a property line (END included) or the input ends.
    private func unindentedContinuation() -> (Int, PhysicalLine)? {
        var lookahead = lines
        var candidate = pending
        var blankLines = 0
        while let line = candidate, line.isEmpty {
            candidate = lookahead.next()
            blankLines += 1
        }
        guard let line = candidate, !isPropertyLine(line, followedBy: lookahead) else { return nil }
        return (blankLines, line)
    }

    private func isEndLine(_ line: PhysicalLine) -> Bool {
        Self.startsWith(UnsafeBufferPointer(rebasing: bytes[line.start..<line.end]), "END:")
    }

    /// `[group.]NAME[;params]:` where NAME is a property vCard defines or an `X-` name.
    /// The line is read with the folded lines after it (`following`): a long parameter
    /// list folded before its `:` (found by fuzzing) is still a property, not a
    /// continuation glued onto the value before it.
    private func isPropertyLine(_ line: PhysicalLine, followedBy following: PhysicalLineIterator) -> Bool {
        var logical = FoldedBytes(bytes: bytes, line: line, following: following)
        var name: [UInt8] = []
        while let byte = logical.next() {
            if byte == Byte.colon || byte == Byte.semicolon {
                guard !name.isEmpty else { return false }
                if byte == Byte.semicolon {
                    var sawColon = false
                    while !sawColon, let byte = logical.next() { sawColon = byte == Byte.colon }
                    if !sawColon { return false }
                }
                let upper = String(decoding: name.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }, as: UTF8.self)
                return upper.hasPrefix("X-") || KnownProperties.names.contains(upper)
            }
            if byte == Byte.dot {
                name.removeAll(keepingCapacity: true)
            } else if !ContentLineParser.isNameByte(byte) {
                return false
            } else {
                name.append(byte)
            }
        }
        return false
    }

    private func endsWithEquals(_ folded: Bool, _ first: PhysicalLine) -> Bool {
        if folded { return scratch.last == Byte.equals }
        return !first.isEmpty && bytes[first.end - 1] == Byte.equals
    }

    /// Whether `line`, with the lines folded onto it, has a ':': a property whose colon
    /// sits on a folded line is no line of a 2.1 base64 block (found by fuzzing).
    private func containsColon(_ line: PhysicalLine) -> Bool {
        var logical = FoldedBytes(bytes: bytes, line: line, following: lines)
        while let byte = logical.next(), byte != Byte.colon {}
        return logical.sawColon
    }

    /// Whether the line's parameters declare the transfer encoding `token`: a 2.1 bare
    /// parameter (`;BASE64`) or a value of ENCODING (`;ENCODING=QUOTED-PRINTABLE`). The
    /// token anywhere else (a property named BASE64, a value `X-A=NOTBASE64`) used to count
    /// too, and joined the next lines onto the value (found by fuzzing).
    private func declares(_ folded: Bool, _ first: PhysicalLine, _ token: StaticString) -> Bool {
        if folded {
            return scratch.withUnsafeBufferPointer { Self.parametersDeclare($0, token) }
        }
        return Self.parametersDeclare(UnsafeBufferPointer(rebasing: bytes[first.start..<first.end]), token)
    }

    private static func parametersDeclare(_ line: UnsafeBufferPointer<UInt8>, _ token: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: token.utf8Start, count: token.utf8CodeUnitCount)
        func isToken(_ range: Range<Int>) -> Bool {
            var range = range
            if range.count >= 2, line[range.lowerBound] == Byte.dquote, line[range.upperBound - 1] == Byte.dquote {
                range = (range.lowerBound + 1)..<(range.upperBound - 1)
            }
            return range.count == expected.count && zip(range, expected).allSatisfy { index, upper in
                let byte = line[index]
                return (byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte) == upper
            }
        }
        var index = 0
        while index < line.count, line[index] != Byte.semicolon, line[index] != Byte.colon { index += 1 }
        while index < line.count, line[index] == Byte.semicolon {
            index += 1
            let start = index
            var equals: Int?
            var quoted = false
            while index < line.count {
                let byte = line[index]
                if byte == Byte.dquote {
                    quoted.toggle()
                } else if !quoted, byte == Byte.semicolon || byte == Byte.colon {
                    break
                } else if !quoted, byte == Byte.equals, equals == nil {
                    equals = index
                }
                index += 1
            }
            guard let equals else {
                if isToken(start..<index) { return true }
                continue
            }
            let name = Array(UnsafeBufferPointer(rebasing: line[start..<equals])).map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }
            guard name.elementsEqual("ENCODING".utf8) else { continue }
            var valueStart = equals + 1
            for position in (equals + 1)...index where position == index || line[position] == Byte.comma {
                if isToken(valueStart..<position) { return true }
                valueStart = position + 1
            }
        }
        return false
    }
}

/// The bytes of a physical line and of the lines folded onto it (RFC 6350 §3.2: a line
/// that starts with a space or TAB continues the one before, without that first byte).
private struct FoldedBytes {
    let bytes: UnsafeBufferPointer<UInt8>
    var line: PhysicalLine
    var index: Int
    var following: PhysicalLineIterator

    init(bytes: UnsafeBufferPointer<UInt8>, line: PhysicalLine, following: PhysicalLineIterator) {
        self.bytes = bytes; self.line = line; self.index = line.start; self.following = following
    }

    /// Set once `next()` has returned a ':'.
    private(set) var sawColon = false

    mutating func next() -> UInt8? {
        while index >= line.end {
            guard let next = following.next(), !next.isEmpty,
                  bytes[next.start] == Byte.space || bytes[next.start] == Byte.tab else { return nil }
            line = next
            index = next.start + 1
        }
        defer { index += 1 }
        if bytes[index] == Byte.colon { sawColon = true }
        return bytes[index]
    }
}

extension String {
    /// Drops leading and trailing spaces and TABs.
    func trimmingASCIISpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return String(scalars[first...last])
    }
}

/// Property names defined by vCard 2.1, RFC 2426, RFC 6350 and their extensions (RFC 6474,
/// 6715, 8605, 9554), plus BEGIN/END: what lenient reading accepts as the start of a property.
enum KnownProperties {
    static let names: Set<String> = [
        "BEGIN", "END", "VERSION", "SOURCE", "KIND", "XML", "FN", "N", "NICKNAME", "PHOTO", "BDAY", "ANNIVERSARY",
        "GENDER", "ADR", "LABEL", "TEL", "EMAIL", "MAILER", "IMPP", "LANG", "TZ", "GEO", "TITLE", "ROLE", "LOGO",
        "AGENT", "ORG", "MEMBER", "RELATED", "CATEGORIES", "NOTE", "PRODID", "REV", "SORT-STRING", "SOUND", "UID",
        "CLIENTPIDMAP", "URL", "CLASS", "KEY", "FBURL", "CALADRURI", "CALURI", "NAME", "PROFILE", "BIRTHPLACE",
        "DEATHPLACE", "DEATHDATE", "EXPERTISE", "HOBBY", "INTEREST", "ORG-DIRECTORY", "CONTACT-URI", "CREATED",
        "GRAMGENDER", "LANGUAGE", "PRONOUNS", "SOCIALPROFILE", "JSPROP", "DELIVERY",
    ]
}
