import RoloStore

/// Builds response XML as text with fixed prefixes (D, C, CS, R) declared once on the root:
/// the engine's answers are small and regular, and writing
/// them by hand with correct escaping is simple and fast (stack notes).
struct ResponseXMLWriter {
    private(set) var text = ""

    init(reservingCapacity capacity: Int = 1024) {
        text.reserveCapacity(capacity)
    }

    mutating func raw(_ string: String) { text += string }

    mutating func text(_ string: String) { text += ResponseXMLWriter.escape(string) }

    /// `<D:name>` for known namespaces, `<x:name xmlns:x="…">` otherwise.
    mutating func open(_ name: PropertyName) { text += ResponseXMLWriter.openTag(name) }
    mutating func close(_ name: PropertyName) { text += ResponseXMLWriter.closeTag(name) }
    mutating func empty(_ name: PropertyName) { text += ResponseXMLWriter.emptyTag(name) }

    mutating func element(_ name: PropertyName, text value: String) {
        open(name); text(value); close(name)
    }

    mutating func element(_ name: PropertyName, _ body: (inout ResponseXMLWriter) -> Void) {
        open(name); body(&self); close(name)
    }

    static func qualifiedName(_ name: PropertyName) -> (tag: String, declaration: String) {
        if let prefix = Namespace.prefix(for: name.namespace) { return ("\(prefix):\(name.name)", "") }
        if name.namespace.isEmpty { return (name.name, " xmlns=\"\"") }
        return ("x:\(name.name)", " xmlns:x=\"\(escape(name.namespace))\"")
    }

    static func openTag(_ name: PropertyName) -> String {
        let q = qualifiedName(name)
        return "<\(q.tag)\(q.declaration)>"
    }

    static func closeTag(_ name: PropertyName) -> String { "</\(qualifiedName(name).tag)>" }

    static func emptyTag(_ name: PropertyName) -> String {
        let q = qualifiedName(name)
        return "<\(q.tag)\(q.declaration)/>"
    }

    /// Escapes text and attribute values; CR becomes `&#13;` so CRLF survives parsing.
    static func escape(_ string: String) -> String {
        var needs = false
        for byte in string.utf8 where byte == 0x26 || byte == 0x3C || byte == 0x3E || byte == 0x22 || byte == 0x0D {
            needs = true; break
        }
        guard needs else { return string }
        var out = ""
        out.reserveCapacity(string.utf8.count + 16)
        for scalar in string.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\r": out += "&#13;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
