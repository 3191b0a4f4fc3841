import DAV
import Testing

@Suite struct AddressbookQueryTests {
    static let book = "/dav/addressbooks/alice/default/"

    static func query(_ filter: String, limit: Int? = nil, prop: String = "<D:getetag/>") -> String {
        "<C:addressbook-query xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:carddav\"><D:prop>\(prop)</D:prop>"
            + filter + (limit.map { "<C:limit><C:nresults>\($0)</C:nresults></C:limit>" } ?? "") + "</C:addressbook-query>"
    }

    func seed(_ dav: TestDAV) async {
        await dav.putCard(uid: "ada", fn: "Ada Lovelace", extra: "EMAIL:ada@engine.org\nTEL;TYPE=CELL:+44 1")
        await dav.putCard(uid: "alan", fn: "Alan Turing", extra: "EMAIL:alan@bletchley.uk\nTEL;TYPE=WORK:+44 2")
        await dav.putCard(uid: "grace", fn: "Grace Hopper", extra: "EMAIL:grace@navy.mil")
    }

    func hrefs(_ response: DAVResponse) throws -> Set<String> { Set(try response.multistatus().keys) }

    @Test func indexedTextMatchFindsCardsCaseInsensitively() async throws {
        let dav = try await TestDAV()
        await seed(dav)
        let filter = "<C:filter><C:prop-filter name=\"EMAIL\"><C:text-match collation=\"i;unicode-casemap\" match-type=\"contains\">ENGINE</C:text-match></C:prop-filter></C:filter>"
        let response = await dav.send("REPORT", Self.book, headers: ["depth": "1"], body: Self.query(filter))
        #expect(response.status == 207)
        #expect(try hrefs(response) == [Self.book + "ada.vcf"])
    }

    @Test func allofAndAnyofCombinePropFilters() async throws {
        let dav = try await TestDAV()
        await seed(dav)
        let anyof = "<C:filter test=\"anyof\"><C:prop-filter name=\"FN\"><C:text-match match-type=\"starts-with\">grace</C:text-match></C:prop-filter>"
            + "<C:prop-filter name=\"EMAIL\"><C:text-match match-type=\"ends-with\">.uk</C:text-match></C:prop-filter></C:filter>"
        #expect(try hrefs(await dav.send("REPORT", Self.book, body: Self.query(anyof))) == [Self.book + "grace.vcf", Self.book + "alan.vcf"])
        let allof = anyof.replacingOccurrences(of: "anyof", with: "allof")
        #expect(try hrefs(await dav.send("REPORT", Self.book, body: Self.query(allof))).isEmpty)
    }

    @Test func paramFilterIsAnsweredByScanningCards() async throws {
        let dav = try await TestDAV()
        await seed(dav)
        let filter = "<C:filter><C:prop-filter name=\"TEL\"><C:param-filter name=\"TYPE\"><C:text-match match-type=\"equals\">cell</C:text-match></C:param-filter></C:prop-filter></C:filter>"
        let response = await dav.send("REPORT", Self.book, body: Self.query(filter, prop: "<C:address-data/>"))
        #expect(try hrefs(response) == [Self.book + "ada.vcf"])
        #expect(response.text.contains("FN:Ada Lovelace"))
    }

    @Test func limitTruncatesWith507() async throws {
        let dav = try await TestDAV()
        await seed(dav)
        let response = await dav.send("REPORT", Self.book, body: Self.query("<C:filter/>", limit: 2))
        let views = try response.multistatus()
        #expect(views.count == 3)
        #expect(views[Self.book]?.status == 507)
        #expect(response.text.contains("number-of-matches-within-limits"))
    }

    @Test func unsupportedCollationIs403() async throws {
        let dav = try await TestDAV()
        let filter = "<C:filter><C:prop-filter name=\"FN\"><C:text-match collation=\"x;klingon\">a</C:text-match></C:prop-filter></C:filter>"
        let response = await dav.send("REPORT", Self.book, body: Self.query(filter))
        #expect(response.status == 403)
        #expect(try response.errorConditions().contains("{urn:ietf:params:xml:ns:carddav}supported-collation"))
    }

    @Test func queryOutsideAnAddressBookIs403() async throws {
        let dav = try await TestDAV()
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/", body: Self.query("<C:filter/>"))
        #expect(response.status == 403)
    }
}

@Suite struct UnindexedPropertyQueryTests {
    /// NOTE and ADR have no index rows; a query on them scans the cards and finds the same.
    @Test func queriesOnNoteAndAddressAreAnsweredByScanningTheCards() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "ada", fn: "Ada Lovelace", extra: "NOTE:Wrote the first program\nADR:;;1 Street;London;;;UK")
        await dav.putCard(uid: "alan", fn: "Alan Turing", extra: "NOTE:Broke Enigma\nADR:;;2 Road;Manchester;;;UK")
        let book = AddressbookQueryTests.book
        for (property, text, expected) in [("NOTE", "PROGRAM", "ada.vcf"), ("ADR", "manchester", "alan.vcf")] {
            let filter = "<C:filter><C:prop-filter name=\"\(property)\"><C:text-match collation=\"i;unicode-casemap\" "
                + "match-type=\"contains\">\(text)</C:text-match></C:prop-filter></C:filter>"
            let response = await dav.send("REPORT", book, headers: ["depth": "1"], body: AddressbookQueryTests.query(filter))
            #expect(response.status == 207)
            #expect(Set(try response.multistatus().keys) == [book + expected])
        }
    }
}
