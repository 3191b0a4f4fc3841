import Foundation
import Testing
import VCard

/// jCard (RFC 7095) over real HTTP: negotiated GET with its own ETag, PUT of a jCard stored
/// as vCard 4.0 text, `address-data` as JSON inside a REPORT, and the refusals' preconditions.
@Suite struct JCardHTTPTests {
    static let book = "/dav/addressbooks/alice/default/"
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/jcard")
    static let jCardType = ["Content-Type": "application/vcard+json"]

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    static let carddav = "urn:ietf:params:xml:ns:carddav"

    @Test func getWithAcceptJCardNegotiatesByQValuesAndHasItsOwnETag() async throws {
        try await TestServer.with { server in
            let put = try await DAVFlowTests.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            let vCardETag = try #require(put.headers["etag"])
            let path = Self.book + "ada.vcf"

            let jCard = try await server.request("GET", path, headers: ["Accept": "text/vcard;q=0.4, application/vcard+json;q=0.9"])
            #expect(jCard.status == 200)
            #expect(jCard.headers["content-type"] == "application/vcard+json")
            #expect(jCard.headers["vary"] == "Accept")
            let jCardETag = try #require(jCard.headers["etag"])
            #expect(jCardETag != vCardETag)
            #expect(!jCardETag.hasPrefix("W/"))
            let card = try #require(try JCard.decode([UInt8](jCard.body)).first)
            #expect(card.first("FN")?.text == "Ada Lovelace")
            #expect(card.first("UID")?.text == "ada-1")
            #expect(card.first("EMAIL")?.text == "someone@example.com")

            // The other weights give the stored text, byte for byte, with the stored ETag.
            for accept in ["application/vcard+json;q=0.3, text/vcard", "*/*", "text/html"] {
                let text = try await server.request("GET", path, headers: ["Accept": accept])
                #expect(text.body == DAVFlowTests.card(uid: "ada-1", name: "Ada Lovelace"), "\(accept)")
                #expect(text.headers["etag"] == vCardETag, "\(accept)")
                #expect(text.headers["content-type"]?.hasPrefix("text/vcard") == true, "\(accept)")
            }

            // HEAD: the jCard's length and tag, no body; a revalidation with its tag is 304.
            let head = try await server.request("HEAD", path, headers: ["Accept": "application/vcard+json"])
            #expect(head.headers["content-length"] == String(jCard.body.count))
            #expect(head.headers["etag"] == jCardETag)
            let cached = try await server.request("GET", path, headers: ["Accept": "application/vcard+json", "If-None-Match": jCardETag])
            #expect(cached.status == 304)
            #expect(cached.headers["vary"] == "Accept")
            let stale = try await server.request("GET", path, headers: ["Accept": "application/vcard+json", "If-None-Match": vCardETag])
            #expect(stale.status == 200)
        }
    }

