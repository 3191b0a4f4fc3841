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
struct Multistatus {
    private var xml: XMLWriter

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

    /// A card's response written from its row (see `CardResponseWriter`).
    mutating func add(card: ResourceInfo, body: Data, href: String, writer: CardResponseWriter) {
        writer.write(card, body: body, href: href, into: &xml)
    }

    /// A card listed in its collection, written from its row.
    mutating func add(card: ResourceInfo, body: Data, memberOf collection: EscapedHref, writer: CardResponseWriter) {
        writer.write(card, body: body, memberOf: collection, into: &xml)
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

    /// Bytes written and not yet handed over (`pendingBytes`, `discardPending()`).
    var pendingByteCount: Int { xml.bytes.count }

    /// What is written and not yet handed over: the next chunk of a streamed body. It
    /// shares the writer's buffer; `discardPending()` after the chunk is sent (and the copy
    /// released) then reuses that buffer instead of allocating one per chunk.
    var pendingBytes: [UInt8] { xml.bytes }

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
        if let syncToken { xml.element(Namespace.dav, "sync-token", text: syncToken) }
        xml.end()
        xml.raw("\n")
        return xml.bytes
    }
}
