import DAV
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

    @Test func missingIs404AndCollectionIs405() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/none.vcf").status == 404)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/").status == 405)
    }
}