    @Test func putOfAJCardIsStoredAsVCard40TextAndReadsBackTheSame() async throws {
        try await TestServer.with { server in
            let body = try Self.fixture("person.json")
            let put = try await server.request("PUT", Self.book + "lea.vcf", headers: Self.jCardType, body: body)
            #expect(put.status == 201, "\(put.text)")
            // Stored transformed: no strong ETag for the bytes sent (RFC 6352 §6.3.2.3).
            #expect(put.headers["etag"] == nil)

            let text = try await server.request("GET", Self.book + "lea.vcf")
            #expect(text.headers["content-type"] == "text/vcard; charset=utf-8")
            let stored = try VCardParser.parse([UInt8](text.body))
            #expect(stored.count == 1)
            let card = try #require(stored.first)
            #expect(card.version == .v40)
            try VCardValidator.validate(card, requireUID: true)
            #expect(card.first("FN")?.text == "Léa Dubois-Martin, PhD")
            #expect(card.first("N")?.components == ["Dubois-Martin", "Léa", "", "Dr.", "PhD,MSc"])
            #expect(card.first("ADR")?.components[2] == "12 rue des Lilas; bâtiment B")
            #expect(card.first("ADR")?.parameterValues("LABEL") == ["12 rue des Lilas\n75011 Paris"])
            #expect(card.first("NOTE")?.text == "Line one\nLine two; with a semicolon, and a comma \\ and a backslash")
            #expect(card.first("CATEGORIES")?.listValues == ["Friends", "Climbing, bouldering"])
            #expect(card.first("BDAY")?.rawValue == "--0416")
            #expect(card.first("X-CUSTOM-THING")?.text == "left as it is")
            #expect(card.properties(named: "TEL").last?.group == "item1")
            #expect(card.first("X-ABLABEL")?.text == "Atelier")

            // The jCard served back holds the same card as the one sent.
            let served = try await server.request("GET", Self.book + "lea.vcf", headers: ["Accept": "application/vcard+json"])
            let sent = try JCard.decode([UInt8](body))
            let back = try #require(try JCard.decode([UInt8](served.body)).first)
            let original = try #require(sent.first)
            #expect(Self.meaning(back) == Self.meaning(original))

            // Written back with the jCard's ETag: it names the card, so the write goes through;
            // once the card changed, the same tag is stale.
            let jCardETag = try #require(served.headers["etag"])
            let edited = Data(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "lea@example.fr", with: "lea@example.org").utf8)
            let again = try await server.request("PUT", Self.book + "lea.vcf",
                                                 headers: Self.jCardType.merging(["If-Match": jCardETag]) { $1 }, body: edited)
            #expect(again.status == 204)
            let late = try await server.request("PUT", Self.book + "lea.vcf",
                                                headers: Self.jCardType.merging(["If-Match": jCardETag]) { $1 }, body: body)
            #expect(late.status == 412)
            #expect(try await server.request("GET", Self.book + "lea.vcf").text.contains("lea@example.org"))
        }
    }

    /// Name, parameters and value of each property, the line numbers and order left out.
    static func meaning(_ card: VCard) -> [String] {
        card.properties.map { property in
            let parameters = property.parameters.map { "\($0.name)=\($0.values.joined(separator: ","))" }.sorted()
            return "\(property.group ?? "").\(property.name);\(parameters.joined(separator: ";")):\(property.rawValue)"
        }.sorted()
    }

    @Test func refusedPutsNameTheirPrecondition() async throws {
        try await TestServer.with { server in
            for name in ["no-uid.json", "two-cards.json", "not-a-jcard.json"] {
                let put = try await server.request("PUT", Self.book + "bad.vcf", headers: Self.jCardType, body: try Self.fixture(name))
                #expect(put.status == 403, "\(name)")
                #expect(put.errorConditions == ["{\(Self.carddav)}valid-address-data"], "\(name)")
                #expect(!put.errorMessage.isEmpty, "\(name)")
            }
            // A media type the book does not hold.
            let json = try await server.request("PUT", Self.book + "bad.vcf", headers: ["Content-Type": "application/json"],
                                                body: try Self.fixture("person.json"))
            #expect(json.status == 403)
            #expect(json.errorConditions == ["{\(Self.carddav)}supported-address-data"])
            #expect(json.errorMessage.contains("application/json"))
            // A vCard without VERSION: refused on PUT, saying what is missing.
            let noVersion = Data("BEGIN:VCARD\r\nUID:nv-1\r\nFN:No Version\r\nN:Version;No;;;\r\nEND:VCARD\r\n".utf8)
            let strict = try await server.request("PUT", Self.book + "nv.vcf", headers: DAVFlowTests.vcardType, body: noVersion)
            #expect(strict.status == 403)
            #expect(strict.errorConditions == ["{\(Self.carddav)}valid-address-data"])
            #expect(strict.errorMessage.contains("VERSION"))
            #expect(try await server.request("GET", Self.book + "bad.vcf").status == 404)
            #expect(try await server.request("GET", Self.book + "nv.vcf").status == 404)
        }
    }

    @Test func reportsServeJCardAddressDataAndRefuseWhatTheyCannotProduce() async throws {
        try await TestServer.with { server in
            _ = try await server.request("PUT", Self.book + "lea.vcf", headers: Self.jCardType, body: try Self.fixture("person.json"))
            _ = try await DAVFlowTests.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada <Lovelace> & Co")
            func multiget(_ addressData: String) -> Data {
                Data("""
                    <?xml version="1.0" encoding="utf-8"?>
                    <c:addressbook-multiget xmlns:d="DAV:" xmlns:c="\(Self.carddav)">
                    <d:prop><d:getetag/>\(addressData)</d:prop>
                    <d:href>\(Self.book)lea.vcf</d:href><d:href>\(Self.book)ada.vcf</d:href>
                    </c:addressbook-multiget>
                    """.utf8)
            }
            let report = try await server.request("REPORT", Self.book, headers: ["Depth": "0"],
                                                  body: multiget(#"<c:address-data content-type="application/vcard+json" version="4.0"/>"#))
            #expect(report.status == 207)
            let responses = try report.xml().responsesByHref
            let ada = try #require(responses[Self.book + "ada.vcf"]?.property(Self.carddav, "address-data")?.text)
            #expect(try JCard.decode(ada).first?.first("FN")?.text == "Ada <Lovelace> & Co")
            let lea = try #require(responses[Self.book + "lea.vcf"]?.property(Self.carddav, "address-data")?.text)
            #expect(try JCard.decode(lea).first?.first("NOTE")?.text.hasPrefix("Line one\nLine two") == true)
            // The raw body carries the JSON escaped for XML, not as markup.
            #expect(report.text.contains("Ada &lt;Lovelace&gt; &amp; Co"))

            for unsupported in [#"content-type="text/plain""#, #"content-type="application/vcard+json" version="3.0""#,
                                #"content-type="text/vcard" version="2.1""#] {
                let refused = try await server.request("REPORT", Self.book, headers: ["Depth": "0"],
                                                       body: multiget("<c:address-data \(unsupported)/>"))
                #expect(refused.status == 403, "\(unsupported)")
                #expect(refused.errorConditions == ["{\(Self.carddav)}supported-address-data"], "\(unsupported)")
            }

            // supported-address-data advertises jCard beside vCard 3.0 and 4.0.
            let propfind = Data("""
                <d:propfind xmlns:d="DAV:" xmlns:c="\(Self.carddav)"><d:prop><c:supported-address-data/></d:prop></d:propfind>
                """.utf8)
            let properties = try await server.request("PROPFIND", Self.book, headers: ["Depth": "0"], body: propfind)
            let types = try #require(properties.xml().responsesByHref[Self.book]?.property(Self.carddav, "supported-address-data"))
                .children(Self.carddav, "address-data-type")
                .map { "\($0.attribute("content-type") ?? "") \($0.attribute("version") ?? "")" }
            #expect(types == ["text/vcard 3.0", "text/vcard 4.0", "application/vcard+json 4.0"])
        }
    }
}
