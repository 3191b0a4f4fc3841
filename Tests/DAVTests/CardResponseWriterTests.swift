@testable import DAV
import DAVXML
import Foundation
import RoloStore
import Testing

/// The row writer is a shortcut: it must give exactly the bytes of the generic property
/// path, and step aside whenever it could not.
@Suite struct CardResponseWriterTests {
    static let cardDAV = "urn:ietf:params:xml:ns:carddav"

    /// A book whose card names need XML escaping and percent-encoding, one card with `&`
    /// and `<` in its body.
    static func bookWithAwkwardCards() async throws -> (TestDAV, CollectionInfo) {
        let dav = try await TestDAV()
        let book = try #require(try await dav.store.collection(owner: "alice", path: ["default"]))
        let cards = [("plain.vcf", "Ann"), ("a&b<c>.vcf", "B & <C>"), ("ü ñ 漢字 \"q\".vcf", "Zoë 漢字"), ("100%.vcf", "Per Cent")]
        for (index, (name, fn)) in cards.enumerated() {
            let uid = "uid-\(index)"
            _ = try await dav.store.putResource(
                collectionID: book.id, name: name, data: Data(Fixtures.card(uid: uid, fn: fn).utf8),
                contentType: Put.cardContentType, card: CardMetadata(uid: uid, kind: "person", indexEntries: [], members: []),
                precondition: .none)
        }
        return (dav, book)
    }

    static func request(_ props: [String]) throws -> PropertyRequest {
        try PropertyRequest(propfind: try XMLDocumentParser.parse(Array(Fixtures.propfind(props).utf8)))
    }

    @Test(arguments: [
        ["{DAV:}getetag"],
        ["{DAV:}getetag", "{DAV:}getcontenttype"],
        ["{DAV:}resourcetype", "{DAV:}getcontentlength", "{DAV:}getlastmodified", "{DAV:}getetag", "{DAV:}getetag"],
        ["{DAV:}getetag", "{urn:ietf:params:xml:ns:carddav}address-data"],
    ])
    func rowResponsesAreTheGenericResponsesByteForByte(props: [String]) async throws {
        let (dav, book) = try await Self.bookWithAwkwardCards()
        let request = try Self.request(props)
        let rows = try #require(CardResponseWriter(request, withBodies: true))
        let cards = try await dav.store.allResources(collectionID: book.id)
        #expect(cards.count == 4)
        var fromRows = Multistatus()
        var asMembers = Multistatus()
        var generic = Multistatus()
        let bookHref = EscapedHref(dav.service.hrefs.collection(owner: "alice", path: book.path))
        for card in cards {
            let href = dav.service.hrefs.resource(owner: "alice", collectionPath: book.path, name: card.info.name)
            fromRows.add(card: card.info, body: card.data, href: href, writer: rows)
            asMembers.add(card: card.info, body: card.data, memberOf: bookHref, writer: rows)
            generic.add(href: href, propstats: try await dav.service.propstats(
                of: .object(book, card.info, card.data), href: href, credential: .accountPassword("alice"), request: request))
        }
        let rowBytes = fromRows.finish()
        #expect(String(decoding: rowBytes, as: UTF8.self) == String(decoding: generic.finish(), as: UTF8.self))
        #expect(asMembers.finish() == rowBytes)
        #expect(try XMLDocumentParser.parse([UInt8](rowBytes)).children.count == 4)
    }

    @Test func propertiesTheRowDoesNotHoldKeepTheGenericPath() throws {
        let cardDAV = Self.cardDAV
        // Dead or computed properties, and a card that would need converting or trimming.
        #expect(CardResponseWriter(try Self.request(["{DAV:}getetag", "{DAV:}displayname"]), withBodies: true) == nil)
        #expect(CardResponseWriter(try Self.request(["{DAV:}getetag", "{DAV:}current-user-privilege-set"]), withBodies: true) == nil)
        let versioned = #"<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:C="\#(cardDAV)"><D:prop><D:getetag/><C:address-data version="4.0"/></D:prop></D:propfind>"#
        #expect(CardResponseWriter(try PropertyRequest(propfind: try XMLDocumentParser.parse(Array(versioned.utf8))), withBodies: true) == nil)
        // address-data without the bodies loaded, allprop, propname and an empty prop.
        #expect(CardResponseWriter(try Self.request(["{\(cardDAV)}address-data"]), withBodies: false) == nil)
        #expect(CardResponseWriter(.allprop(include: []), withBodies: true) == nil)
        #expect(CardResponseWriter(.propname, withBodies: true) == nil)
        #expect(CardResponseWriter(.prop([]), withBodies: true) == nil)
        #expect(CardResponseWriter(try Self.request(["{\(cardDAV)}address-data"]), withBodies: true) != nil)
    }

    @Test func depthOnePropfindOfABookFromRowsListsEveryCardWithItsETag() async throws {
        let (dav, book) = try await Self.bookWithAwkwardCards()
        let response = await dav.propfind("/dav/addressbooks/alice/default/", depth: "1", props: ["{DAV:}getetag", "{DAV:}getcontenttype"])
        #expect(response.status == 207)
        let views = try response.multistatus()
        let cards = try await dav.store.listResources(collectionID: book.id)
        #expect(views.count == cards.count + 1)
        for card in cards {
            let view = try #require(views[dav.service.hrefs.resource(owner: "alice", collectionPath: ["default"], name: card.name)])
            #expect(view.value(of: "{DAV:}getetag")?.text == card.etag)
            #expect(view.value(of: "{DAV:}getcontenttype")?.text == Put.cardContentType)
        }
        #expect(views["/dav/addressbooks/alice/default/"]?.status(of: "{DAV:}getetag") == 404)
    }
}
