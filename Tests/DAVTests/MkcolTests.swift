import DAV
import Testing

@Suite struct MkcolTests {
    static let extendedBody = """
    <D:mkcol xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"><D:set><D:prop>
    <D:resourcetype><D:collection/><C:addressbook/></D:resourcetype>
    <D:displayname>Work</D:displayname><C:addressbook-description>Colleagues</C:addressbook-description>
    <A:addressbook-color xmlns:A="http://apple.com/ns/ical/">#FF0000</A:addressbook-color>
    </D:prop></D:set></D:mkcol>
    """

    @Test func extendedMkcolCreatesAddressBookWithProperties() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/work/", body: Self.extendedBody).status == 201)
        let response = await dav.propfind("/dav/addressbooks/alice/work/", props: [
            "{DAV:}resourcetype", "{DAV:}displayname", "{urn:ietf:params:xml:ns:carddav}addressbook-description",
            "{http://apple.com/ns/ical/}addressbook-color",
        ])
        let view = try #require(try response.multistatus()["/dav/addressbooks/alice/work/"])
        #expect(view.value(of: "{DAV:}resourcetype")?.childNames.contains("{urn:ietf:params:xml:ns:carddav}addressbook") == true)
        #expect(view.value(of: "{DAV:}displayname")?.text == "Work")
        #expect(view.value(of: "{urn:ietf:params:xml:ns:carddav}addressbook-description")?.text == "Colleagues")
        #expect(view.value(of: "{http://apple.com/ns/ical/}addressbook-color")?.text == "#FF0000")
        #expect(await dav.putCard(uid: "w1", fn: "Worker", book: "work").status == 201)
    }

    @Test func plainMkcolCreatesPlainCollection() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/files").status == 201)
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/files/sub/").status == 201)
        let response = await dav.propfind("/dav/addressbooks/alice/files/", depth: "1", props: ["{DAV:}resourcetype"])
        let views = try response.multistatus()
        #expect(views["/dav/addressbooks/alice/files/"]?.value(of: "{DAV:}resourcetype")?.childNames == ["{DAV:}collection"])
        #expect(views["/dav/addressbooks/alice/files/sub/"] != nil)
    }

    @Test func existingIs405AndMissingParentIs409() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/default/").status == 405)
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/").status == 405)
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/a/b/").status == 409)
    }

    @Test func unknownBodyIs415() async throws {
        let dav = try await TestDAV()
        let response = await dav.send("MKCOL", "/dav/addressbooks/alice/x/", body: "<foo xmlns=\"urn:x\"/>")
        #expect(response.status == 415)
        #expect(await dav.propfind("/dav/addressbooks/alice/x/", props: ["{DAV:}resourcetype"]).status == 404)
    }

    @Test func unsupportedResourceTypeIs403AndCreatesNothing() async throws {
        let dav = try await TestDAV()
        let body = """
        <D:mkcol xmlns:D="DAV:"><D:set><D:prop><D:resourcetype><D:collection/><X:calendar xmlns:X="urn:ietf:params:xml:ns:caldav"/></D:resourcetype>
        <D:displayname>Cal</D:displayname></D:prop></D:set></D:mkcol>
        """
        let response = await dav.send("MKCOL", "/dav/addressbooks/alice/cal/", body: body)
        #expect(response.status == 403)
        #expect(response.text.contains("valid-resourcetype"))
        #expect(await dav.propfind("/dav/addressbooks/alice/cal/", props: ["{DAV:}resourcetype"]).status == 404)
    }

    @Test func collectionsInsideAnAddressBookAreRefused() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/default/inner/").status == 403)
    }
}
