import DAV
import DAVXML
import Foundation
import Testing

/// Listings longer than a page are streamed (`DAVBodyStream`): these check that a streamed
/// answer holds every card exactly once, is byte for byte what the whole answer would be,
/// and takes its sync token before the pages are read.
@Suite struct StreamedListingTests {
    static let book = "/dav/addressbooks/alice/default/"
    /// More than three pages of `pageSize`; names that sort differently by bytes and by
    /// Swift's String order would show up as a missed or repeated card.
    static let names = ["a", "b", "c", "d", "e", "f", "g", "h", "Z", "é", "e\u{301}x", "日本", "n 1", "n%2"]
    static let pageSize = 3

    /// Alice's default book with `names` as cards, and an engine over the same store that
    /// pages by `pageSize` and hands out chunks of a few hundred bytes.
    static func seeded() async throws -> (whole: TestDAV, paged: DAVService) {
        let dav = try await TestDAV()
        for (index, name) in names.enumerated() {
            let created = await dav.putCard(uid: "uid-\(index)", fn: "Card \(name) Smith", name: name)
            #expect(created.status == 201, "PUT \(name)")
        }
        let paged = DAVService(store: dav.store, configuration: DAVConfiguration(listingPageSize: pageSize, streamChunkSize: 300))
        return (dav, paged)
    }

    static func send(_ service: DAVService, _ method: String, _ path: String, depth: String = "1", body: String) async -> DAVResponse {
        await service.handle(DAVRequest(method: method, path: path, headers: ["depth": depth], body: Data(body.utf8), user: "alice"))
    }

    /// Hrefs of the document's responses in order, repeats kept.
    static func hrefs(_ body: Data) throws -> [String] {
        try XMLDocumentParser.parse([UInt8](body)).children("DAV:", "response").map { $0.child("DAV:", "href")?.text ?? "" }
    }

    /// The href of the card PUT as `name` (`TestDAV.putCard` adds `.vcf`).
    static func href(_ name: String) -> String { book + PercentEncodingForTests.segment(name + ".vcf") }
    static let cardHrefs = Set(names.map(href))

    static let propfindBodies = [
        "fast row writer": Fixtures.propfind(["{DAV:}getetag", "{DAV:}getcontenttype", "{DAV:}resourcetype"]),
        "generic properties": Fixtures.propfind(["{DAV:}getetag", "{DAV:}displayname", "{http://example.com/ns}dead"]),
        "allprop": "<D:propfind xmlns:D=\"DAV:\"><D:allprop/></D:propfind>",
    ]

    @Test(arguments: ["fast row writer", "generic properties", "allprop"])
    func streamedPropfindListsEveryCardOnceAndEqualsTheWholeAnswer(_ kind: String) async throws {
        let (dav, paged) = try await Self.seeded()
        let body = try #require(Self.propfindBodies[kind])
        let whole = await dav.sendUncollected("PROPFIND", Self.book, headers: ["depth": "1"], body: body)
        #expect(whole.streamedBody == nil, "one page of 1000 holds the book")
        let streamed = await Self.send(paged, "PROPFIND", Self.book, body: body)
        #expect(streamed.status == 207)
        let stream = try #require(streamed.streamedBody, "more than a page is streamed")
        var chunks: [[UInt8]] = []
        try await stream.write { chunks.append($0) }
        #expect(chunks.count > 3, "handed over in several chunks")
        let collected = Data(chunks.joined())
        #expect(collected == whole.body)
        let hrefs = try Self.hrefs(collected)
        #expect(hrefs.first == Self.book, "the book's own response comes first")
        #expect(hrefs.count == Self.names.count + 1)
        #expect(Set(hrefs.dropFirst()) == Self.cardHrefs)
    }

    @Test func streamedMultigetEqualsTheWholeAnswerWith404sLastInTheOrderAsked() async throws {
        let (dav, paged) = try await Self.seeded()
        let missing = Self.book + "missing.vcf"
        let foreign = "/dav/addressbooks/bob/default/x.vcf"
        let asked = [missing] + Self.names.reversed().map(Self.href) + [foreign, Self.href("a")]
        let body = AddressbookMultigetTests.multiget(asked)
        let whole = await dav.sendUncollected("REPORT", Self.book, headers: ["depth": "1"], body: body)
        #expect(whole.streamedBody == nil, "a few small cards fit one chunk")
        let streamed = await Self.send(paged, "REPORT", Self.book, body: body)
        let stream = try #require(streamed.streamedBody, "more than a chunk is streamed")
        var chunks: [[UInt8]] = []
        try await stream.write { chunks.append($0) }
        #expect(chunks.count > 3, "handed over in several chunks")
        #expect(Data(chunks.joined()) == whole.body)
        let hrefs = try Self.hrefs(Data(chunks.joined()))
        #expect(hrefs == Self.names.reversed().map(Self.href) + [Self.href("a"), foreign, missing])
        let views = try await streamed.collected().multistatus()
        #expect(views[missing]?.status == 404)
        #expect(views[foreign]?.status == 404)
        #expect(views[Self.href("日本")]?.value(of: "{urn:ietf:params:xml:ns:carddav}address-data")?.text.contains("Card 日本 Smith") == true)
    }

