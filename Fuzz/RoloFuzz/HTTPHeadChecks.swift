import HTTPHead
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// `RawRequestHead` against NIO's HTTP/1 parser (`HTTPRequestDecoder`, the one the server's
/// codec runs) on the same bytes. `InlineGetHandler` relies on one promise: a request the
/// raw reading calls delimited ends, for NIO too, exactly `size + bodyLength` bytes after
/// its start, and reads as the same request. So the input is read as the handler reads a
/// connection, request after request until one is unreadable or not delimited, and each
/// delimited request is fed to NIO, which must give the same method, target, version and
/// fields, exactly `bodyLength` body bytes and the end, and then read a request sent after
/// the last one as a request of its own. NIO may refuse a request the raw reading accepts
/// (a method llhttp does not know): the codec's error makes the handler give up on the
/// connection, which is safe; but only before NIO has read any part of that request, and
/// only when it refuses the request alone too.
enum HTTPHeadChecks {
    static func compareWithNIO(_ bytes: [UInt8]) {
        checkResumedScans(bytes)
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        var offset = 0
        var lastEnded = true
        while offset < bytes.count {
            let rest = Array(bytes[offset...])
            guard case .head(let head) = rest.withUnsafeBytes({ RawRequestHead.scan($0) }), head.isDelimited else { break }
            let (method, target, headers) = rest.withUnsafeBytes { head.request(in: $0) }
            let length = head.size + head.bodyLength
            let whole = length <= rest.count
            let request = Array(rest.prefix(length))
            let (parts, error) = feed(channel, request)
            if let error {
                // NIO refused it: the handler gives up on the connection. Safe only when NIO
                // read nothing of this request first (it is not taken for part of another),
                // and refuses it alone too: the refusal is about its own bytes, not about
                // what NIO made of the requests before it (`Connection: close` in one of them).
                require(parts.isEmpty, "NIO read \(parts) and then refused (\(error)):\n\(describe(request))")
                let alone = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
                defer { _ = try? alone.finish(acceptAlreadyClosed: true) }
                require(feed(alone, request).1 != nil,
                        "NIO refused a request after \(offset) bytes (\(error)) that it reads alone:\n\(describe(Array(bytes[..<(offset + request.count)])))")
                return
            }
            guard case .head(let nioHead) = parts.first else {
                finding("NIO read no head where RawRequestHead read \(method) \(target) (\(parts.count) parts):\n\(describe(request))")
            }
            require(nioHead.method.rawValue == method && nioHead.uri == target && nioHead.version == .http1_1,
                    "request line: NIO \(nioHead.method.rawValue) \(nioHead.uri) \(nioHead.version), raw \(method) \(target):\n\(describe(request))")
            let nioHeaders = lowercasedJoined(nioHead.headers)
            require(nioHeaders == headers, "fields: NIO \(nioHeaders), raw \(headers):\n\(describe(request))")
            var body = 0, ended = false
            for part in parts.dropFirst() {
                require(!ended, "NIO read more after the end of the request:\n\(describe(request))")
                switch part {
                case .head: finding("NIO read a second head inside one request:\n\(describe(request))")
                case .body(let buffer): body += buffer.readableBytes
                case .end(let trailers):
                    require(trailers == nil, "NIO read trailers of a request without chunks:\n\(describe(request))")
                    ended = true
                }
            }
            if whole {
                require(ended && body == head.bodyLength,
                        "NIO read \(body) body bytes, ended \(ended); RawRequestHead: \(head.bodyLength):\n\(describe(request))")
            } else {
                require(!ended && body == request.count - head.size,
                        "NIO ended a request whose body is cut short (\(body) of \(head.bodyLength) bytes):\n\(describe(request))")
                return
            }
            offset += length
            lastEnded = ended
        }
        // The last request passed on ended where the raw reading said: NIO reads the next
        // request, sent on its own, as one.
        guard lastEnded, offset > 0 else { return }
        let (parts, error) = feed(channel, Array("GET /next HTTP/1.1\r\nHost: next\r\n\r\n".utf8))
        guard error == nil, parts.count == 2, case .head(let nioHead) = parts[0], nioHead.uri == "/next", case .end = parts[1] else {
            finding("NIO did not read the request sent after the last delimited one as a request (\(parts)):\n\(describe(Array(bytes[..<offset])))")
        }
    }

    /// A scan resumed after an `incomplete` one (`checked`, as `InlineGetHandler` does when a
    /// head comes in pieces) gives the verdict of a scan from the start.
    static func checkResumedScans(_ bytes: [UInt8]) {
        let whole = bytes.withUnsafeBytes { RawRequestHead.scan($0) }
        guard bytes.count > 1 else { return }
        for split in [bytes.count / 2, Int(bytes[0]) % bytes.count, bytes.count - 1] {
            let prefix = Array(bytes[..<split])
            guard prefix.withUnsafeBytes({ RawRequestHead.scan($0) }) == .incomplete else { continue }
            let resumed = bytes.withUnsafeBytes { RawRequestHead.scan($0, checked: split) }
            require(resumed == whole, "a scan resumed at \(split) says \(resumed), from the start \(whole):\n\(describe(bytes))")
        }
    }

    /// What NIO reads of `bytes`, and the error the decoder gave, if any.
    static func feed(_ channel: EmbeddedChannel, _ bytes: [UInt8]) -> ([HTTPServerRequestPart], (any Error)?) {
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        var failure: (any Error)?
        do { try channel.writeInbound(buffer) } catch { failure = error }
        var parts: [HTTPServerRequestPart] = []
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
        return (parts, failure)
    }

    /// NIO's fields as `RawRequestHead.request(in:)` gives them: lower-cased names, repeated
    /// fields joined with ", ", and values without the spaces and tabs around them. NIO keeps
    /// trailing ones; they are no part of the value (RFC 9110 §5.5), and HTTPTypes, which
    /// the full path reads the fields through, drops them too (`HTTPField.Value(legalize:)`).
    static func lowercasedJoined(_ headers: HTTPHeaders) -> [String: String] {
        var joined: [String: String] = [:]
        for (name, value) in headers {
            let name = name.lowercased()
            let value = trimmed(value)
            joined[name] = joined[name].map { $0 + ", " + value } ?? value
        }
        return joined
    }

    static func trimmed(_ value: String) -> String {
        let bytes = Array(value.utf8)
        var lower = 0, upper = bytes.count
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return String(decoding: bytes[lower..<upper], as: UTF8.self)
    }

    static func describe(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self).debugDescription
    }
}
