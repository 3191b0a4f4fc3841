/// A parsed XML element with resolved namespaces: what DAV request bodies become.
/// A small immutable tree (request bodies are small and capped), so the protocol layer
/// can match on `{namespace}name` without touching libxml2.
public struct XMLElement: Sendable, Hashable {
    public var namespace: String
    public var name: String
    /// Attributes by (namespace, local name); unprefixed attributes have namespace "".
    public var attributes: [XMLAttribute]
    public var children: [XMLElement]
    /// Concatenated character data directly inside this element (CDATA included),
    /// entity references never expanded.
    public var text: String

    public init(namespace: String, name: String, attributes: [XMLAttribute] = [],
                children: [XMLElement] = [], text: String = "") {
        self.namespace = namespace; self.name = name; self.attributes = attributes
        self.children = children; self.text = text
    }

    /// Clark notation: `{DAV:}prop`.
    public var clarkName: String { "{\(namespace)}\(name)" }

    public func child(_ namespace: String, _ name: String) -> XMLElement? {
        children.first { $0.namespace == namespace && $0.name == name }
    }

    public func children(_ namespace: String, _ name: String) -> [XMLElement] {
        children.filter { $0.namespace == namespace && $0.name == name }
    }

    public func attribute(_ name: String, namespace: String = "") -> String? {
        attributes.first { $0.namespace == namespace && $0.name == name }?.value
    }

    /// The `xml:lang` in scope on this element, given the one in scope on its parent: its
    /// own when it has one (`xml:lang=""` says it has none), else the parent's (XML 1.0 §2.12).
    public func language(inheriting inherited: String?) -> String? {
        guard let own = attribute("lang", namespace: XMLNamespace.xml) else { return inherited }
        return own.isEmpty ? nil : own
    }
}

public struct XMLAttribute: Sendable, Hashable {
    public var namespace: String
    public var name: String
    public var value: String
    public init(namespace: String = "", name: String, value: String) {
        self.namespace = namespace; self.name = name; self.value = value
    }
}

/// Why a request body is not acceptable XML (malformed, DOCTYPE present, too deep...).
public struct XMLParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var line: Int?
    /// The body had a DOCTYPE, which is refused before it can declare any (external) entity.
    public var isDoctype = false
    public init(_ message: String, line: Int? = nil) { self.message = message; self.line = line }
    public var description: String { line.map { "line \($0): \(message)" } ?? message }
}
