import DAV
import Testing
import VCard

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

    /// RFC 6352 §8.6/§8.7: a content type or version the server does not serve breaks
    /// `supported-address-data`, for the whole report.
    @Test func unsupportedAddressDataIs403SupportedAddressData() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "x", fn: "X")
        for attributes in [#"content-type="text/vcard" version="2.1""#, #"content-type="text/html""#,
                           #"content-type="application/vcard+json" version="3.0""#, #"version="5.0""#] {
            let prop = "<C:address-data \(attributes)/>"
            let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/",
                                          body: AddressbookMultigetTests.multiget(["/dav/addressbooks/alice/default/x.vcf"], prop: prop))
            #expect(response.status == 403, "\(attributes)")
            #expect(try response.errorConditions().contains("{urn:ietf:params:xml:ns:carddav}supported-address-data"), "\(attributes)")
        }
    }

    @Test func jCardAddressDataIsTheCardsJCardInTheXML() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "j<1>", fn: "Jo & \"Jay\"", name: "j1", extra: "EMAIL:jo@example.com\nNOTE:private")
        for prop in [#"<C:address-data content-type="application/vcard+json"/>"#,
                     #"<C:address-data content-type="application/vcard+json" version="4.0"/>"#] {
            let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/",
                                          body: AddressbookMultigetTests.multiget(["/dav/addressbooks/alice/default/j1.vcf"], prop: prop))
            let data = try #require(try response.multistatus()["/dav/addressbooks/alice/default/j1.vcf"]?
                .value(of: "{urn:ietf:params:xml:ns:carddav}address-data")?.text)
            let cards = try JCard.decode(data)
            #expect(cards.count == 1)
            #expect(cards.first?.first("FN")?.text == "Jo & \"Jay\"")
            #expect(cards.first?.first("UID")?.text == "j<1>")
            #expect(cards.first?.first("NOTE")?.text == "private")
        }
        // With a property subset, only those (and VERSION, UID).
        let subset = #"<C:address-data content-type="application/vcard+json"><C:prop name="EMAIL"/></C:address-data>"#
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/",
                                      body: AddressbookMultigetTests.multiget(["/dav/addressbooks/alice/default/j1.vcf"], prop: subset))
        let data = try #require(try response.multistatus()["/dav/addressbooks/alice/default/j1.vcf"]?
            .value(of: "{urn:ietf:params:xml:ns:carddav}address-data")?.text)
        let card = try #require(try JCard.decode(data).first)
        #expect(card.first("EMAIL")?.text == "jo@example.com")
        #expect(card.first("NOTE") == nil)
    }
}

@Suite struct AddressDataVerbatimTests {
    @Test func cardAlreadyInTheAskedVersionIsReturnedByteForByte() async throws {
        let dav = try await TestDAV()
        let body = "BEGIN:VCARD\nVERSION:4.0\nUID:v4\nFN:Four\nX-ODD;x-param=1:kept as sent\nEND:VCARD\n"
        await dav.send("PUT", "/dav/addressbooks/alice/default/v4.vcf", headers: ["content-type": "text/vcard"], body: body)
        let prop = "<C:address-data content-type=\"text/vcard\" version=\"4.0\"/>"
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/",
                                      body: AddressbookMultigetTests.multiget(["/dav/addressbooks/alice/default/v4.vcf"], prop: prop))
        let data = try #require(try response.multistatus()["/dav/addressbooks/alice/default/v4.vcf"]?
            .value(of: "{urn:ietf:params:xml:ns:carddav}address-data")?.text)
        #expect(data == body)
    }
}
