import DAV
import Testing

@Suite struct ExpandPropertyTests {
    @Test func expandsCurrentUserPrincipalIntoItsProperties() async throws {
        let dav = try await TestDAV()
        let body = """
        <D:expand-property xmlns:D="DAV:"><D:property name="current-user-principal">
        <D:property name="displayname"/><D:property name="addressbook-home-set" namespace="urn:ietf:params:xml:ns:carddav"/>
        </D:property></D:expand-property>
        """
        let response = await dav.send("REPORT", "/dav/principals/alice/", body: body)
        #expect(response.status == 207)
        let view = try #require(try response.multistatus()["/dav/principals/alice/"])
        let expanded = try #require(view.value(of: "{DAV:}current-user-principal"))
        let inner = try #require(expanded.child("DAV:", "response"))
        #expect(inner.child("DAV:", "href")?.text == "/dav/principals/alice/")
        let props = inner.child("DAV:", "propstat")?.child("DAV:", "prop")
        #expect(props?.child("DAV:", "displayname")?.text == "alice")
        #expect(props?.child("urn:ietf:params:xml:ns:carddav", "addressbook-home-set")?.hrefs == ["/dav/addressbooks/alice/"])
    }
}
