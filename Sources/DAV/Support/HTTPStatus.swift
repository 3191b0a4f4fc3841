import DAVXML

/// Status lines for multistatus bodies. The reason phrases live in one place,
/// `XMLWriter.reasonPhrase`, shared with the XML writer.
enum HTTPStatus {
    static func reason(_ code: Int) -> String { XMLWriter.reasonPhrase(code) }

    /// `HTTP/1.1 404 Not Found`, as `DAV:status` wants it.
    static func line(_ code: Int) -> String { XMLWriter.statusLine(code) }
}
