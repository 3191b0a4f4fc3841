/// Well-known namespace URIs and the prefixes Rolo writes them with.
public enum XMLNamespace {
    public static let dav = "DAV:"
    public static let carddav = "urn:ietf:params:xml:ns:carddav"
    public static let calendarServer = "http://calendarserver.org/ns/"

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
        var qualifiedName: [UInt8]
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

    /// The document as text.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// True once every started element has been ended.
    public var isComplete: Bool { open.isEmpty && !bytes.isEmpty }

    // MARK: Elements

    /// Opens `<prefix:name …>`; close it with `end()`.
    public mutating func start(_ namespace: String, _ name: String, attributes: [XMLAttribute] = []) {
        closeStartTag()
        var declarations: [(uri: String, prefix: String)] = []
        if open.isEmpty {
            declarations = rootPrefixes.map { ($0.uri, $0.prefix) }
        }
        func qualify(_ namespace: String, _ name: String) -> [UInt8] {
            // Unnamespaced elements are written without prefix: no default namespace is ever declared.
            if namespace.isEmpty { return Array(name.utf8) }
            let prefix = self.prefix(for: namespace, pending: declarations) ?? {
                let fresh = unboundPreferredPrefix(for: namespace, pending: declarations) ?? {
                    generatedPrefixes += 1
                    return "x\(generatedPrefixes - 1)"
                }()
                declarations.append((namespace, fresh))
                return fresh
            }()
            return Array(prefix.utf8) + [0x3A] + Array(name.utf8)
        }
        let qualified = qualify(namespace, name)
        let qualifiedAttributes = attributes.map { (qualify($0.namespace, $0.name), $0.value) }

        bytes.append(0x3C) // <
        bytes += qualified
        for declaration in declarations {
            bytes += " xmlns:".utf8
            bytes += declaration.prefix.utf8
            bytes += "=\"".utf8
            appendEscaped(declaration.uri, attribute: true)
            bytes.append(0x22)
        }
        for (name, value) in qualifiedAttributes {
            bytes.append(0x20)
            bytes += name
            bytes += "=\"".utf8
            appendEscaped(value, attribute: true)
            bytes.append(0x22)
        }
        startTagOpen = true
        open.append(Scope(qualifiedName: qualified, declared: declarations))
    }

    /// Closes the innermost open element (as `<x/>` when it has no content).
    public mutating func end() {
        guard let scope = open.popLast() else { preconditionFailure("XMLWriter.end() without start()") }
        if startTagOpen {
            bytes += "/>".utf8
            startTagOpen = false
        } else {
            bytes += "</".utf8
            bytes += scope.qualifiedName
            bytes.append(0x3E)
        }
    }

    /// Writes escaped character data inside the current element.
    public mutating func text(_ text: String) {
        closeStartTag()
        appendEscaped(text, attribute: false)
    }

    /// Writes an already serialised, well-formed fragment verbatim (a stored dead
    /// property value). The fragment must declare the namespaces it uses.
    public mutating func raw(_ xml: String) {
        closeStartTag()
        bytes += xml.utf8
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

    private mutating func closeStartTag() {
        if startTagOpen {
            bytes.append(0x3E)
            startTagOpen = false
        }
    }

    /// Escapes `&`, `<`, `>` (and in attributes `"`, tab, CR, LF as character references);
    /// control characters XML 1.0 cannot carry become U+FFFD so output stays well-formed.
    private mutating func appendEscaped(_ string: String, attribute: Bool) {
        let utf8 = string.utf8
        let needsEscaping = utf8.withContiguousStorageIfAvailable { buffer in
            buffer.contains { needsEscape($0, attribute: attribute) }
        } ?? utf8.contains { needsEscape($0, attribute: attribute) }
        if !needsEscaping {
            bytes += utf8
            return
        }
        for byte in utf8 {
            switch byte {
            case 0x26: bytes += "&amp;".utf8
            case 0x3C: bytes += "&lt;".utf8
            case 0x3E: bytes += "&gt;".utf8
            case 0x22 where attribute: bytes += "&quot;".utf8
            case 0x09 where attribute: bytes += "&#9;".utf8
            case 0x0A where attribute: bytes += "&#10;".utf8
            case 0x0D: bytes += "&#13;".utf8
            case 0x09, 0x0A: bytes.append(byte)
            case 0x00..<0x20: bytes += [0xEF, 0xBF, 0xBD]
            default: bytes.append(byte)
            }
        }
    }
}

@inline(__always)
private func needsEscape(_ byte: UInt8, attribute: Bool) -> Bool {
    switch byte {
    case 0x26, 0x3C, 0x3E, 0x0D: return true
    case 0x22, 0x09, 0x0A: return attribute
    case 0x00..<0x20: return true
    default: return false
    }
}
