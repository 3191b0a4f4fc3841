import RoloStore

/// XML namespaces the engine speaks, and the prefixes it writes them with.
enum Namespace {
    static let dav = "DAV:"
    static let cardDAV = "urn:ietf:params:xml:ns:carddav"
    static let calendarServer = "http://calendarserver.org/ns/"
    /// Rolo's own elements, e.g. the human-readable `message` inside `DAV:error`.
    static let rolo = "urn:x-rolo:ns"

    /// Prefix declared on every multistatus/error root for a known namespace.
    static func prefix(for namespace: String) -> String? {
        switch namespace {
        case dav: return "D"
        case cardDAV: return "C"
        case calendarServer: return "CS"
        case rolo: return "R"
        default: return nil
        }
    }

    /// The namespace declarations matching `prefix(for:)`.
    static let rootDeclarations =
        #"xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav" xmlns:CS="http://calendarserver.org/ns/" xmlns:R="urn:x-rolo:ns""#
}

extension PropertyName {
    static func dav(_ name: String) -> PropertyName { PropertyName(namespace: Namespace.dav, name: name) }
    static func cardDAV(_ name: String) -> PropertyName { PropertyName(namespace: Namespace.cardDAV, name: name) }
    static func calendarServer(_ name: String) -> PropertyName { PropertyName(namespace: Namespace.calendarServer, name: name) }
}
