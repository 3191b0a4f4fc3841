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
        /// nil for an unnamespaced element.
        var prefix: String?
        var name: String
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
        appendQualified(prefix, name)
        for attribute in attributes {
            bytes.append(0x20)
            appendQualified(resolvePrefix(attribute.namespace, declarations: &declarations), attribute.name)
            bytes += "=\"".utf8
            appendEscaped(attribute.value, attribute: true)
            bytes.append(0x22)
        }
        for declaration in declarations {
            bytes += " xmlns:".utf8
            bytes += declaration.prefix.utf8
            bytes += "=\"".utf8
            appendEscaped(declaration.uri, attribute: true)
            bytes.append(0x22)
        }
        startTagOpen = true
        open.append(Scope(prefix: prefix, name: name, declared: declarations))
    }

    /// Closes the innermost open element (as `<x/>` when it has no content).
    public mutating func end() {
        guard let scope = open.popLast() else { preconditionFailure("XMLWriter.end() without start()") }
        if startTagOpen {
            bytes += "/>".utf8
            startTagOpen = false
        } else {
            bytes += "</".utf8
            appendQualified(scope.prefix, scope.name)
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

    /// The prefix bound to `namespace` here, binding a new one (added to `declarations`)
    /// when there is none; nil for no namespace (no default namespace is ever declared).
    private mutating func resolvePrefix(_ namespace: String, declarations: inout [(uri: String, prefix: String)]) -> String? {
        if namespace.isEmpty { return nil }
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
            bytes += prefix.utf8
            bytes.append(0x3A)
        }
        bytes += name.utf8
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

    private mutating func closeStartTag() {
        if startTagOpen {
            bytes.append(0x3E)
            startTagOpen = false
        }
    }

    /// Escapes `&`, `<`, `>` (and in attributes `"`, tab, CR, LF as character references);
    /// control characters XML 1.0 cannot carry become U+FFFD so output stays well-formed.
    /// Runs of plain bytes are copied in one go.
    private mutating func appendEscaped(_ string: String, attribute: Bool) {
        var string = string
        string.withUTF8 { buffer in
            var runStart = 0
            for index in 0..<buffer.count {
                let byte = buffer[index]
                guard needsEscape(byte, attribute: attribute) else { continue }
                if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[runStart..<index])) }
                runStart = index + 1
                switch byte {
                case 0x26: bytes += "&amp;".utf8
                case 0x3C: bytes += "&lt;".utf8
                case 0x3E: bytes += "&gt;".utf8
                case 0x22: bytes += "&quot;".utf8
                case 0x09: bytes += "&#9;".utf8
                case 0x0A: bytes += "&#10;".utf8
                case 0x0D: bytes += "&#13;".utf8
                default: bytes += [0xEF, 0xBF, 0xBD]
                }
            }
            if runStart < buffer.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[runStart...])) }
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
