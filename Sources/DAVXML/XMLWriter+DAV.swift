/// WebDAV response shapes (RFC 4918 §14): `multistatus`, `response`, `propstat`, `status`,
/// and `DAV:error` precondition bodies.
extension XMLWriter {
    /// A whole `<d:multistatus>` document; `body` writes its responses (and `sync-token`).
    /// `capacity` is a size hint in bytes (e.g. the sum of the card sizes) that spares regrowing.
    public static func multistatus<E: Error>(reservingCapacity capacity: Int = 4096,
                                             _ body: (inout XMLWriter) throws(E) -> Void) throws(E) -> [UInt8] {
        var writer = XMLWriter(reservingCapacity: capacity)
        try writer.element(XMLNamespace.dav, "multistatus", body)
        return writer.bytes
    }

    /// `<d:response><d:href>…</d:href>…</d:response>`; `body` writes propstats.
    public mutating func response<E: Error>(href: String, _ body: (inout XMLWriter) throws(E) -> Void) throws(E) {
        try element(XMLNamespace.dav, "response") { (writer: inout XMLWriter) throws(E) in
            writer.element(XMLNamespace.dav, "href", text: href)
            try body(&writer)
        }
    }

    /// `<d:response><d:href>…</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>`.
    public mutating func response(href: String, status: Int) {
        start(XMLNamespace.dav, "response")
        element(XMLNamespace.dav, "href", text: href)
        self.status(status)
        end()
    }

    /// `<d:propstat><d:prop>…</d:prop><d:status>…</d:status></d:propstat>`; `props` writes
    /// the property elements.
    public mutating func propstat<E: Error>(status: Int, _ props: (inout XMLWriter) throws(E) -> Void) throws(E) {
        start(XMLNamespace.dav, "propstat")
        try element(XMLNamespace.dav, "prop", props)
        self.status(status)
        end()
    }

    /// A propstat listing properties by name only (404 or 403 lists, PROPPATCH results).
    public mutating func propstat(status: Int, names: [(namespace: String, name: String)]) {
        propstat(status: status) { writer in
            for name in names { writer.empty(name.namespace, name.name) }
        }
    }

    /// `<d:status>HTTP/1.1 200 OK</d:status>`.
    public mutating func status(_ code: Int) {
        element(XMLNamespace.dav, "status", text: XMLWriter.statusLine(code))
    }

    /// A dead property: `<prefix:name>` + the stored inner XML verbatim + `</prefix:name>`.
    public mutating func deadProperty(_ namespace: String, _ name: String, innerXML: String) {
        start(namespace, name)
        if !innerXML.isEmpty { raw(innerXML) }
        end()
    }

    /// A `<d:error>` body naming the failed precondition or postcondition (RFC 4918 §16),
    /// e.g. `{urn:ietf:params:xml:ns:carddav}no-uid-conflict` with the `href` of the
    /// resource already holding the UID.
    public static func errorBody(_ namespace: String, _ condition: String, href: String? = nil) -> [UInt8] {
        var writer = XMLWriter(reservingCapacity: 256)
        writer.element(XMLNamespace.dav, "error") { writer in
            if let href {
                writer.element(namespace, condition) { $0.element(XMLNamespace.dav, "href", text: href) }
            } else {
                writer.empty(namespace, condition)
            }
        }
        return writer.bytes
    }

    /// `HTTP/1.1 <code> <reason>` as used in `d:status`.
    public static func statusLine(_ code: Int) -> String {
        switch code {
        case 200: "HTTP/1.1 200 OK"
        case 404: "HTTP/1.1 404 Not Found"
        default: "HTTP/1.1 \(code) \(reasonPhrase(code))"
        }
    }

    public static func reasonPhrase(_ code: Int) -> String {
        switch code {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 207: "Multi-Status"
        case 301: "Moved Permanently"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 412: "Precondition Failed"
        case 413: "Payload Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 423: "Locked"
        case 424: "Failed Dependency"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 507: "Insufficient Storage"
        default: "Status \(code)"
        }
    }
}
