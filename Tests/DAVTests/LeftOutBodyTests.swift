import DAV
import DAVXML
import Foundation
import RoloSQLite
import RoloStore
import Testing

/// Bodies over `DAVConfiguration.pageBodyLimit` stay in the store when a listing reads its
/// page and are read, escaped and sent a slice at a time when their response goes out.
/// Every answer must be byte for byte the one where each page holds every body, and no
/// chunk may hold a whole big body.
@Suite struct LeftOutBodyTests {
    static let book = "/dav/addressbooks/alice/default/"
    static let carddav = "urn:ietf:params:xml:ns:carddav"
    /// Multi-byte characters of every length, XML specials and CRs at every offset of the
    /// slices (their length, 100, is prime to the pattern's), so some slice ends inside each.
    static let awkward = "é漢🎉 & <x> \\, Ω"

    /// A card of about `size` bytes whose NOTE repeats `awkward`.
    static func card(uid: String, size: Int) -> String {
        var note = ""
        while note.utf8.count < size { note += awkward }
        return Fixtures.card(uid: uid, fn: "Card \(uid)", extra: "NOTE:\(note)")
    }

    /// Small and big cards in alice's default book; an engine over the same store that leaves
    /// bodies over 300 bytes out of its pages and sends 100-byte slices.
    static func seeded() async throws -> (whole: TestDAV, sliced: DAVService, names: [String]) {
        let dav = try await TestDAV()
        let sizes = [("small-1", 10), ("big-1", 5000), ("small-2", 50), ("big-2", 1234), ("big-3", 301), ("small-3", 0)]
        for (uid, size) in sizes {
            let created = await dav.send("PUT", book + uid + ".vcf", headers: ["content-type": "text/vcard"],
                                         body: card(uid: uid, size: size))
            #expect(created.status == 201, "PUT \(uid)")
        }
        let sliced = DAVService(store: dav.store, configuration: DAVConfiguration(listingPageSize: 2, streamChunkSize: 100,
                                                                                   pageBodyLimit: 300))
        return (dav, sliced, sizes.map { $0.0 + ".vcf" })
    }

    static func chunks(_ service: DAVService, _ method: String, body: String, depth: String = "1") async throws -> [[UInt8]] {
        let response = await service.handle(DAVRequest(method: method, path: book, headers: ["depth": depth],
                                                       body: Data(body.utf8), user: "alice"))
        #expect(response.status == 207)
        guard let stream = response.streamedBody else { return [Array(response.body)] }
        var chunks: [[UInt8]] = []
        try await stream.write { chunks.append($0) }
        return chunks
    }

    static let addressData = "<D:getetag/><C:address-data/>"
    static func syncBody(token: String = "") -> String {
        "<D:sync-collection xmlns:D=\"DAV:\" xmlns:C=\"\(carddav)\"><D:sync-token>\(token)</D:sync-token>"
            + "<D:sync-level>1</D:sync-level><D:prop>\(addressData)</D:prop></D:sync-collection>"
    }

    /// The answers, whole and sliced: the same bytes, and no chunk near a big card's size.
    static func expectSameAnswer(_ method: String, body: String, depth: String = "1", _ what: Comment) async throws {
        let (dav, sliced, _) = try await seeded()
        let whole = try await chunks(dav.service, method, body: body, depth: depth)
        let parts = try await chunks(sliced, method, body: body, depth: depth)
        #expect(Data(parts.joined()) == Data(whole.joined()), what)
        // A 100-byte slice escapes to at most 600 bytes; the markup around a card adds a few hundred.
        #expect(parts.map(\.count).max() ?? 0 < 1500, what)
        #expect(String(decoding: Data(parts.joined()), as: UTF8.self).contains("big-1"), what)
    }

    @Test func multigetOfBigCardsIsTheSameAnswer() async throws {
        let (_, _, names) = try await Self.seeded()
        try await Self.expectSameAnswer("REPORT", body: AddressbookMultigetTests.multiget(names.map { Self.book + $0 } + [Self.book + "none.vcf"]),
                                        "multiget (row writer)")
    }

    @Test func convertedMultigetOfBigCardsIsTheSameAnswer() async throws {
        let (_, _, names) = try await Self.seeded()
        let prop = "<D:getetag/><C:address-data content-type=\"text/vcard\" version=\"4.0\"/>"
        try await Self.expectSameAnswer("REPORT", body: AddressbookMultigetTests.multiget(names.map { Self.book + $0 }, prop: prop),
                                        "multiget converted to 4.0 (generic path)")
    }

    @Test func initialSyncOfBigCardsIsTheSameAnswer() async throws {
        try await Self.expectSameAnswer("REPORT", body: Self.syncBody(), depth: "0", "initial sync")
    }

    @Test func incrementalSyncOfBigCardsIsTheSameAnswer() async throws {
        let (dav, sliced, _) = try await Self.seeded()
        let first = try await dav.send("REPORT", Self.book, headers: ["depth": "0"], body: SyncCollectionTests.sync()).xml()
        let token = try #require(first.child("DAV:", "sync-token")?.text)
        await dav.send("PUT", Self.book + "big-2.vcf", headers: ["content-type": "text/vcard"], body: Self.card(uid: "big-2", size: 4000))
        await dav.send("PUT", Self.book + "small-1.vcf", headers: ["content-type": "text/vcard"], body: Self.card(uid: "small-1", size: 20))
        await dav.send("DELETE", Self.book + "big-3.vcf")
        let whole = try await Self.chunks(dav.service, "REPORT", body: Self.syncBody(token: token), depth: "0")
        let parts = try await Self.chunks(sliced, "REPORT", body: Self.syncBody(token: token), depth: "0")
        #expect(Data(parts.joined()) == Data(whole.joined()))
        let views = try DAVResponse(status: 207, body: Data(parts.joined())).multistatus()
        #expect(views[Self.book + "big-2.vcf"]?.value(of: "{\(Self.carddav)}address-data")?.text == Self.card(uid: "big-2", size: 4000))
        #expect(views[Self.book + "big-3.vcf"]?.status == 404)
    }

    @Test func scannedQueryOfBigCardsIsTheSameAnswer() async throws {
        // NOTE is not indexed: every card is read and parsed, the big ones alone.
        let filter = "<C:filter><C:prop-filter name=\"NOTE\"><C:text-match match-type=\"contains\">漢</C:text-match></C:prop-filter></C:filter>"
        try await Self.expectSameAnswer("REPORT", body: AddressbookQueryTests.query(filter, prop: Self.addressData), "query by scan")
    }

    @Test func propfindWithAddressDataIsTheSameAnswer() async throws {
        try await Self.expectSameAnswer("PROPFIND", body: Fixtures.propfind(["{DAV:}getetag", "{\(Self.carddav)}address-data"]),
                                        "PROPFIND Depth 1")
    }

    /// The store's own reading: the in-memory store drops big bodies after reading them,
    /// SQLite never reads them (`SQLiteStoreTests` has that side).
    @Test func pagesLeaveOutOnlyBodiesOverTheLimit() async throws {
        let (dav, _, names) = try await Self.seeded()
        let book = try #require(try await dav.store.collection(owner: "alice", path: ["default"]))
        let read = try await dav.store.resources(collectionID: book.id, names: names, bodyLimit: 300)
        #expect(read.count == names.count)
        for card in read {
            #expect(card.bodyLeftOut == (card.info.size > 300), "\(card.info.name)")
            #expect(card.bodyLeftOut ? card.data.isEmpty : card.data.count == card.info.size)
        }
    }
}
