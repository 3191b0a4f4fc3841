/// Well-known namespace URIs and the prefixes Rolo writes them with.
public enum XMLNamespace {
    public static let dav = "DAV:"
    public static let carddav = "urn:ietf:params:xml:ns:carddav"
    public static let calendarServer = "http://calendarserver.org/ns/"
    /// The namespace of `xml:lang` and `xml:space`: bound to `xml` in every document and
    /// never declared (a declaration of it, or another prefix for it, is not well-formed).
    public static let xml = "http://www.w3.org/XML/1998/namespace"

    /// Prefixes declared on every document's root element: `d:`, `card:`, `cs:`.
    public static let standardPrefixes: [(prefix: String, uri: String)] = [
        ("d", dav), ("card", carddav), ("cs", calendarServer),
    ]
}

/// Builds XML response bodies straight into a byte buffer.
///
/// Response bodies (multistatus with hundreds of cards) are written on every PROPFIND and
/// REPORT, so there is no intermediate tree: elements are streamed with escaping done on
/// UTF-8 bytes. The root element declares `d:`, `card:` and `cs:`; any other namespace gets
/// a generated prefix (`x0`, `x1`…) declared on the first element that needs it and
/// reused by its descendants.
public struct XMLWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    private struct Scope {
        /// Where the element's qualified name (`d:href`) sits in `bytes`: the end tag copies
        /// it from there instead of keeping and re-encoding the strings.
        var nameOffset: Int
        var nameLength: Int
        /// The qualified name itself, once `discardBytes` has forgotten its start tag.
        var detachedName: [UInt8]? = nil
        /// Namespaces declared on this element, in scope for its descendants.
        var declared: [(uri: String, prefix: String)]
    }
    private var rootPrefixes: [(prefix: String, uri: String)]
    private var open: [Scope] = []
    private var startTagOpen = false
    private var generatedPrefixes = 0

    /// - Parameters:
    ///   - declaration: whether to begin with `<?xml version="1.0" encoding="utf-8"?>`.
    ///   - rootPrefixes: namespaces declared on the root element.
    public init(declaration: Bool = true,
                rootPrefixes: [(prefix: String, uri: String)] = XMLNamespace.standardPrefixes,
                reservingCapacity capacity: Int = 1024) {
        self.rootPrefixes = rootPrefixes
        bytes.reserveCapacity(capacity)
        if declaration { bytes += #"<?xml version="1.0" encoding="utf-8"?>"#.utf8 + [0x0A] }
    }

    /// Makes room for `count` more bytes at once (e.g. the cards a multistatus will carry),
    /// sparing the buffer's repeated doubling and copying.
    public mutating func reserveCapacity(forAdditional count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    /// Forgets the bytes written so far (the caller has sent them), keeping the open
    /// elements and the buffer's capacity: a document streamed chunk by chunk reuses one
    /// buffer. The storage is reused only when no copy of `bytes` is still alive; otherwise
    /// a new buffer of the same capacity is allocated (never written into a shared one).
    public mutating func discardBytes() {
        detachOpenNames()
        bytes.removeAll(keepingCapacity: true)
    }

    /// The same, but a buffer that grew past `capacity` (one 10 MB card written whole) is
    /// let go and replaced by one of `capacity`, so a streamed answer does not keep the
    /// biggest card's size for the rest of its chunks.
    public mutating func discardBytes(keepingCapacityUpTo capacity: Int) {
        guard bytes.capacity > capacity else { return discardBytes() }
        detachOpenNames()
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Copies the qualified names of the open elements out of `bytes` before those are
    /// handed over or forgotten: their end tags still come.
    private mutating func detachOpenNames() {
        for index in open.indices where open[index].detachedName == nil {
            let scope = open[index]
            open[index].detachedName = Array(bytes[scope.nameOffset..<(scope.nameOffset + scope.nameLength)])
        }
    }

    /// The document as text.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// True once every started element has been ended.
    public var isComplete: Bool { open.isEmpty && !bytes.isEmpty }

    // MARK: Elements

    /// Opens `<prefix:name …>`; close it with `end()`.
    public mutating func start(_ namespace: String, _ name: String, attributes: [XMLAttribute] = []) {
        closeStartTag()
        var declarations: [(uri: String, prefix: String)] = open.isEmpty ? rootPrefixes.map { ($0.uri, $0.prefix) } : []
        let prefix = resolvePrefix(namespace, declarations: &declarations)
        bytes.append(0x3C) // <
        let nameOffset = bytes.count
        appendQualified(prefix, name)
        let nameLength = bytes.count - nameOffset
        for attribute in attributes {
            bytes.append(0x20)
            appendQualified(resolvePrefix(attribute.namespace, declarations: &declarations), attribute.name)
            appendLiteral("=\"")
            appendEscaped(attribute.value, attribute: true)
            bytes.append(0x22)
        }
        for declaration in declarations {
            appendLiteral(" xmlns:")
            appendUTF8(of: declaration.prefix)
            appendLiteral("=\"")
            appendEscaped(declaration.uri, attribute: true)
            bytes.append(0x22)
        }
        startTagOpen = true
        open.append(Scope(nameOffset: nameOffset, nameLength: nameLength, declared: declarations))
    }

    /// Closes the innermost open element (as `<x/>` when it has no content).
    public mutating func end() {
        guard let scope = open.popLast() else { preconditionFailure("XMLWriter.end() without start()") }
        if startTagOpen {
            appendLiteral("/>")
            startTagOpen = false
        } else {
            appendLiteral("</")
            if let name = scope.detachedName {
                bytes.append(contentsOf: name)
            } else {
                for offset in scope.nameOffset..<(scope.nameOffset + scope.nameLength) { bytes.append(bytes[offset]) }
            }
            bytes.append(0x3E)
        }
    }

    /// Writes escaped character data inside the current element.
    public mutating func text(_ text: String) {
        closeStartTag()
        appendEscaped(text, attribute: false)
    }

    /// Writes UTF-8 bytes (a stored vCard) as escaped character data in one pass, without
    /// making a String of them first.
    public mutating func text<Bytes: Sequence<UInt8>>(utf8 text: Bytes) {
        closeStartTag()
        let done: Void? = text.withContiguousStorageIfAvailable { appendEscaped($0, attribute: false) }
        if done == nil { Array(text).withUnsafeBufferPointer { appendEscaped($0, attribute: false) } }
    }

    /// Writes an already serialised, well-formed fragment verbatim (a stored dead
    /// property value). The fragment must declare the namespaces it uses.
    public mutating func raw(_ xml: String) {
        closeStartTag()
        appendUTF8(of: xml)
    }

    /// Writes pre-encoded markup verbatim (fixed fragments a caller encodes once and
    /// repeats per row). The caller keeps it well-formed and balanced.
    public mutating func raw(bytes fragment: [UInt8]) {
        closeStartTag()
        bytes.append(contentsOf: fragment)
    }

    /// `<name/>`
    public mutating func empty(_ namespace: String, _ name: String, attributes: [XMLAttribute] = []) {
        start(namespace, name, attributes: attributes)
        end()
    }

    /// `<name>text</name>`
    public mutating func element(_ namespace: String, _ name: String, text: String) {
        start(namespace, name)
        if !text.isEmpty { self.text(text) }
        end()
    }

    /// `<name>…</name>` with the content written by `body`.
    public mutating func element<E: Error>(_ namespace: String, _ name: String, attributes: [XMLAttribute] = [],
                                           _ body: (inout XMLWriter) throws(E) -> Void) throws(E) {
        start(namespace, name, attributes: attributes)
        try body(&self)
        end()
    }

    /// Serialises a parsed element with its attributes, text and children.
    public mutating func write(_ element: XMLElement) {
        start(element.namespace, element.name, attributes: element.attributes)
        writeContent(of: element)
        end()
    }

    /// Writes an element's text and children (not the element itself).
    public mutating func writeContent(of element: XMLElement) {
        if !element.text.isEmpty { text(element.text) }
        for child in element.children { write(child) }
    }

    // MARK: Internals

    /// The prefix bound to `namespace` here, binding a new one (added to `declarations`)
    /// when there is none; nil for no namespace (no default namespace is ever declared).
    private mutating func resolvePrefix(_ namespace: String, declarations: inout [(uri: String, prefix: String)]) -> String? {
        if namespace.isEmpty { return nil }
        if namespace == XMLNamespace.xml { return "xml" }
        if let known = prefix(for: namespace, pending: declarations) { return known }
        let fresh = unboundPreferredPrefix(for: namespace, pending: declarations) ?? {
            generatedPrefixes += 1
            return "x\(generatedPrefixes - 1)"
        }()
        declarations.append((namespace, fresh))
        return fresh
    }

    private mutating func appendQualified(_ prefix: String?, _ name: String) {
        if let prefix {
            appendUTF8(of: prefix)
            bytes.append(0x3A)
        }
        appendUTF8(of: name)
    }

    /// A string's bytes, copied in one go from its contiguous storage when it has one.
    @inline(__always)
    private mutating func appendUTF8(of string: String) {
        let copied: Void? = string.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        if copied == nil { bytes += string.utf8 }
    }

    private func prefix(for namespace: String, pending: [(uri: String, prefix: String)]) -> String? {
        if let match = pending.first(where: { $0.uri == namespace }) { return match.prefix }
        for scope in open.reversed() {
            if let match = scope.declared.first(where: { $0.uri == namespace }) { return match.prefix }
        }
        return nil
    }

    /// `d`, `card` or `cs` for their namespaces, unless that prefix is bound to another one here.
    private func unboundPreferredPrefix(for namespace: String, pending: [(uri: String, prefix: String)]) -> String? {
        guard let preferred = XMLNamespace.standardPrefixes.first(where: { $0.uri == namespace })?.prefix else { return nil }
        let bound = pending.contains { $0.prefix == preferred }
            || open.contains { scope in scope.declared.contains { $0.prefix == preferred } }
        return bound ? nil : preferred
    }

    /// Appends a literal's bytes without going through a String.
    @inline(__always)
    private mutating func appendLiteral(_ literal: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    private mutating func closeStartTag() {
        if startTagOpen {
            bytes.append(0x3E)
            startTagOpen = false
        }
    }

    /// Escapes a string's UTF-8 bytes (see `appendEscaped(_:attribute:)` on bytes).
    private mutating func appendEscaped(_ string: String, attribute: Bool) {
        var string = string
        string.withUTF8 { appendEscaped($0, attribute: attribute) }
    }

    /// Escapes `&`, `<`, `>` (and in attributes `"`, tab, CR, LF as character references;
    /// in text CR only, so CRLF survives parsing). Control characters XML 1.0 cannot carry,
    /// U+FFFE/U+FFFF and invalid UTF-8 become U+FFFD, so output stays well-formed whatever
    /// the bytes.
    ///
    /// The bytes are escaped a block at a time into a scratch buffer with plain stores, then
    /// appended in one go: eight bytes are loaded and tested at once (`PlainWord`) and, when
    /// plain, stored as they are; only a word that holds something to look at goes byte by
    /// byte. A card is mostly plain ASCII with a CR at each line end, and appending each
    /// run and each `&#13;` to the array separately (two appends a line, each with its
    /// capacity and uniqueness checks) cost more than the scanning.
    private mutating func appendEscaped(_ buffer: UnsafeBufferPointer<UInt8>, attribute: Bool) {
        let count = buffer.count
        guard count > 0 else { return }
        let block = min(count, XMLEscaper.blockSize)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: XMLEscaper.scratchCapacity(forBlock: block)) { scratch in
            var index = 0
            while index < count {
                let (next, written) = XMLEscaper.escape(buffer, from: index, upTo: min(count, index + block),
                                                        into: scratch, attribute: attribute)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<written]))
                index = next
            }
        }
    }
}

