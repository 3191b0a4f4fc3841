import DAV
import HTTPTypes
import NIOCore
import NIOHTTP1

extension RoloResponder {
    /// A whole answer of the engine written as bytes, exactly as the full path puts it on the
    /// wire: `responseHead(from:)` with `Date` and `Server` set after its fields (as
    /// `HTTPService` sets them), through NIO's HTTP/1 encoder, which writes its own reason
    /// phrase for the codes it knows and drops `Content-Length` from answers that carry no
    /// body (1xx, 204, 304); then the body, but not for HEAD. `InlineGetHandler` answers with
    /// this in one buffer, so one write.
    ///
    /// False when it cannot promise the same bytes: a streamed body, or a field that
    /// HTTPTypes would drop (a name that is no token) or change (a value it would legalize).
    /// The caller then leaves the request to the full path. `buffer` may hold part of an
    /// answer then.
    static func writeWholeAnswer(_ dav: DAVResponse, forHead isHead: Bool, date: String, server: String,
                                 into buffer: inout ByteBuffer) -> Bool {
        guard dav.streamedBody == nil, HTTPField.isValidValue(date), HTTPField.isValidValue(server) else { return false }
        let status = HTTPResponseStatus(statusCode: dav.status, reasonPhrase: reasonPhrase(dav.status))
        if status == .ok {
            buffer.writeStaticString("HTTP/1.1 200 OK\r\n")
        } else {
            buffer.writeStaticString("HTTP/1.1 ")
            buffer.writeString(String(status.code))
            buffer.writeStaticString(" ")
            buffer.writeString(status.reasonPhrase)
            buffer.writeStaticString("\r\n")
        }
        let mayHaveBody = status.mayHaveResponseBody
        var plain = true
        forEachField(of: dav) { name, value in
            guard plain else { return }
            guard isPlainName(name), HTTPField.isValidValue(value) else {
                plain = false
                return
            }
            if !mayHaveBody, isFraming(name) { return }
            buffer.writeString(name)
            buffer.writeStaticString(": ")
            buffer.writeString(value)
            buffer.writeStaticString("\r\n")
        }
        guard plain else { return false }
        buffer.writeStaticString("Date: ")
        buffer.writeString(date)
        buffer.writeStaticString("\r\nServer: ")
        buffer.writeString(server)
        buffer.writeStaticString("\r\n\r\n")
        if !isHead { buffer.writeBytes(dav.body) }
        return true
    }

    /// A name `HTTPField.Name` takes as it is; the engine's usual ones without building one.
    private static func isPlainName(_ name: String) -> Bool {
        switch name {
        case "ETag", "Last-Modified", "Content-Type", "Content-Length", "Vary": true
        default: HTTPField.Name(name) != nil
        }
    }

    private static func isFraming(_ name: String) -> Bool {
        let lowercased = name.lowercased()
        return lowercased == "content-length" || lowercased == "transfer-encoding"
    }
}
