import DAVXML
import Foundation
import RoloStore

/// A group of properties sharing a status inside a `DAV:response`.
struct Propstat: Sendable {
    var status: Int
    /// Property names with their values; nil writes an empty element (propname, 404s).
    var properties: [(name: PropertyName, value: PropertyValue?)]
    var error: DAVError?

    init(status: Int, properties: [(name: PropertyName, value: PropertyValue?)], error: DAVError? = nil) {
        self.status = status; self.properties = properties; self.error = error
    }
}

/// Writes a `DAV:multistatus` body response by response into DAVXML's byte writer.
///
/// A card whose body its page left in the store (`StoredBody`) splits the answer: the
/// markup before the body's place moves to `held`, followed by the body's reference, and
/// writing goes on in `xml`. `send` then hands everything over in order, reading and
/// escaping each such body a slice at a time, so no buffer ever holds a big card's XML.
struct Multistatus {
    private var xml: XMLWriter
    /// What comes before `xml`'s bytes, in document order (empty unless a body was left out).
    private var held: [Held] = []
    private var heldByteCount = 0

    private enum Held {
        case markup([UInt8])
        case body(StoredBody)
    }

    /// - Parameter capacity: a size hint in bytes (e.g. the sum of the card sizes).
    init(reservingCapacity capacity: Int = 4096) {
        xml = XMLWriter(reservingCapacity: capacity)
        xml.start(Namespace.dav, "multistatus")
    }

    /// Makes room for `count` responses of properties without card data.
    mutating func reserve(responses count: Int) {
        reserve(bytes: count * Self.bytesPerResponse)
    }

    /// Makes room for `count` more bytes (a chunk of a listing).
    mutating func reserve(bytes count: Int) {
        xml.reserveCapacity(forAdditional: count)
    }

    /// About what a response's markup, href, ETag and status take.
    private static let bytesPerResponse = 320

    /// A response with property results.
    mutating func add(href: String, propstats: [Propstat]) {
        Multistatus.writeResponse(href: href, propstats: propstats, into: &xml)
    }

    /// A card's response written from its row (see `CardResponseWriter`); `storedBody` when
    /// its page left the body in the store.
    mutating func add(card: ResourceInfo, body: Data, storedBody: StoredBody? = nil, href: String, writer: CardResponseWriter) {
        guard let storedBody else { return writer.write(card, body: body, href: href, into: &xml) }
        var split: [Held] = []
        writer.write(card, body: body, href: href, into: &xml) { xml in Self.split(at: storedBody, &xml, into: &split) }
        hold(split)
    }

    /// A card listed in its collection, written from its row.
    mutating func add(card: ResourceInfo, body: Data, storedBody: StoredBody? = nil, memberOf collection: EscapedHref,
                      writer: CardResponseWriter) {
        guard let storedBody else { return writer.write(card, body: body, memberOf: collection, into: &xml) }
        var split: [Held] = []
        writer.write(card, body: body, memberOf: collection, into: &xml) { xml in Self.split(at: storedBody, &xml, into: &split) }
        hold(split)
    }

    /// Moves the markup written so far, then the body's reference, into `split`.
    private static func split(at body: StoredBody, _ xml: inout XMLWriter, into split: inout [Held]) {
        split.append(.markup(xml.bytes))
        split.append(.body(body))
        xml.discardBytes()
    }

    private mutating func hold(_ split: [Held]) {
        for part in split {
            switch part {
            case .markup(let bytes): heldByteCount += bytes.count
            case .body(let body): heldByteCount += body.size
            }
        }
        held += split
    }

    /// True while some card body is still in the store: the answer must be sent with
    /// `send`, which reads it (a whole answer cannot be finished before).
    var holdsStoredBodies: Bool { !held.isEmpty }

    /// Hands over everything written so far through `write`, in order, in chunks of about
    /// `chunkSize`: markup as written (a big run, such as a converted 10 MB card, cut into
    /// chunks), and each body left in the store read with `read` and escaped a slice at a
    /// time into one reused buffer. The open elements stay open: writing goes on after.
    mutating func send(chunkSize: Int, read: (StoredBody) async throws -> Data,
                       write: (_ chunk: [UInt8]) async throws -> Void) async throws {
        let chunk = max(chunkSize, 64)
        let parts = held
        held = []
        heldByteCount = 0
        var scratch: XMLWriter?
        for part in parts {
            switch part {
            case .markup(let bytes):
                try await Self.send(bytes, chunk: chunk, write)
            case .body(let stored):
                var escaped = scratch ?? XMLWriter(declaration: false, reservingCapacity: chunk + chunk / 4)
                try await Self.sendEscaped(try await read(stored), chunk: chunk, through: &escaped, write)
                scratch = escaped
            }
        }
        if !xml.bytes.isEmpty {
            try await Self.send(xml.bytes, chunk: chunk, write)
            xml.discardBytes(keepingCapacityUpTo: chunk + chunk / 4)
        }
    }

