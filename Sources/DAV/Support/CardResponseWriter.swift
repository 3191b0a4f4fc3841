import Authorization
import DAVXML
import Foundation
import RoloStore

/// Writes a card's `DAV:response` straight from its stored row, for the listings clients
/// repeat most (PROPFIND Depth 1, sync-collection, multiget asking for `getetag`,
/// `getcontenttype`, plain `address-data`...). The generic path builds a `Node` per card,
/// asks the property registry for each value and collects propstats, some 5 µs a card of
/// bookkeeping that gives the same bytes every time; here each property's tags are
/// encoded once per request. It applies only when every asked property is one the row
/// holds and always has, so everything else (dead or computed properties, converted or
/// trimmed `address-data`, 404 propstats) keeps the generic path. Its output is the
/// generic path's, byte for byte (`CardResponseWriterTests`).
struct CardResponseWriter: Sendable {
    private enum Column: Sendable {
        case etag, contentLength, lastModified, addressData
        /// The same element for every card (`getcontenttype`, `resourcetype`), encoded once.
        case fixed([UInt8])
    }

    private let columns: [(column: Column, open: [UInt8], close: [UInt8], empty: [UInt8])]

    /// Nil when some asked property needs the generic path; `withBodies` says whether the
    /// caller has the cards' bodies (without them, `address-data` goes the generic way).
    init?(_ request: PropertyRequest, withBodies: Bool) {
        guard case .prop(let elements) = request, !elements.isEmpty else { return nil }
        var columns: [(column: Column, open: [UInt8], close: [UInt8], empty: [UInt8])] = []
        for element in elements {
            // Both namespaces are declared on the multistatus root with these prefixes.
            guard let prefix = XMLNamespace.standardPrefixes.first(where: { $0.uri == element.namespace })?.prefix
            else { return nil }
            let qualified = prefix + ":" + element.name
            let (open, close, empty) = (Array("<\(qualified)>".utf8), Array("</\(qualified)>".utf8), Array("<\(qualified)/>".utf8))
            let column: Column
            switch (element.namespace, element.name) {
            case (Namespace.dav, "getetag"): column = .etag
            case (Namespace.dav, "getcontenttype"):
                var element = XMLWriter(declaration: false)
                Self.write(text: Put.cardContentType, open, close, empty, into: &element)
                column = .fixed(element.bytes)
            case (Namespace.dav, "getcontentlength"): column = .contentLength
            case (Namespace.dav, "getlastmodified"): column = .lastModified
            case (Namespace.dav, "resourcetype"): column = .fixed(empty)
            case (Namespace.cardDAV, "address-data"):
                // Only the card as stored: jCard, a version or a property subset means parsing it.
                guard withBodies, let asked = try? AddressDataRequest(element: element), asked.isVerbatim else { return nil }
                column = .addressData
            default: return nil
            }
            columns.append((column, open, close, empty))
        }
        self.columns = columns
    }

    private static let responseStart = Array("<d:response><d:href>".utf8)
    private static let propStart = Array("</d:href><d:propstat><d:prop>".utf8)
    private static let responseEnd = Array("</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>".utf8)

    /// Called where a body left in the store goes (inside `address-data`), with the
    /// markup written so far: `Multistatus` splits the answer there.
    typealias StoredBodyMark = (inout XMLWriter) -> Void

    /// The card's whole response; `body` is its stored vCard (unused unless asked for).
    /// When the body was left in the store, `storedBody` marks its place instead.
    func write(_ card: ResourceInfo, body: Data, href: String, into xml: inout XMLWriter,
               storedBody: StoredBodyMark? = nil) {
        xml.raw(bytes: Self.responseStart)
        xml.text(href)
        writeProperties(of: card, body: body, into: &xml, storedBody: storedBody)
    }

    /// The same for a card listed in its collection: the href is the collection's, escaped
    /// once per request, then the card's percent-encoded name, which needs no escaping.
    func write(_ card: ResourceInfo, body: Data, memberOf collection: EscapedHref, into xml: inout XMLWriter,
               storedBody: StoredBodyMark? = nil) {
        xml.raw(bytes: Self.responseStart)
        xml.raw(bytes: collection.bytes)
        xml.raw(PercentEncoding.encodeSegment(card.name))
        writeProperties(of: card, body: body, into: &xml, storedBody: storedBody)
    }

    private func writeProperties(of card: ResourceInfo, body: Data, into xml: inout XMLWriter,
                                 storedBody: StoredBodyMark?) {
        xml.raw(bytes: Self.propStart)
        for (column, open, close, empty) in columns {
            switch column {
            case .etag: Self.write(text: card.etag, open, close, empty, into: &xml)
            case .fixed(let element): xml.raw(bytes: element)
            case .contentLength: Self.write(text: String(card.size), open, close, empty, into: &xml)
            case .lastModified: Self.write(text: HTTPDate.rfc1123(card.modified), open, close, empty, into: &xml)
            case .addressData:
                if let storedBody {
                    xml.raw(bytes: open)
                    storedBody(&xml)
                    xml.raw(bytes: close)
                } else if body.isEmpty {
                    xml.raw(bytes: empty)
                } else {
                    xml.raw(bytes: open)
                    xml.text(utf8: body)
                    xml.raw(bytes: close)
                }
            }
        }
        xml.raw(bytes: Self.responseEnd)
    }

