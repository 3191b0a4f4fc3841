/// Reads a whole stream: joins physical lines into logical ones (RFC folds, 2.1
/// quoted-printable soft breaks, 2.1 base64 blocks), then assembles BEGIN…END blocks.
///
/// Linear in the input: every byte is visited a bounded number of times and no step
/// searches backwards.
struct CardReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var lines: PhysicalLineIterator
    private var pending: PhysicalLine?
    /// Holds a logical line that spans several physical lines.
    private var scratch: [UInt8] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.lines = PhysicalLineIterator(bytes)
        self.pending = lines.next()
    }

    /// Parses every card; see `VCardParser.parse`.
    static func readCards(_ bytes: UnsafeBufferPointer<UInt8>) throws(VCardError) -> [VCard] {
        var hasContent = false
        for byte in bytes where byte != Byte.space && byte != Byte.tab && byte != Byte.cr && byte != Byte.lf {
            hasContent = true
            break
        }
        guard hasContent else { throw VCardError("empty input: no vCard data") }
        var reader = CardReader(bytes)
        return try reader.readAll()
    }

    private struct OpenCard {
        var beginLine: Int
        var properties: [VCardProperty] = []
        var version: VCardVersion?
        var versionValue: String?
    }

    private mutating func readAll() throws(VCardError) -> [VCard] {
        var cards: [VCard] = []
        var open: OpenCard?
        while let first = pending {
            pending = lines.next()
            if first.isEmpty { continue }
            let logical = joinContinuations(first)
            let context = ContentLineParser.Context(
                lineNumber: first.number,
                requiresUTF8: open?.version == .v30 || open?.version == .v40)
            let property: VCardProperty
            if logical.isFolded {
                property = try scratch.withUnsafeBufferPointer { (buffer) throws(VCardError) -> VCardProperty in
                    try Self.parseLine(buffer, context: context, insideCard: open != nil)
                }
            } else {
                let buffer = UnsafeBufferPointer(rebasing: bytes[first.start..<logical.end])
                property = try Self.parseLine(buffer, context: context, insideCard: open != nil)
            }

            guard var card = open else {
                try Self.expectBegin(property)
                open = OpenCard(beginLine: first.number)
                continue
            }
            open = nil  // `card` owns the properties array: appends stay in place, not copies.
            switch property.name {
            case "BEGIN":
                throw VCardError(
                    "BEGIN:\(property.rawValue) inside the vCard that begins on line \(card.beginLine) (missing END:VCARD before it)",
                    line: first.number)
            case "END":
                guard property.rawValue.uppercased() == "VCARD" else {
                    throw VCardError("END:\(property.rawValue) does not close BEGIN:VCARD", line: first.number)
                }
                guard let version = card.version else {
                    throw VCardError("missing VERSION property in the vCard that begins on line \(card.beginLine)")
                }
                cards.append(VCard(version: version, properties: card.properties, line: card.beginLine))
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
                // Kept as the version it names (`4.0 ` reads as 4.0), which is what the
                // writer prints: a parse → write → parse round trip is then the identity.
                var canonical = property
                canonical.rawValue = version.rawValue
                card.properties.append(canonical)
                open = card
                continue
            default:
                break
            }
            card.properties.append(property)
            open = card
        }
        if let card = open {
            throw VCardError(
                "missing END:VCARD: the vCard that begins on line \(card.beginLine) is not closed before the end of the input",
                line: lines.lastNumber)
        }
        return cards
    }

    private static func parseLine(
        _ buffer: UnsafeBufferPointer<UInt8>, context: ContentLineParser.Context, insideCard: Bool
    ) throws(VCardError) -> VCardProperty {
        if !insideCard, !startsWithBegin(buffer) {
            if startsWith(buffer, "END:") {
                throw VCardError("END without BEGIN:VCARD", line: context.lineNumber)
            }
            throw VCardError("expected BEGIN:VCARD, found other content", line: context.lineNumber)
        }
        return try ContentLineParser.parse(buffer, context: context)
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
    }

    /// Appends the physical lines that continue `first` into `scratch` when there are any.
    private mutating func joinContinuations(_ first: PhysicalLine) -> LogicalLine {
        var folded = false
        func startScratch(_ reader: inout CardReader) {
            if !folded {
                reader.scratch.removeAll(keepingCapacity: true)
                reader.scratch.append(contentsOf: UnsafeBufferPointer(rebasing: reader.bytes[first.start..<first.end]))
                folded = true
            }
        }
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
        return LogicalLine(isFolded: folded, end: first.end)
    }

    private func endsWithEquals(_ folded: Bool, _ first: PhysicalLine) -> Bool {
        if folded { return scratch.last == Byte.equals }
        return !first.isEmpty && bytes[first.end - 1] == Byte.equals
    }

    private func containsColon(_ line: PhysicalLine) -> Bool {
        for index in line.start..<line.end where bytes[index] == Byte.colon { return true }
        return false
    }

    /// Whether the name/parameter part (before the first ':') mentions `token`, case-insensitively.
    private func declares(_ folded: Bool, _ first: PhysicalLine, _ token: StaticString) -> Bool {
        if folded {
            return scratch.withUnsafeBufferPointer { Self.headerContains($0, token) }
        }
        return Self.headerContains(UnsafeBufferPointer(rebasing: bytes[first.start..<first.end]), token)
    }

    private static func headerContains(_ line: UnsafeBufferPointer<UInt8>, _ token: StaticString) -> Bool {
        var headerEnd = 0
        while headerEnd < line.count, line[headerEnd] != Byte.colon { headerEnd += 1 }
        let length = token.utf8CodeUnitCount
        guard headerEnd >= length else { return false }
        let tokenStart = token.utf8Start
        var start = 0
        while start + length <= headerEnd {
            var matches = true
            for offset in 0..<length {
                var byte = line[start + offset]
                if byte >= 0x61 && byte <= 0x7A { byte -= 0x20 }
                if byte != tokenStart[offset] {
                    matches = false
                    break
                }
            }
            if matches { return true }
            start += 1
        }
        return false
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
