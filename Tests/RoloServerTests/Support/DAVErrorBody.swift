import DAVXML
import Foundation

extension CurlResult {
    /// The conditions a `DAV:error` body names, in Clark notation (`{DAV:}need-privileges`);
    /// empty for any other body.
    var errorConditions: [String] {
        guard let root = try? XMLDocumentParser.parse([UInt8](body)), root.clarkName == "{DAV:}error" else { return [] }
        return root.children.filter { $0.namespace != "urn:x-rolo:ns" }.map(\.clarkName)
    }

    /// Rolo's human-readable reason inside a `DAV:error` body.
    var errorMessage: String {
        (try? XMLDocumentParser.parse([UInt8](body)))?.child("urn:x-rolo:ns", "message")?.text ?? ""
    }

    /// The body parsed as XML (multistatus and error bodies).
    func xml() throws -> XMLElement {
        try XMLDocumentParser.parse([UInt8](body))
    }
}

extension XMLElement {
    /// The `DAV:response` elements of a multistatus by their `DAV:href`.
    var responsesByHref: [String: XMLElement] {
        var responses: [String: XMLElement] = [:]
        for response in children("DAV:", "response") {
            if let href = response.child("DAV:", "href")?.text { responses[href] = response }
        }
        return responses
    }

    /// The value of a property in a response's 200 propstat.
    func property(_ namespace: String, _ name: String) -> XMLElement? {
        children("DAV:", "propstat").first { $0.child("DAV:", "status")?.text.contains(" 200 ") == true }?
            .child("DAV:", "prop")?.child(namespace, name)
    }
}