/// The escaping loop of `XMLWriter`, on raw buffers.
enum XMLEscaper {
    /// Input bytes escaped per scratch buffer.
    static let blockSize = 4096

    /// Room for a block: at most 6 bytes out per byte in (`&quot;`), a UTF-8 sequence
    /// that starts in the block is taken whole (up to 3 bytes past its end), and every
    /// store is eight bytes wide.
    static func scratchCapacity(forBlock block: Int) -> Int { (block + 3) * 6 + 8 }

    /// Escapes `buffer[start..<end]` (a last UTF-8 sequence may run past `end`) into `out`;
    /// returns where it stopped in `buffer` and how many bytes it wrote.
    ///
    /// Eight bytes at a time: each word is stored to the output as it was loaded, and when
    /// some byte of it needs a look, only the plain bytes before that one are kept, the
    /// byte is handled, and the next word starts right after it. The scratch buffer has
    /// room for these eight-byte stores past what is kept (`scratchCapacity`).
    @inline(__always)
    static func escape(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int, upTo end: Int,
                       into out: UnsafeMutableBufferPointer<UInt8>, attribute: Bool) -> (next: Int, written: Int) {
        let base = UnsafeRawPointer(buffer.baseAddress!)
        let output = UnsafeMutableRawPointer(out.baseAddress!)
        let table = attribute ? attributeEscapes : textEscapes
        var index = start
        var written = 0
        /// A reference of up to eight bytes, packed little-endian, written with one store.
        @inline(__always) func put(_ packed: UInt64, _ count: Int) {
            output.storeBytes(of: packed.littleEndian, toByteOffset: written, as: UInt64.self)
            written += count
        }
        return table.withUnsafeBufferPointer { table in
            /// The byte at `index`, which needs a look.
            @inline(__always) func handle() {
                let byte = buffer[index]
                // Plain after all (tab and LF in text, say): one table load decides.
                if table[Int(byte)] == 0 {
                    output.storeBytes(of: byte, toByteOffset: written, as: UInt8.self)
                    index += 1
                    written += 1
                    return
                }
                if byte >= 0x80 {
                    let length = validUTF8SequenceLength(buffer, at: index)
                    if length > 0 {
                        output.advanced(by: written).copyMemory(from: base.advanced(by: index), byteCount: length)
                        index += length
                        written += length
                    } else {
                        put(Packed.replacement, 3)
                        index += 1
                    }
                    return
                }
                switch byte {
                case 0x26: put(Packed.amp, 5)
                case 0x3C: put(Packed.lt, 4)
                case 0x3E: put(Packed.gt, 4)
                case 0x22: put(Packed.quot, 6)
                case 0x09: put(Packed.tab, 4)
                case 0x0A: put(Packed.lineFeed, 5)
                case 0x0D:
                    // A vCard's every line ends in CR LF, and LF is plain in text: both at
                    // once, one look per line end rather than two.
                    if !attribute, index + 1 < buffer.count, buffer[index + 1] == 0x0A {
                        put(Packed.carriageReturnLineFeed, 6)
                        index += 2
                        return
                    }
                    put(Packed.carriageReturn, 5)
                default: put(Packed.replacement, 3)
                }
                index += 1
            }
            while index + 8 <= end {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                output.storeBytes(of: word, toByteOffset: written, as: UInt64.self)
                let look = PlainWord.look(UInt64(littleEndian: word), attribute: attribute)
                if look == 0 {
                    index += 8
                    written += 8
                    continue
                }
                let plain = look.trailingZeroBitCount >> 3
                index += plain
                written += plain
                handle()
            }
            while index < end {
                let byte = buffer[index]
                if byte < 0x80, table[Int(byte)] == 0 {
                    output.storeBytes(of: byte, toByteOffset: written, as: UInt8.self)
                    index += 1
                    written += 1
                } else {
                    handle()
                }
            }
            return (index, written)
        }
    }