    /// `bytes` as one chunk, or cut into chunks when it is much bigger than one.
    private static func send(_ bytes: [UInt8], chunk: Int, _ write: ([UInt8]) async throws -> Void) async throws {
        guard bytes.count > 2 * chunk else { return try await write(bytes) }
        var start = 0
        while start < bytes.count {
            let end = min(start + chunk, bytes.count)
            try await write(Array(bytes[start..<end]))
            start = end
        }
    }

    /// `body` escaped as XML text, `chunk` input bytes at a time. A slice never ends inside
    /// a UTF-8 sequence, so the output is byte for byte what escaping it whole gives.
    private static func sendEscaped(_ body: Data, chunk: Int, through scratch: inout XMLWriter,
                                    _ write: ([UInt8]) async throws -> Void) async throws {
        var start = 0
        while start < body.count {
            let end = utf8Boundary(in: body, near: min(start + chunk, body.count), after: start)
            body[(body.startIndex + start)..<(body.startIndex + end)].withUnsafeBytes { raw in
                scratch.text(utf8: raw.assumingMemoryBound(to: UInt8.self))
            }
            try await write(scratch.bytes)
            scratch.discardBytes()
            start = end
        }
    }

    /// `end`, or the start of the UTF-8 sequence that `end` falls inside (at most three
    /// bytes back). A run of more continuation bytes than any sequence holds is invalid
    /// anyway and replaced byte by byte, so cutting inside it changes nothing.
    static func utf8Boundary(in bytes: Data, near end: Int, after start: Int) -> Int {
        func isContinuation(_ offset: Int) -> Bool { bytes[bytes.startIndex + offset] & 0xC0 == 0x80 }
        guard end < bytes.count, isContinuation(end) else { return end }
        for back in 1...3 where end - back > start && !isContinuation(end - back) {
            return end - back
        }
        return end
    }

    /// A response with a status only (404 in multiget and sync, 507 on truncation...).
    mutating func add(href: String, status: Int, error: DAVError? = nil) {
        Multistatus.writeResponse(href: href, status: status, error: error, into: &xml)
    }

    /// The collection's 507 saying the results stop at the client's `limit` (RFC 6578 §3.6, RFC 6352 §8.6.1).
    mutating func addTruncation(href: String) {
        add(href: href, status: 507, error: .precondition(507, .dav("number-of-matches-within-limits")))
    }

    static func writeResponse(href: String, propstats: [Propstat], into xml: inout XMLWriter) {
        xml.start(Namespace.dav, "response")
        xml.element(Namespace.dav, "href", text: href)
        write(propstats, into: &xml)
        xml.end()
    }

    static func writeResponse(href: String, status: Int, error: DAVError?, into xml: inout XMLWriter) {
        xml.start(Namespace.dav, "response")
        xml.element(Namespace.dav, "href", text: href)
        xml.status(status)
        error?.writeErrorElement(into: &xml)
        xml.end()
    }

    /// `DAV:propstat` elements (also the body of an extended MKCOL's `mkcol-response`).
    static func write(_ propstats: [Propstat], into xml: inout XMLWriter) {
        for propstat in propstats {
            xml.start(Namespace.dav, "propstat")
            xml.start(Namespace.dav, "prop")
            for (name, value) in propstat.properties { xml.property(name, value) }
            xml.end()
            xml.status(propstat.status)
            propstat.error?.writeErrorElement(into: &xml)
            xml.end()
        }
    }

    /// Bytes written and not yet handed over (`pendingBytes`, `discardPending()`), bodies
    /// still in the store counted at their stored size.
    var pendingByteCount: Int { heldByteCount + xml.bytes.count }

    /// What is written and not yet handed over: the next chunk of a streamed body. It
    /// shares the writer's buffer; `discardPending()` after the chunk is sent (and the copy
    /// released) then reuses that buffer instead of allocating one per chunk. Only while
    /// no body is held in the store (`holdsStoredBodies`; else `send`).
    var pendingBytes: [UInt8] {
        assert(held.isEmpty, "pendingBytes with a body still in the store")
        return xml.bytes
    }

    /// Forgets the bytes of `pendingBytes` once they are sent, keeping the buffer.
    mutating func discardPending() {
        xml.discardBytes()
    }

    /// The finished document; a `DAV:sync-token` is appended for sync-collection.
    mutating func finish(syncToken: String? = nil) -> Data {
        Data(finishBytes(syncToken: syncToken))
    }

    /// The rest of the document (all of it when no chunk was taken), closed. Mutating, not
    /// consuming: closing a consumed copy wrote into a buffer still shared with the
    /// caller's variable, which copied the whole answer (200 KB for a multiget of 100)
    /// to append its end tag.
    mutating func finishBytes(syncToken: String? = nil) -> [UInt8] {
        precondition(held.isEmpty, "a multistatus finished with a card body still in the store")
        if let syncToken { xml.element(Namespace.dav, "sync-token", text: syncToken) }
        xml.end()
        xml.raw("\n")
        return xml.bytes
    }
}
