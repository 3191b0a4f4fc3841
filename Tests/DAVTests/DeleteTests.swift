import DAV
import Testing

@Suite struct DeleteTests {
    @Test func deleteCardThenItIsGone() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "u1", fn: "Ann")
        #expect(await dav.send("DELETE", "/dav/addressbooks/alice/default/u1.vcf").status == 204)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/u1.vcf").status == 404)
        #expect(await dav.send("DELETE", "/dav/addressbooks/alice/default/u1.vcf").status == 404)
    }

    @Test func ifMatchIsHonoured() async throws {
        let dav = try await TestDAV()
        let etag = try #require(await dav.putCard(uid: "u1", fn: "Ann").header("ETag"))
        #expect(await dav.send("DELETE", "/dav/addressbooks/alice/default/u1.vcf", headers: ["if-match": "\"x\""]).status == 412)
        #expect(await dav.send("DELETE", "/dav/addressbooks/alice/default/u1.vcf", headers: ["if-match": etag]).status == 204)
    }

    @Test func deleteAddressBookRemovesItsCards() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "u1", fn: "Ann")
        #expect(await dav.send("DELETE", "/dav/addressbooks/alice/default/").status == 204)
        #expect(await dav.propfind("/dav/addressbooks/alice/default/", props: ["{DAV:}displayname"]).status == 404)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/u1.vcf").status == 404)
    }

    @Test func homeAndPrincipalCannotBeDeleted() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("DELETE", "/dav/addressbooks/alice/").status == 403)
        #expect(await dav.send("DELETE", "/dav/principals/alice/").status == 403)
    }
}