    /// The references, their UTF-8 bytes packed little-endian (first byte lowest).
    enum Packed {
        static let amp: UInt64 = 0x3B_70_6D_61_26            // &amp;
        static let lt: UInt64 = 0x3B_74_6C_26                // &lt;
        static let gt: UInt64 = 0x3B_74_67_26                // &gt;
        static let quot: UInt64 = 0x3B_74_6F_75_71_26        // &quot;
        static let tab: UInt64 = 0x3B_39_23_26               // &#9;
        static let lineFeed: UInt64 = 0x3B_30_31_23_26       // &#10;
        static let carriageReturn: UInt64 = 0x3B_33_31_23_26 // &#13;
        static let carriageReturnLineFeed: UInt64 = 0x0A_3B_33_31_23_26 // &#13; and LF, in text
        static let replacement: UInt64 = 0xBD_BF_EF          // U+FFFD
    }
}

/// Eight bytes tested at once for the bytes the escaper must look at: any byte of 0x80 or
/// above (UTF-8 to validate), below 0x20 (control characters; tab and LF are then let
/// through byte by byte), `&`, `<`, `>`, and in attributes `"`. Each test is the classic
/// "has a zero byte" bit trick, exact for whether some byte matches.
enum PlainWord {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte that needs a look, and possibly of bytes above one that
    /// does (a borrow only runs towards the more significant bytes): zero when the word is
    /// plain, and the lowest bit set always marks a byte that needs a look. Loaded as a
    /// little-endian number, that is the first such byte in memory.
    @inline(__always)
    static func look(_ word: UInt64, attribute: Bool) -> UInt64 {
        var look = word & highBits
        look |= (word &- ones &* 0x20) & ~word & highBits          // a byte below 0x20
        look |= hasZeroByte(word ^ (ones &* 0x26))                   // &
        look |= hasZeroByte((word | (ones &* 0x02)) ^ (ones &* 0x3E)) // < (0x3C) or > (0x3E)
        if attribute { look |= hasZeroByte(word ^ (ones &* 0x22)) }  // "
        return look
    }

