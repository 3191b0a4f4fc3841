import DAV
import Testing

@Suite struct ProppatchTests {
    static func update(_ inner: String) -> String {
        "<D:propertyupdate xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:carddav\">\(inner)</D:propertyupdate>"
    }

    @Test func setsDisplayNameDescriptionAndDeadPropertiesVerbatim() async throws {
        let dav = try await TestDAV()
        let body = Self.update("""
        <D:set><D:prop><D:displayname>Family</D:displayname><C:addressbook-description>Kin</C:addressbook-description>
        <A:addressbook-color xmlns:A="http://apple.com/ns/ical/">#00FF00FF</A:addressbook-color>
        <X:nested xmlns:X="urn:x"><X:a attr="1">one</X:a><Y:b xmlns:Y="urn:y"/></X:nested></D:prop></D:set>
        """)
        let response = await dav.send("PROPPATCH", "/dav/addressbooks/alice/default/", body: body)
        #expect(response.status == 207)
        let patched = try #require(try response.multistatus()["/dav/addressbooks/alice/default/"])
        #expect(patched.status(of: "{DAV:}displayname") == 200)
        #expect(patched.status(of: "{urn:x}nested") == 200)

        let read = await dav.propfind("/dav/addressbooks/alice/default/", props: [
            "{DAV:}displayname", "{urn:ietf:params:xml:ns:carddav}addressbook-description",
            "{http://apple.com/ns/ical/}addressbook-color", "{urn:x}nested",
        ])
        let view = try #require(try read.multistatus()["/dav/addressbooks/alice/default/"])
        #expect(view.value(of: "{DAV:}displayname")?.text == "Family")
        #expect(view.value(of: "{urn:ietf:params:xml:ns:carddav}addressbook-description")?.text == "Kin")
        #expect(view.value(of: "{http://apple.com/ns/ical/}addressbook-color")?.text == "#00FF00FF")
        let nested = try #require(view.value(of: "{urn:x}nested"))
        #expect(nested.child("urn:x", "a")?.text == "one")
        #expect(nested.child("urn:x", "a")?.attribute("attr") == "1")
        #expect(nested.child("urn:y", "b") != nil)
    }

    @Test func protectedPropertyFailsEverythingAtomically() async throws {
        let dav = try await TestDAV()
        let body = Self.update("<D:set><D:prop><D:displayname>New</D:displayname><D:getetag>\"x\"</D:getetag></D:prop></D:set>")
        let response = await dav.send("PROPPATCH", "/dav/addressbooks/alice/default/", body: body)
        #expect(response.status == 207)
        let view = try #require(try response.multistatus()["/dav/addressbooks/alice/default/"])
        #expect(view.status(of: "{DAV:}displayname") == 424)
        #expect(view.status(of: "{DAV:}getetag") == 403)
        #expect(response.text.contains("cannot-modify-protected-property"))
        let read = await dav.propfind("/dav/addressbooks/alice/default/", props: ["{DAV:}displayname"])
        #expect(try read.multistatus()["/dav/addressbooks/alice/default/"]?.value(of: "{DAV:}displayname")?.text == "Contacts")
    }

    @Test func removeDeletesDeadProperty() async throws {
        let dav = try await TestDAV()
        await dav.send("PROPPATCH", "/dav/addressbooks/alice/default/",
                       body: Self.update("<D:set><D:prop><X:p xmlns:X=\"urn:x\">v</X:p></D:prop></D:set>"))
        await dav.send("PROPPATCH", "/dav/addressbooks/alice/default/",
                       body: Self.update("<D:remove><D:prop><X:p xmlns:X=\"urn:x\"/></D:prop></D:remove>"))
        let read = await dav.propfind("/dav/addressbooks/alice/default/", props: ["{urn:x}p"])
        #expect(try read.multistatus()["/dav/addressbooks/alice/default/"]?.status(of: "{urn:x}p") == 404)
    }

    @Test func deadPropertiesOnCardsAreKept() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "u1", fn: "Ann")
        let response = await dav.send("PROPPATCH", "/dav/addressbooks/alice/default/u1.vcf",
                                      body: Self.update("<D:set><D:prop><X:tag xmlns:X=\"urn:x\">t</X:tag></D:prop></D:set>"))
        #expect(response.status == 207)
        let read = await dav.propfind("/dav/addressbooks/alice/default/u1.vcf", props: ["{urn:x}tag"])
        #expect(try read.multistatus()["/dav/addressbooks/alice/default/u1.vcf"]?.value(of: "{urn:x}tag")?.text == "t")
    }
}
