import RoloStore

/// A group of properties sharing a status inside a `DAV:response`.
struct Propstat: Sendable {
    var status: Int
    /// Property names with their inner XML; nil writes an empty element (propname, 404s).
    var properties: [(name: PropertyName, value: String?)]
    var error: DAVError?

    init(status: Int, properties: [(name: PropertyName, value: String?)], error: DAVError? = nil) {
        self.status = status; self.properties = properties; self.error = error
    }
}

/// Writes a `DAV:multistatus` body response by response.
struct Multistatus {
    private var xml = ResponseXMLWriter(reservingCapacity: 4096)

    init() {
        xml.raw("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:multistatus \(Namespace.rootDeclarations)>")
    }

    private init(fragment: Void) {}

    /// Responses without the document around them (nested inside expand-property values).
    static func fragment() -> Multistatus { Multistatus(fragment: ()) }

    var fragmentText: String { xml.text }

    /// A response with property results.
    mutating func add(href: String, propstats: [Propstat]) {
        xml.raw("<D:response><D:href>"); xml.text(href); xml.raw("</D:href>")
        Multistatus.write(propstats, into: &xml)
        xml.raw("</D:response>")
    }

    /// `DAV:propstat` elements (also the body of an extended MKCOL's `mkcol-response`).
    static func write(_ propstats: [Propstat], into xml: inout ResponseXMLWriter) {
        for propstat in propstats {
            xml.raw("<D:propstat><D:prop>")
            for (name, value) in propstat.properties {
                if let value, !value.isEmpty {
                    xml.open(name); xml.raw(value); xml.close(name)
                } else {
                    xml.empty(name)
                }
            }
            xml.raw("</D:prop><D:status>\(HTTPStatus.line(propstat.status))</D:status>")
            if let error = propstat.error, let condition = error.condition {
                xml.raw("<D:error>"); error.writeCondition(into: &xml, condition: condition); xml.raw("</D:error>")
            }
            xml.raw("</D:propstat>")
        }
    }

    /// A response with a status only (404 in multiget and sync, 507 on truncation...).
    mutating func add(href: String, status: Int, error: DAVError? = nil) {
        xml.raw("<D:response><D:href>"); xml.text(href)
        xml.raw("</D:href><D:status>\(HTTPStatus.line(status))</D:status>")
        if let error, let condition = error.condition {
            xml.raw("<D:error>"); error.writeCondition(into: &xml, condition: condition); xml.raw("</D:error>")
        }
        xml.raw("</D:response>")
    }

    /// The finished document; a `DAV:sync-token` is appended for sync-collection.
    consuming func finish(syncToken: String? = nil) -> String {
        if let syncToken { xml.raw("<D:sync-token>"); xml.text(syncToken); xml.raw("</D:sync-token>") }
        xml.raw("</D:multistatus>\n")
        return xml.text
    }
}
