import DAV
import Foundation
import Testing

@Suite struct GetTests {
    @Test func getReturnsCardWithHeaders() async throws {
        let dav = try await TestDAV()
        let etag = try #require(await dav.putCard(uid: "u1", fn: "Ann").header("ETag"))
        let get = await dav.send("GET", "/dav/addressbooks/alice/default/u1.vcf")
        #expect(get.status == 200)
        #expect(get.header("ETag") == etag)
        #expect(get.header("Content-Type") == "text/vcard; charset=utf-8")
        #expect(get.header("Content-Length") == String(get.body.count))
        #expect(get.header("Last-Modified")?.hasSuffix("GMT") == true)
        #expect(get.text.contains("FN:Ann"))
    }

    @Test func headHasHeadersButNoBody() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "u1", fn: "Ann")
        let head = await dav.send("HEAD", "/dav/addressbooks/alice/default/u1.vcf")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("Content-Length") == String(Fixtures.card(uid: "u1", fn: "Ann").utf8.count))
    }

    @Test func ifNoneMatchWithCurrentETagIs304() async throws {
        let dav = try await TestDAV()
        let etag = try #require(await dav.putCard(uid: "u1", fn: "Ann").header("ETag"))
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/u1.vcf", headers: ["if-none-match": etag]).status == 304)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/u1.vcf", headers: ["if-none-match": "\"old\""]).status == 200)
    }

    @Test func missingIs404AndPlainCollectionIs405() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/none.vcf").status == 404)
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/files/").status == 201)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/files/").status == 405)
        #expect(await dav.send("GET", "/dav/principals/").status == 405)
    }

    /// A 405 names the methods the target does support (RFC 9110 §15.5.6), which GET is not.
    @Test func aRefusedGetsAllowListsTheTargetsMethodsWithoutGet() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/files/").status == 201)
        for path in ["/dav/principals/", "/dav/addressbooks/", "/dav/addressbooks/alice/files/"] {
            let refused = await dav.send("GET", path)
            #expect(refused.status == 405, "\(path)")
            let allow = (refused.header("Allow") ?? "").components(separatedBy: ", ")
            #expect(allow.contains("PROPFIND") && !allow.contains("GET") && !allow.contains("HEAD"), "\(path): \(allow)")
        }
        let files = await dav.send("GET", "/dav/addressbooks/alice/files/")
        #expect((files.header("Allow") ?? "").contains("DELETE"))
        #expect(!(await dav.send("GET", "/dav/principals/").header("Allow") ?? "").contains("DELETE"))
    }

    /// GET of a book hands over every card: the access history counts them and flags the
    /// whole book; HEAD reads none.
    @Test func getOfABookCountsItsCardsAsAFullDownload() async throws {
        let dav = try await TestDAV()
        for uid in ["a", "b", "c"] { await dav.putCard(uid: uid, fn: uid.uppercased()) }
        for (method, cards, full) in [("GET", 3, true), ("HEAD", 0, false)] {
            let tally = RequestTally()
            let response = try await dav.service.handle(DAVRequest(method: method, path: "/dav/addressbooks/alice/default/",
                                                                   headers: [:], body: Data(), credential: .accountPassword("alice"),
                                                                   tally: tally)).collected()
            #expect(response.status == 200)
            #expect(tally.counts.cardsRead == cards, "\(method)")
            #expect(tally.counts.fullDownload == full, "\(method)")
            if method == "GET" {
                #expect(response.body == Data((Fixtures.card(uid: "a", fn: "A") + Fixtures.card(uid: "b", fn: "B")
                    + Fixtures.card(uid: "c", fn: "C")).utf8))
            }
        }
    }

    @Test func acceptPicksTheFormByWeightAndSpecificity() {
        let cases: [(String?, CardMediaType)] = [
            (nil, .vCard), ("", .vCard), ("*/*", .vCard), ("text/vcard", .vCard),
            ("application/vcard+json", .jCard), ("Application/VCARD+JSON; charset=utf-8", .jCard),
            ("application/*", .jCard), ("text/*, application/*;q=0.9", .vCard),
            ("text/vcard;q=0.5, application/vcard+json", .jCard),
            ("application/vcard+json;q=0.1, text/vcard", .vCard),
            ("text/vcard;q=0, */*", .jCard), ("application/vcard+json;q=0, */*", .vCard),
            // Ties and types that match neither keep the stored text.
            ("text/vcard, application/vcard+json", .vCard), ("application/json", .vCard),
            ("application/xml, text/xml", .vCard), ("application/vcard+json;q=2", .vCard),
            ("text/x-vcard;q=0.2, application/vcard+json;q=0.3", .jCard),
        ]
        for (accept, expected) in cases {
            #expect(CardMediaType.negotiate(accept: accept) == expected, "Accept: \(accept ?? "none")")
        }
    }

    @Test func jCardIsItsOwnRepresentationWithItsOwnStrongETag() async throws {
        let dav = try await TestDAV()
        let etag = try #require(await dav.putCard(uid: "u1", fn: "Ann", extra: "TEL;TYPE=CELL:+1 555 0100").header("ETag"))
        let path = "/dav/addressbooks/alice/default/u1.vcf"
        let get = await dav.send("GET", path, headers: ["accept": "application/vcard+json"])
        #expect(get.status == 200)
        #expect(get.header("Content-Type") == "application/vcard+json")
        #expect(get.header("Vary") == "Accept")
        let jCardETag = try #require(get.header("ETag"))
        #expect(jCardETag != etag && jCardETag.hasPrefix("\"") && !jCardETag.hasPrefix("W/"))
        #expect(get.header("Content-Length") == String(get.body.count))
        #expect(get.text.hasPrefix("[\"vcard\""))
        #expect(get.text.contains(#"["fn", {}, "text", "Ann"]"#))
        #expect(get.text.contains(#"["version", {}, "text", "4.0"]"#))
        let head = await dav.send("HEAD", path, headers: ["accept": "application/vcard+json"])
        #expect(head.body.isEmpty && head.header("Content-Length") == String(get.body.count) && head.header("ETag") == jCardETag)

        // Conditional GETs compare with the chosen form's tag.
        #expect(await dav.send("GET", path, headers: ["accept": "application/vcard+json", "if-none-match": jCardETag]).status == 304)
        #expect(await dav.send("GET", path, headers: ["accept": "application/vcard+json", "if-none-match": etag]).status == 200)
        #expect(await dav.send("GET", path, headers: ["if-none-match": jCardETag]).status == 200)
        #expect(await dav.send("GET", path, headers: ["accept": "application/vcard+json", "if-match": etag]).status == 412)
        // A write takes either tag as the card's.
        #expect(await dav.putCard(uid: "u1", fn: "Ann B", headers: ["content-type": "text/vcard", "if-match": jCardETag]).status == 204)
        #expect(await dav.putCard(uid: "u1", fn: "Ann C", headers: ["content-type": "text/vcard", "if-match": jCardETag]).status == 412)
    }
}
