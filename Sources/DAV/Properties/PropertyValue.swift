import DAVXML
import Foundation
import RoloStore

/// The content of a property element, kept as data until the response is written: values
/// go straight into the response's `XMLWriter` bytes (a card is escaped from its stored
/// bytes in one pass), and expand-property can see which values are hrefs.
enum PropertyValue: Sendable {
    /// Character data, escaped when written (ETags, names, numbers, dates).
    case text(String)
    /// UTF-8 bytes written as character data without a String in between (address-data).
    case utf8(Data)
    /// `<d:href>…</d:href>`
    case href(String)
    /// Empty elements in a row, e.g. `<d:collection/><card:addressbook/>`.
    case emptyElements([PropertyName])
    /// Stored, self-contained inner XML (dead properties, lock owners), written verbatim.
    case innerXML(String)
    /// A dead property's stored inner XML, written verbatim, under the `xml:lang` it was set
    /// with (an attribute of the property element, so `property(_:_:)` writes it).
    case dead(xml: String, language: String?)
    /// Anything with more structure, written by the closure.
    case xml(@Sendable (inout XMLWriter) -> Void)

    /// Writes the value as the content of the current element.
    func write(into writer: inout XMLWriter) {
        switch self {
        case .text(let text): if !text.isEmpty { writer.text(text) }
        case .utf8(let bytes): if !bytes.isEmpty { writer.text(utf8: bytes) }
        case .href(let href): writer.element(Namespace.dav, "href", text: href)
        case .emptyElements(let names): for name in names { writer.empty(name) }
        case .innerXML(let xml), .dead(let xml, _): if !xml.isEmpty { writer.raw(xml) }
        case .xml(let body): body(&writer)
        }
    }
}

extension XMLWriter {
    /// `<prefix:name>` for a property name.
    mutating func start(_ name: PropertyName) { start(name.namespace, name.name) }

    /// `<prefix:name/>` for a property name.
    mutating func empty(_ name: PropertyName) { empty(name.namespace, name.name) }

    /// A property element with its value (`<name/>` when there is none).
    mutating func property(_ name: PropertyName, _ value: PropertyValue?) {
        if case .dead(_, let language?) = value {
            start(name.namespace, name.name, attributes: [XMLAttribute(namespace: XMLNamespace.xml, name: "lang", value: language)])
        } else {
            start(name)
        }
        value?.write(into: &self)
        end()
    }
}
