import CardIndexing
import DAVXML
import Foundation
import RoloStore
import Testing

/// Answers a conformance review (issue 28) found wrong, each through real HTTP: a query on
/// one card, a book's `getcontentlength`, request bodies that ask for two answers, and the
/// `xml:lang` of dead properties.
@Suite struct ConformanceHTTPTests {
    static let book = "/dav/addressbooks/alice/default/"
    static let carddav = "urn:ietf:params:xml:ns:carddav"
    static let xml = ["Content-Type": "application/xml; charset=utf-8"]

    static func query(fullNameContains text: String) -> Data {
        Data("""
            <c:addressbook-query xmlns:d="DAV:" xmlns:c="\(carddav)"><d:prop><d:getetag/><c:address-data/></d:prop>\
            <c:filter><c:prop-filter name="FN"><c:text-match collation="i;unicode-casemap" match-type="contains">\(text)\
            </c:text-match></c:prop-filter></c:filter></c:addressbook-query>
            """.utf8)
    }

    // MARK: addressbook-query on a card (RFC 6352 §8.6)

    @Test func addressbookQueryOnACardAnswersTheCardWhenItMatchesAndNothingWhenNot() async throws {
        try await TestServer.with { server in
            _ = try await DAVFlowTests.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            _ = try await DAVFlowTests.put(server, "alan.vcf", uid: "alan-1", fullName: "Alan Turing")
            let card = Self.book + "ada.vcf"
            for depth: String? in ["0", nil] {
                let headers = depth.map { Self.xml.merging(["Depth": $0]) { $1 } } ?? Self.xml
                let hit = try await server.request("REPORT", card, headers: headers, body: Self.query(fullNameContains: "lovelace"))
                #expect(hit.status == 207, "Depth \(depth ?? "absent"): \(hit.text)")
                let responses = try hit.xml().responsesByHref
                #expect(Array(responses.keys) == [card])
                #expect(responses[card]?.property(Self.carddav, "address-data")?.text.contains("UID:ada-1") == true)

                let miss = try await server.request("REPORT", card, headers: headers, body: Self.query(fullNameContains: "turing"))
                #expect(miss.status == 207, "Depth \(depth ?? "absent"): \(miss.text)")
                #expect(try miss.xml().children("DAV:", "response").isEmpty, "\(miss.text)")
            }
            // The card's ETag in the answer is the one GET gives.
            let get = try await server.request("GET", card)
            let hit = try await server.request("REPORT", card, headers: Self.xml.merging(["Depth": "0"]) { $1 },
                                               body: Self.query(fullNameContains: "ada"))
            #expect(try hit.xml().responsesByHref[card]?.property("DAV:", "getetag")?.text == get.headers["etag"])
            // Someone else's card stays invisible.
            #expect(try await server.request("REPORT", card, user: "bob", headers: Self.xml,
                                             body: Self.query(fullNameContains: "ada")).status == 404)
        }
    }

    // MARK: getcontentlength of a book (RFC 4918 §15.4)

    /// The book's `getcontentlength` as a Depth 0 PROPFIND answers it, asked by name or by allprop.
    static func contentLength(_ server: TestServer, _ path: String, allprop: Bool = false) async throws -> String? {
        let body = allprop ? #"<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>"#
            : #"<d:propfind xmlns:d="DAV:"><d:prop><d:getcontentlength/></d:prop></d:propfind>"#
        let response = try await server.request("PROPFIND", path, headers: ["Depth": "0"], body: Data(body.utf8))
        #expect(response.status == 207, "\(response.text)")
        return try response.xml().responsesByHref[path]?.property("DAV:", "getcontentlength")?.text
    }

    @Test func aBooksContentLengthIsTheLengthItsGetSends() async throws {
        try await TestServer.with { server in
            #expect(try await Self.contentLength(server, Self.book) == "0")
            _ = try await DAVFlowTests.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            // A card stored without its last line break gets one in the book's document.
            let bare = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:bare\r\nFN:Bare End\r\nN:End;Bare;;;\r\nEND:VCARD"
            let book = try #require(try await server.store.collection(owner: "alice", path: ["default"]))
            try await server.store.importCards(collectionID: book.id, cards: [
                CardImport(name: "bare.vcf", data: Data(bare.utf8),
                           card: CardMetadata(uid: "bare", kind: "individual", indexEntries: [], members: [])),
            ], batchSize: 10, progress: nil)

            let get = try await server.request("GET", Self.book)
            #expect(get.status == 200)
            #expect(get.text.hasSuffix(bare + "\r\n"))
            let length = try #require(get.headers["content-length"])
            #expect(length == String(get.body.count))
            #expect(length == String(DAVFlowTests.card(uid: "ada-1", name: "Ada Lovelace").count + bare.utf8.count + 2))
            #expect(try await Self.contentLength(server, Self.book) == length)
            #expect(try await Self.contentLength(server, Self.book, allprop: true) == length)
            // The home's listing says the same.
            let home = try await server.request("PROPFIND", "/dav/addressbooks/alice/", headers: ["Depth": "1"],
                                                body: Data(#"<d:propfind xmlns:d="DAV:"><d:prop><d:getcontentlength/></d:prop></d:propfind>"#.utf8))
            #expect(try home.xml().responsesByHref[Self.book]?.property("DAV:", "getcontentlength")?.text == length)
        }
    }

    @Test func aBookStreamedWithoutALengthHasNoContentLength() async throws {
        try await TestServer.with { server in
            try await StreamedResponseTests.importCards(4_000, into: server.store) // some 340 KB, more than a 256 KB chunk
            let get = try await server.request("GET", Self.book)
            #expect(get.status == 200 && get.headers["content-length"] == nil && get.headers["transfer-encoding"] == "chunked")
            let response = try await server.request("PROPFIND", Self.book, headers: ["Depth": "0"], body: Data("""
                <d:propfind xmlns:d="DAV:"><d:prop><d:getcontentlength/><d:displayname/></d:prop></d:propfind>
                """.utf8))
            #expect(response.status == 207)
            let found = try #require(try response.xml().responsesByHref[Self.book])
            let absent = found.children("DAV:", "propstat").first { $0.child("DAV:", "status")?.text.contains(" 404 ") == true }
            #expect(absent?.child("DAV:", "prop")?.child("DAV:", "getcontentlength") != nil, "\(response.text)")
        }
    }

    // MARK: Bodies asking for two answers

    @Test func aPropfindWithTwoOfPropAllpropAndPropnameIs400() async throws {
        try await TestServer.with { server in
            let bodies = [
                "<d:allprop/><d:propname/>", "<d:propname/><d:allprop/>", "<d:prop><d:getetag/></d:prop><d:allprop/>",
                "<d:propname/><d:prop><d:getetag/></d:prop>", "<d:prop><d:getetag/></d:prop><d:prop><d:displayname/></d:prop>",
            ]
            for inner in bodies {
                let response = try await server.request("PROPFIND", Self.book, headers: ["Depth": "0"],
                                                        body: Data(#"<d:propfind xmlns:d="DAV:">\#(inner)</d:propfind>"#.utf8))
                #expect(response.status == 400, "\(inner): \(response.text)")
                #expect(!response.text.contains("multistatus"), "\(inner)")
            }
            let one = try await server.request("PROPFIND", Self.book, headers: ["Depth": "0"], body: Data("""
                <d:propfind xmlns:d="DAV:"><d:allprop/><d:include><d:current-user-privilege-set/></d:include></d:propfind>
                """.utf8))
            #expect(one.status == 207)
        }
    }

    @Test func anACLPrincipalPropSetWithTwoPropsIs400() async throws {
        try await TestServer.with { server in
            func report(_ inner: String) async throws -> CurlResult {
                try await server.request("REPORT", Self.book, headers: Self.xml.merging(["Depth": "0"]) { $1 }, body: Data("""
                    <d:acl-principal-prop-set xmlns:d="DAV:">\(inner)</d:acl-principal-prop-set>
                    """.utf8))
            }
            let two = try await report("<d:prop><d:displayname/></d:prop><d:prop><d:principal-URL/></d:prop>")
            #expect(two.status == 400, "\(two.text)")
            let one = try await report("<d:prop><d:displayname/></d:prop>")
            #expect(one.status == 207, "\(one.text)")
            #expect(try one.xml().responsesByHref["/dav/principals/alice/"] != nil)
        }
    }

    // MARK: xml:lang of dead properties (RFC 4918 §4.3)

    @Test func aDeadPropertyComesBackWithTheXMLLangItWasSetUnder() async throws {
        try await TestServer.with { server in
            _ = try await DAVFlowTests.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            // Its own, or the prop's, the set's or the root's; xml:lang="" says none.
            let update = Data("""
                <d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x" xml:lang="en"><d:set><d:prop>\
                <x:own xml:lang="fr">bonjour</x:own><x:root>hello</x:root><x:none xml:lang="">-</x:none></d:prop></d:set>\
                <d:set xml:lang="de"><d:prop><x:set>hallo</x:set></d:prop></d:set>\
                <d:set><d:prop xml:lang="it"><x:prop>ciao <x:b xml:lang="la">salve</x:b></x:prop></d:prop></d:set>\
                </d:propertyupdate>
                """.utf8)
            let expected: [String: String?] = ["own": "fr", "root": "en", "none": nil, "set": "de", "prop": "it"]
            let names = expected.keys.sorted().map { "<x:\($0)/>" }.joined()
            for path in [Self.book, Self.book + "ada.vcf"] {
                let patch = try await server.request("PROPPATCH", path, headers: Self.xml, body: update)
                #expect(patch.status == 207, "\(patch.text)")
                for body in [#"<d:propfind xmlns:d="DAV:" xmlns:x="urn:x"><d:prop>\#(names)</d:prop></d:propfind>"#,
                             #"<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>"#] {
                    let found = try await server.request("PROPFIND", path, headers: ["Depth": "0"], body: Data(body.utf8))
                    let response = try #require(try found.xml().responsesByHref[path])
                    for (name, language) in expected {
                        let property = try #require(response.property("urn:x", name), "\(path) \(name): \(found.text)")
                        #expect(property.attribute("lang", namespace: XMLNamespace.xml) == language, "\(path) \(name): \(found.text)")
                    }
                    #expect(response.property("urn:x", "prop")?.child("urn:x", "b")?.attribute("lang", namespace: XMLNamespace.xml) == "la")
                }
            }
            // The card keeps them when it moves.
            let move = try await server.request("MOVE", Self.book + "ada.vcf", headers: ["Destination": Self.book + "moved.vcf"])
            #expect(move.status == 201)
            let moved = try await server.request("PROPFIND", Self.book + "moved.vcf", headers: ["Depth": "0"],
                                                 body: Data(#"<d:propfind xmlns:d="DAV:" xmlns:x="urn:x"><d:prop><x:set/></d:prop></d:propfind>"#.utf8))
            #expect(try moved.xml().responsesByHref[Self.book + "moved.vcf"]?.property("urn:x", "set")?
                .attribute("lang", namespace: XMLNamespace.xml) == "de")
        }
    }
}
