import DAV
import Testing

/// Another user's paths never answer data.
@Suite struct IsolationTests {
    @Test func anotherUsersTreeIsNotFoundForEveryMethod() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "secret", fn: "Secret")
        let paths = ["/dav/principals/alice/", "/dav/addressbooks/alice/", "/dav/addressbooks/alice/default/",
                     "/dav/addressbooks/alice/default/secret.vcf"]
        for path in paths {
            let propfind = await dav.propfind(path, props: ["{DAV:}displayname"], user: "bob")
            #expect(propfind.status == 404, "PROPFIND \(path)")
            #expect(!propfind.text.contains("Secret"))
        }
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/secret.vcf", user: "bob").status == 404)
        #expect(await dav.send("DELETE", "/dav/addressbooks/alice/default/secret.vcf", user: "bob").status == 404)
        let put = await dav.send("PUT", "/dav/addressbooks/alice/default/x.vcf", headers: ["content-type": "text/vcard"],
                                 body: Fixtures.card(uid: "x", fn: "X"), user: "bob")
        #expect(put.status == 404)
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/stolen/", user: "bob").status == 404)
        // Alice's card is untouched.
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/secret.vcf").status == 200)
    }

    @Test func multigetOfAnotherUsersHrefIs404() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "secret", fn: "Secret")
        let body = """
        <C:addressbook-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav">
        <D:prop><C:address-data/></D:prop><D:href>/dav/addressbooks/alice/default/secret.vcf</D:href>
        </C:addressbook-multiget>
        """
        let response = await dav.send("REPORT", "/dav/addressbooks/bob/default/", headers: ["depth": "1"], body: body, user: "bob")
        #expect(response.status == 207)
        #expect(try response.multistatus()["/dav/addressbooks/alice/default/secret.vcf"]?.status == 404)
        #expect(!response.text.contains("Secret"))
    }

    @Test func copyIntoAnotherUsersTreeIsForbidden() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "c", fn: "C")
        let response = await dav.send("COPY", "/dav/addressbooks/alice/default/c.vcf",
                                      headers: ["destination": "/dav/addressbooks/bob/default/c.vcf"])
        #expect(response.status == 403)
        #expect(await dav.send("GET", "/dav/addressbooks/bob/default/c.vcf", user: "bob").status == 404)
    }
}
