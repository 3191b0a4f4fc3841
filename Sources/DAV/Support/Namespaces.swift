import DAVXML
import RoloStore

/// XML namespaces the engine speaks. The writer (`XMLWriter`) picks their prefixes.
enum Namespace {
    static let dav = XMLNamespace.dav
    static let cardDAV = XMLNamespace.carddav
    static let calendarServer = XMLNamespace.calendarServer
    /// Rolo's own elements, e.g. the human-readable `message` inside `DAV:error`.
    static let rolo = "urn:x-rolo:ns"
}

extension PropertyName {
    static func dav(_ name: String) -> PropertyName { PropertyName(namespace: Namespace.dav, name: name) }
    static func cardDAV(_ name: String) -> PropertyName { PropertyName(namespace: Namespace.cardDAV, name: name) }
    static func calendarServer(_ name: String) -> PropertyName { PropertyName(namespace: Namespace.calendarServer, name: name) }
}
