import DAVXML

/// Serialises parsed elements back to XML text for dead property values: every element
/// declares its own namespace, so the fragment stands alone wherever it is written.
enum XMLSerialization {
    /// The element's content (text, then child elements) as an XML fragment.
    static func innerXML(of element: XMLElement) -> String {
        var out = XMLWriter.escape(element.text)
        for child in element.children { out += xml(of: child) }
        return out
    }

    static func xml(of element: XMLElement) -> String {
        var out = "<\(element.name) xmlns=\"\(XMLWriter.escape(element.namespace))\""
        var prefixes = 0
        for attribute in element.attributes {
            if attribute.namespace.isEmpty {
                out += " \(attribute.name)=\"\(XMLWriter.escape(attribute.value))\""
            } else {
                prefixes += 1
                out += " xmlns:a\(prefixes)=\"\(XMLWriter.escape(attribute.namespace))\" a\(prefixes):\(attribute.name)=\"\(XMLWriter.escape(attribute.value))\""
            }
        }
        let inner = innerXML(of: element)
        if inner.isEmpty { return out + "/>" }
        return out + ">" + inner + "</\(element.name)>"
    }
}
