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
        // The head is gathered in one array and written with one call: each `ByteBuffer`
        // write checks capacity and uniqueness, and a card's head in 26 of them cost a GET
        // about 1,200 more of its 105,000 instructions (a `String` cost 3,300 more).
        var head: [UInt8] = []
        head.reserveCapacity(256)
        if status == .ok {
            head += "HTTP/1.1 200 OK\r\n".utf8
        } else {
            head += "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n".utf8
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
            head += name.utf8
            head += ": ".utf8
            head += value.utf8
            head += "\r\n".utf8
        }
        guard plain else { return false }
        head += "Date: ".utf8
        head += date.utf8
        head += "\r\nServer: ".utf8
        head += server.utf8
        head += "\r\n\r\n".utf8
        buffer.writeBytes(head)
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
