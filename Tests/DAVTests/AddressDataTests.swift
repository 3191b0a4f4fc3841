import DAV
import Testing

/// `address-data` conversion and property subsets in REPORT responses.
@Suite struct AddressDataTests {
    @Test func convertsToRequestedVersion() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "v3", fn: "Three", extra: "TEL;TYPE=CELL:+1 555")
        let prop = "<C:address-data content-type=\"text/vcard\" version=\"4.0\"/>"
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/",
                                      body: AddressbookMultigetTests.multiget(["/dav/addressbooks/alice/default/v3.vcf"], prop: prop))
        let data = try #require(try response.multistatus()["/dav/addressbooks/alice/default/v3.vcf"]?
            .value(of: "{urn:ietf:params:xml:ns:carddav}address-data")?.text)
        #expect(data.contains("VERSION:4.0"))
        #expect(data.contains("FN:Three"))
        #expect(data.contains("+1 555"))
    }

    @Test func propSubsetKeepsOnlyAskedProperties() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "sub", fn: "Subset", extra: "EMAIL:s@example.com\nNOTE:private")
        let prop = "<C:address-data><C:prop name=\"EMAIL\"/></C:address-data>"
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/",
                                      body: AddressbookMultigetTests.multiget(["/dav/addressbooks/alice/default/sub.vcf"], prop: prop))
        let data = try #require(try response.multistatus()["/dav/addressbooks/alice/default/sub.vcf"]?
            .value(of: "{urn:ietf:params:xml:ns:carddav}address-data")?.text)
        #expect(data.contains("EMAIL:s@example.com"))
        #expect(!data.contains("NOTE"))
        #expect(data.contains("UID:sub"))
    }

    @Test func unsupportedVersionIs403ConversionCondition() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "x", fn: "X")
        let prop = "<C:address-data content-type=\"text/vcard\" version=\"2.1\"/>"
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/",
                                      body: AddressbookMultigetTests.multiget(["/dav/addressbooks/alice/default/x.vcf"], prop: prop))
        #expect(response.status == 403)
        #expect(try response.errorConditions().contains("{urn:ietf:params:xml:ns:carddav}supported-address-data-conversion"))
    }
}