    @Test func streamedInitialSyncTakesItsTokenBeforeThePagesSoLaterChangesComeNext() async throws {
        let (dav, paged) = try await Self.seeded()
        let response = await Self.send(paged, "REPORT", Self.book, depth: "0", body: SyncCollectionTests.sync())
        let stream = try #require(response.streamedBody)
        var body = Data()
        var changed = false
        try await stream.write { chunk in
            body.append(contentsOf: chunk)
            guard !changed else { return }
            changed = true
            // While the first pages are on their way: a new card, and one edited that a
            // later page will carry in its new state.
            #expect(await dav.putCard(uid: "late", fn: "Late Arrival").status == 201)
            #expect(await dav.putCard(uid: "uid-9", fn: "Edited", name: "é").status == 204)
        }
        let hrefs = try Self.hrefs(body)
        #expect(hrefs.count == Set(hrefs).count, "no card twice")
        #expect(Self.cardHrefs.isSubset(of: Set(hrefs)))
        let token = try #require(try XMLDocumentParser.parse([UInt8](body)).child("DAV:", "sync-token")?.text)

        let next = await dav.send("REPORT", Self.book, body: SyncCollectionTests.sync(token: token))
        #expect(Set(try next.multistatus().keys) == [Self.href("late"), Self.href("é")])
    }

    @Test func streamedIncrementalSyncReportsUpdatesAndDeletions() async throws {
        let (dav, paged) = try await Self.seeded()
        let start = try #require(try await dav.send("REPORT", Self.book, body: SyncCollectionTests.sync()).xml()
            .child("DAV:", "sync-token")?.text)
        let edited = ["a", "b", "c", "d", "e"]
        for name in edited { await dav.putCard(uid: "uid-\(Self.names.firstIndex(of: name)!)", fn: "New \(name)", name: name) }
        for name in ["f", "g", "h"] { #expect(await dav.send("DELETE", Self.href(name)).status == 204) }

        let response = await Self.send(paged, "REPORT", Self.book, depth: "0", body: SyncCollectionTests.sync(token: start))
        #expect(response.streamedBody != nil)
        let views = try await response.collected().multistatus()
        #expect(Set(views.keys) == Set((edited + ["f", "g", "h"]).map(Self.href)))
        for name in edited { #expect(views[Self.href(name)]?.status(of: "{DAV:}getetag") == 200) }
        for name in ["f", "g", "h"] { #expect(views[Self.href(name)]?.status == 404) }
    }

    @Test func streamedQueryListsEveryHitOnceAndStopsAtTheLimit() async throws {
        let (_, paged) = try await Self.seeded()
        let indexed = "<C:filter><C:prop-filter name=\"FN\"><C:text-match match-type=\"contains\">smith</C:text-match></C:prop-filter></C:filter>"
        let all = await Self.send(paged, "REPORT", Self.book, body: AddressbookQueryTests.query(indexed))
        #expect(all.streamedBody != nil)
        let hrefs = try Self.hrefs(try await all.collected().body)
        #expect(hrefs.count == Self.names.count)
        #expect(Set(hrefs) == Self.cardHrefs)

        let limited = try await Self.send(paged, "REPORT", Self.book, body: AddressbookQueryTests.query(indexed, limit: 7)).collected()
        let views = try limited.multistatus()
        #expect(views.count == 8)
        #expect(views[Self.book]?.status == 507)
    }

    @Test func streamedScanOfUnindexedFilterMatchesAcrossPagesAndStopsAtTheLimit() async throws {
        let (_, paged) = try await Self.seeded()
        // A param-filter is not in the index: every page of cards is parsed and matched.
        let unindexed = "<C:filter><C:prop-filter name=\"FN\"><C:param-filter name=\"LANGUAGE\"><C:is-not-defined/></C:param-filter></C:prop-filter></C:filter>"
        let all = try await Self.send(paged, "REPORT", Self.book, body: AddressbookQueryTests.query(unindexed)).collected()
        #expect(Set(try Self.hrefs(all.body)) == Self.cardHrefs)
        #expect(try Self.hrefs(all.body).count == Self.names.count)

        let limited = try await Self.send(paged, "REPORT", Self.book, body: AddressbookQueryTests.query(unindexed, limit: 5)).collected()
        let views = try limited.multistatus()
        #expect(views.count == 6)
        #expect(views[Self.book]?.status == 507)
    }

    @Test func aStreamThatFailsThrowsAfterItsFirstChunks() async throws {
        struct Broken: Error {}
        let stream = DAVBodyStream { write in
            try await write(Array("<d:multistatus>".utf8))
            throw Broken()
        }
        var received: [[UInt8]] = []
        await #expect(throws: Broken.self) { try await stream.write { received.append($0) } }
        #expect(received.count == 1)
        await #expect(throws: Broken.self) { _ = try await stream.collect() }
    }
}

/// Path segments percent-encoded as the engine writes hrefs (unreserved and `@` literal).
enum PercentEncodingForTests {
    static func segment(_ name: String) -> String {
        var out = ""
        for byte in name.utf8 {
            switch byte {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E, 0x40: out.append(Character(UnicodeScalar(byte)))
            default: out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