    /// Nonzero when some byte of `word` is zero.
    @inline(__always)
    private static func hasZeroByte(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & highBits
    }
}

/// The length of the well-formed UTF-8 sequence of an XML character starting at `index`
/// (2 to 4), or 0 when the bytes there are not one (bad lead or continuation bytes,
/// overlong forms, surrogates, beyond U+10FFFF, truncated, or U+FFFE/U+FFFF).
@inline(__always)
private func validUTF8SequenceLength(_ buffer: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
    let lead = buffer[index]
    let length: Int
    var secondRange: ClosedRange<UInt8> = 0x80...0xBF
    switch lead {
    case 0xC2...0xDF: length = 2
    case 0xE0: length = 3; secondRange = 0xA0...0xBF
    case 0xED: length = 3; secondRange = 0x80...0x9F
    case 0xE1...0xEC, 0xEE...0xEF: length = 3
    case 0xF0: length = 4; secondRange = 0x90...0xBF
    case 0xF1...0xF3: length = 4
    case 0xF4: length = 4; secondRange = 0x80...0x8F
    default: return 0
    }
    guard index + length <= buffer.count, secondRange.contains(buffer[index + 1]) else { return 0 }
    for offset in 2..<length where !(0x80...0xBF).contains(buffer[index + offset]) { return 0 }
    if lead == 0xEF, buffer[index + 1] == 0xBF, buffer[index + 2] >= 0xBE { return 0 }
    return length
}

/// Per byte value: 0 when it is copied as it is, 1 when it needs a look (markup, control
/// characters, CR, and bytes of multi-byte UTF-8 sequences, which are validated).
private func escapeTable(attribute: Bool) -> [UInt8] {
    (0...255).map { (byte: Int) -> UInt8 in
        switch byte {
        case 0x26, 0x3C, 0x3E, 0x0D, 0x80...: return 1
        case 0x22, 0x09, 0x0A: return attribute ? 1 : 0
        case 0x00..<0x20: return 1
        default: return 0
        }
    }
}

private let textEscapes = escapeTable(attribute: false)
private let attributeEscapes = escapeTable(attribute: true)
