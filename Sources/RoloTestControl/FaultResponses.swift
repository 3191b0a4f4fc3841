import RoloServer
import DAVXML
import Foundation
import HTTPTypes
import Hummingbird

/// The answers fault rules put in place of (or around) the normal ones.
enum FaultResponses {
    /// `status` fault: the configured status, body, Content-Type and headers.
    static func status(_ spec: FaultRuleSpec) -> Response {
        let code = spec.status ?? 500
        var headers = HTTPFields()
        let body = spec.body ?? ""
        if !body.isEmpty { headers[.contentType] = spec.contentType ?? "text/plain; charset=utf-8" }
        for (name, value) in (spec.headers ?? [:]).sorted(by: { $0.key < $1.key }) {
            if let fieldName = HTTPField.Name(name) { headers.append(HTTPField(name: fieldName, value: value)) }
        }
        return Response(status: HTTPResponse.Status(code: code, reasonPhrase: ServerAnswers.reasonPhrase(code)),
                        headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    /// What the DAV engine answers a PUT whose `If-Match` no longer holds: a plain 412
    /// (RFC 4918 names no precondition element for it; sabre/dav's `DAV:error` body carries only
    /// its own exception and message elements).
    static func preconditionFailed() -> Response {
        ServerAnswers.plain(.preconditionFailed, "Precondition Failed\n")
    }

    /// RFC 6578 §3.2: an expired or unknown token is refused with 403 and `DAV:valid-sync-token`,
    /// written by the same writer as the engine's own error bodies.
    static func invalidSyncToken() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/xml; charset=utf-8"
        var body = ByteBuffer(bytes: XMLWriter.errorBody(XMLNamespace.dav, "valid-sync-token"))
        body.writeString("\n")
        return Response(status: .forbidden, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    /// `drop-connection` fault: `response` with its head intact (Content-Length included)
    /// but only the first half of its body, after which the connection is closed. An empty
    /// body is sent chunked and never terminated, so the client sees a cut there too.
    static func cut(_ response: Response) -> Response {
        var response = response
        let length = response.body.contentLength ?? 0
        let original = response.body
        response.body = ResponseBody(contentLength: length > 0 ? length : nil) { writer in
            try await original.write(TruncatingWriter(parent: writer, allowance: length / 2))
        }
        return response
    }

    /// Whether a fault-rule header can be sent as is (a valid field name, no line breaks).
    static func isValidHeader(name: String, value: String) -> Bool {
        HTTPField.Name(name) != nil && !value.contains(where: { $0 == "\r" || $0 == "\n" })
    }

    /// Whether a REPORT body is a `DAV:sync-collection` carrying a non-empty `DAV:sync-token`
    /// (an initial sync sends an empty one, which a token cannot invalidate).
    static func carriesSyncToken(_ body: ByteBuffer) -> Bool {
        guard let root = try? XMLDocumentParser.parse(Array(body.readableBytesView)),
              root.namespace == XMLNamespace.dav, root.name == "sync-collection",
              let token = root.child(XMLNamespace.dav, "sync-token") else { return false }
        return !token.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
    }
}

/// Raised inside a response body to make the server close the connection mid-response.
struct ConnectionDroppedOnPurpose: Error {}

/// Passes on at most `allowance` body bytes, then throws so the connection is closed
/// before the body is complete.
private struct TruncatingWriter: ResponseBodyWriter {
    var parent: any ResponseBodyWriter
    var allowance: Int

    mutating func write(_ buffer: ByteBuffer) async throws {
        let take = min(allowance, buffer.readableBytes)
        if take > 0, let part = buffer.getSlice(at: buffer.readerIndex, length: take) {
            try await parent.write(part)
            allowance -= take
        }
        if allowance == 0 { throw ConnectionDroppedOnPurpose() }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        throw ConnectionDroppedOnPurpose()
    }
}
