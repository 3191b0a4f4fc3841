import CLibXML2

/// Parses DAV request bodies with libxml2 (SAX2, in C) into `XMLElement` trees.
///
/// Safe by construction: a DOCTYPE is refused as soon as it is seen (so no entity can be
/// declared, hence no XXE and no billion laughs), entity references are never expanded,
/// the network is never touched, and nesting depth and element count are capped.
public enum XMLDocumentParser {
    /// Caps that keep a hostile body from costing much memory or time.
    public struct Limits: Sendable, Hashable {
        public var maxDepth: Int
        public var maxElements: Int
        public init(maxDepth: Int = 64, maxElements: Int = 100_000) {
            self.maxDepth = maxDepth; self.maxElements = maxElements
        }
        public static let `default` = Limits()
    }

    /// Parses a whole request body into its root element with libxml2: namespaces
    /// honoured, DOCTYPE refused, no entity expansion, no network.
    public static func parse(_ bytes: [UInt8]) throws(XMLParseError) -> XMLElement {
        try parse(bytes, limits: .default)
    }

    public static func parse(_ string: String) throws(XMLParseError) -> XMLElement {
        try parse(Array(string.utf8), limits: .default)
    }

    public static func parse(_ bytes: [UInt8], limits: Limits) throws(XMLParseError) -> XMLElement {
        var result = rolo_xml_result()
        defer { rolo_xml_result_free(&result) }
        let status = bytes.withUnsafeBufferPointer { buffer in
            rolo_xml_parse(buffer.baseAddress, buffer.count, Int32(clamping: limits.maxDepth),
                           Int32(clamping: limits.maxElements), &result)
        }
        guard UInt32(bitPattern: status) == ROLO_XML_OK.rawValue else {
            var error = error(from: result)
            error.isDoctype = UInt32(bitPattern: status) == ROLO_XML_DOCTYPE.rawValue
            throw error
        }
        guard let root = buildTree(result) else { throw XMLParseError("document has no root element", line: 1) }
        return root
    }

    private static func error(from result: rolo_xml_result) -> XMLParseError {
        let message = withUnsafeBytes(of: result.error_message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let line = result.error_line > 0 ? Int(result.error_line) : nil
        return XMLParseError(message.isEmpty ? "malformed XML" : message, line: line)
    }

    /// Turns the flat event list into a tree. Whitespace-only text in an element that has
    /// child elements is formatting and dropped; in a leaf it is the value and kept.
    private static func buildTree(_ result: rolo_xml_result) -> XMLElement? {
        guard result.count > 0, let events = result.events, let arena = result.arena else { return nil }
        let bytes = UnsafeBufferPointer(start: arena, count: result.arena_length)
        var namespaces: [UInt32: String] = [:]
        func string(_ span: rolo_xml_span) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(span.offset)..<Int(span.offset + span.length)]),
                   as: UTF8.self)
        }
        func namespace(_ span: rolo_xml_span) -> String {
            if span.length == 0 { return "" }
            if let known = namespaces[span.offset] { return known }
            let value = string(span)
            namespaces[span.offset] = value
            return value
        }

        var stack: [XMLElement] = []
        stack.reserveCapacity(16)
        var root: XMLElement?
        for index in 0..<result.count {
            let event = events[index]
            switch UInt32(bitPattern: event.kind) {
            case ROLO_XML_START.rawValue:
                stack.append(XMLElement(namespace: namespace(event.ns), name: string(event.name)))
            case ROLO_XML_ATTRIBUTE.rawValue:
                stack[stack.count - 1].attributes.append(
                    XMLAttribute(namespace: namespace(event.ns), name: string(event.name), value: string(event.value)))
            case ROLO_XML_TEXT.rawValue:
                if !stack.isEmpty { stack[stack.count - 1].text += string(event.value) }
            case ROLO_XML_END.rawValue:
                var element = stack.removeLast()
                if !element.children.isEmpty && element.text.utf8.allSatisfy(isXMLWhitespace) {
                    element.text = ""
                }
                if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
            default:
                continue
            }
        }
        return root
    }
}

@inline(__always)
func isXMLWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
}