    /// `<p:name>text</p:name>`, or `<p:name/>` for no text, as the generic writer has it.
    private static func write(text: String, _ open: [UInt8], _ close: [UInt8], _ empty: [UInt8], into xml: inout XMLWriter) {
        if text.isEmpty {
            xml.raw(bytes: empty)
        } else {
            xml.raw(bytes: open)
            xml.text(text)
            xml.raw(bytes: close)
        }
    }
}

/// A card body its page left in the store (`DAVConfiguration.pageBodyLimit`): read, escaped
/// and sent a slice at a time when its response goes out (`Multistatus.send`).
struct StoredBody: Sendable {
    let collectionID: Int64
    let name: String
    /// The size the page read, counted against the chunk being filled.
    let size: Int
}

extension StoredResource {
    /// Where to read the body from when the page left it out; nil when `data` holds it.
    func storedBody(in collectionID: Int64) -> StoredBody? {
        bodyLeftOut ? StoredBody(collectionID: collectionID, name: info.name, size: info.size) : nil
    }
}

/// A collection's href XML-escaped once, for the member hrefs of a listing.
struct EscapedHref: Sendable {
    let href: String
    let bytes: [UInt8]

    init(_ href: String) {
        var xml = XMLWriter(declaration: false)
        xml.text(href)
        self.href = href
        self.bytes = xml.bytes
    }
}

extension DAVService {
    /// One card's response: from its row when `rows` can write every asked property, else
    /// through the property registry. `body` is nil when the caller did not load it.
    /// `bodyLeftOut`: the page left the body in the store (`StoredResource.bodyLeftOut`).
    func addCard(_ card: ResourceInfo, body: Data?, bodyLeftOut: Bool = false, in book: CollectionInfo, href: String,
                 rows: CardResponseWriter?, properties: PropertyRequest, credential: Credential,
                 to multistatus: inout Multistatus) async throws {
        if let rows {
            let stored = bodyLeftOut ? StoredBody(collectionID: book.id, name: card.name, size: card.size) : nil
            multistatus.add(card: card, body: body ?? Data(), storedBody: stored, href: href, writer: rows)
        } else {
            let body = bodyLeftOut ? try await leftOutBody(of: card, in: book) : body
            try await addGenericCard(card, body: body, in: book, href: href, properties: properties, credential: credential, to: &multistatus)
        }
    }

    /// A body the page left in the store, for the generic path (a converted or trimmed
    /// `address-data` needs the whole card parsed anyway). One card at a time.
    private func leftOutBody(of card: ResourceInfo, in book: CollectionInfo) async throws -> Data {
        guard let stored = try await store.resource(collectionID: book.id, name: card.name) else {
            throw DAVError(500, message: "The card \(card.name) went away while the answer was written.")
        }
        return stored.data
    }

    /// The same for a card listed in its collection (`collectionHref`), the href built only
    /// when the generic path needs it as a String.
    func addMember(_ card: ResourceInfo, body: Data?, bodyLeftOut: Bool = false, in book: CollectionInfo,
                   collectionHref: EscapedHref, rows: CardResponseWriter?,
                   properties: PropertyRequest, credential: Credential, to multistatus: inout Multistatus) async throws {
        if let rows {
            let stored = bodyLeftOut ? StoredBody(collectionID: book.id, name: card.name, size: card.size) : nil
            multistatus.add(card: card, body: body ?? Data(), storedBody: stored, memberOf: collectionHref, writer: rows)
        } else {
            let body = bodyLeftOut ? try await leftOutBody(of: card, in: book) : body
            try await addGenericCard(card, body: body, in: book, href: hrefs.member(card.name, ofCollectionHref: collectionHref.href),
                                     properties: properties, credential: credential, to: &multistatus)
        }
    }

    /// The writer of a listing's member cards: straight from the rows when `rows` can
    /// write every asked property (no suspension per card), else the generic path.
    func memberWriter<Item: Sendable>(in book: CollectionInfo, collectionHref: EscapedHref, rows: CardResponseWriter?,
                                      properties: PropertyRequest, credential: Credential,
                                      card: @escaping @Sendable (Item) -> StoredResource) -> ItemWriter<Item> {
        if let rows {
            return .rows { item, multistatus in
                let card = card(item)
                multistatus.add(card: card.info, body: card.data, storedBody: card.storedBody(in: book.id),
                                memberOf: collectionHref, writer: rows)
            }
        }
        return .generic { [self] item, multistatus in
            let card = card(item)
            try await addMember(card.info, body: card.data, bodyLeftOut: card.bodyLeftOut, in: book, collectionHref: collectionHref,
                                rows: nil, properties: properties, credential: credential, to: &multistatus)
        }
    }

    private func addGenericCard(_ card: ResourceInfo, body: Data?, in book: CollectionInfo, href: String,
                                properties: PropertyRequest, credential: Credential, to multistatus: inout Multistatus) async throws {
        let node = Node.object(book, card, body)
        multistatus.add(href: href, propstats: try await propstats(of: node, href: href, credential: credential, request: properties))
    }
}
