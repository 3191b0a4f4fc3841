import DAV
import Testing

@Suite struct AddressbookMultigetTests {
    static func multiget(_ hrefs: [String], prop: String = "<D:getetag/><C:address-data/>") -> String {
        "<C:addressbook-multiget xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:carddav\"><D:prop>\(prop)</D:prop>"
            + hrefs.map { "<D:href>\($0)</D:href>" }.joined() + "</C:addressbook-multiget>"
    }

    @Test func returnsRequestedCardsAnd404ForMissing() async throws {
        let dav = try await TestDAV()
        var etags: [String: String] = [:]
        for index in 0..<150 {
            etags["c\(index)"] = await dav.putCard(uid: "c\(index)", fn: "Person \(index)").header("ETag")
        }
        let hrefs = (0..<150).map { "/dav/addressbooks/alice/default/c\($0).vcf" } + ["/dav/addressbooks/alice/default/missing.vcf"]
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/", headers: ["depth": "1"], body: Self.multiget(hrefs))
        #expect(response.status == 207)
        let views = try response.multistatus()
        #expect(views.count == 151)
        let card = try #require(views["/dav/addressbooks/alice/default/c42.vcf"])
        #expect(card.value(of: "{DAV:}getetag")?.text == etags["c42"])
        #expect(card.value(of: "{urn:ietf:params:xml:ns:carddav}address-data")?.text == Fixtures.card(uid: "c42", fn: "Person 42"))
        #expect(views["/dav/addressbooks/alice/default/missing.vcf"]?.status == 404)
    }

    @Test func percentEncodedHrefsResolve() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "sp", fn: "Space", name: "with space")
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/",
                                      body: Self.multiget(["/dav/addressbooks/alice/default/with%20space.vcf"]))
        let view = try #require(try response.multistatus()["/dav/addressbooks/alice/default/with%20space.vcf"])
        #expect(view.status(of: "{DAV:}getetag") == 200)
    }

    @Test func hrefsPaddedWithWhitespaceOrAbsoluteURIsResolve() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "pad", fn: "Padded")
        await dav.putCard(uid: "abs", fn: "Absolute")
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/",
                                      body: Self.multiget(["\n  /dav/addressbooks/alice/default/pad.vcf\r\n\t",
                                                           "https://rolo.example:8443/dav/addressbooks/alice/default/abs.vcf"]))
        let views = try response.multistatus()
        #expect(views["/dav/addressbooks/alice/default/pad.vcf"]?.status(of: "{DAV:}getetag") == 200)
        #expect(views["https://rolo.example:8443/dav/addressbooks/alice/default/abs.vcf"]?.status(of: "{DAV:}getetag") == 200)
    }

    @Test func hrefsAcrossBooksAnswerInTheOrderAskedAndFilesOutsideAddressBooksAre404() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/work/", body: MkcolTests.extendedBody).status == 201)
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/files/").status == 201)
        #expect(await dav.send("PUT", "/dav/addressbooks/alice/files/note.vcf", body: Fixtures.card(uid: "f", fn: "File")).status == 201)
        await dav.putCard(uid: "home", fn: "Home Card")
        await dav.putCard(uid: "office", fn: "Office Card", book: "work")
        let asked = ["/dav/addressbooks/alice/work/office.vcf", "/dav/addressbooks/alice/files/note.vcf",
                     "/dav/addressbooks/alice/default/home.vcf", "/dav/addressbooks/alice/work/home.vcf",
                     "/dav/addressbooks/alice/nobook/x.vcf"]
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/", body: Self.multiget(asked))
        #expect(response.status == 207)
        let root = try response.xml()
        let hrefs = root.children("DAV:", "response").map { $0.child("DAV:", "href")?.text ?? "" }
        #expect(hrefs == [asked[0], asked[2], asked[1], asked[3], asked[4]], "found cards in the order asked, then the 404s")
        let views = try response.multistatus()
        #expect(views[asked[0]]?.value(of: "{urn:ietf:params:xml:ns:carddav}address-data")?.text == Fixtures.card(uid: "office", fn: "Office Card"))
        #expect(views[asked[2]]?.value(of: "{urn:ietf:params:xml:ns:carddav}address-data")?.text == Fixtures.card(uid: "home", fn: "Home Card"))
        for missing in asked[3...] { #expect(views[missing]?.status == 404, "\(missing)") }
        #expect(views[asked[1]]?.status == 404, "a file in a plain collection is no address object")
    }

    /// The book the request names is looked up once and its hrefs take it from there: its
    /// kind and the credential's access still decide, as for any other book's hrefs.
    @Test func hrefsIntoThePlainCollectionTheRequestNamesAre404() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/files/").status == 201)
        #expect(await dav.send("PUT", "/dav/addressbooks/alice/files/note.vcf", body: Fixtures.card(uid: "f", fn: "File")).status == 201)
        await dav.putCard(uid: "home", fn: "Home Card")
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/files/",
                                      body: Self.multiget(["/dav/addressbooks/alice/files/note.vcf",
                                                           "/dav/addressbooks/alice/default/home.vcf"]))
        #expect(response.status == 207)
        let views = try response.multistatus()
        #expect(views["/dav/addressbooks/alice/files/note.vcf"]?.status == 404)
        #expect(views["/dav/addressbooks/alice/default/home.vcf"]?.status(of: "{DAV:}getetag") == 200)
    }

    @Test func unknownReportIs403SupportedReport() async throws {
        let dav = try await TestDAV()
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/", body: "<X:weird xmlns:X=\"urn:x\"/>")
        #expect(response.status == 403)
        #expect(try response.errorConditions().contains("{DAV:}supported-report"))
    }
}
