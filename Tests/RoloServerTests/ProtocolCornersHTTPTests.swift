import DAVXML
import Foundation
import Testing
import VCard

/// The corners where the RFCs ask for one particular answer, each through real HTTP:
/// preconditions named in `DAV:error` bodies, GET of a book, the home and the principal,
/// resource names with any percent-encoded byte, COPY/MOVE of what is not the user's.
@Suite struct ProtocolCornersHTTPTests {
    static let book = "/dav/addressbooks/alice/default/"
    static let carddav = "urn:ietf:params:xml:ns:carddav"
    static let xml = ["Content-Type": "application/xml; charset=utf-8"]

    // MARK: Preconditions

    /// Each refusal below is an RFC precondition: 403 (409 for UNLOCK, RFC 4918 §9.11.1;
    /// 423 for locks, RFC 4918 §16) with a `DAV:error` body naming exactly that condition.
    @Test func preconditionFailuresNameTheirConditionInADAVErrorBody() async throws {
        try await TestServer.with { server in
            _ = try await DAVFlowTests.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            let dav = "DAV:"
            let cases: [(what: String, status: Int, condition: String, response: CurlResult)] = [
                ("duplicate UID", 403, "{\(Self.carddav)}no-uid-conflict",
                 try await server.request("PUT", Self.book + "other.vcf", headers: DAVFlowTests.vcardType,
                                          body: DAVFlowTests.card(uid: "ada-1", name: "Another Ada"))),
                ("vCard 2.1", 403, "{\(Self.carddav)}supported-address-data",
                 try await server.request("PUT", Self.book + "old.vcf", headers: DAVFlowTests.vcardType,
                                          body: Data("BEGIN:VCARD\r\nVERSION:2.1\r\nUID:o\r\nN:Old\r\nFN:Old\r\nEND:VCARD\r\n".utf8))),
                ("text/plain body", 403, "{\(Self.carddav)}supported-address-data",
                 try await server.request("PUT", Self.book + "plain.vcf", headers: ["Content-Type": "text/plain"],
                                          body: Data("hello".utf8))),
                ("not a vCard", 403, "{\(Self.carddav)}valid-address-data",
                 try await server.request("PUT", Self.book + "junk.vcf", headers: DAVFlowTests.vcardType, body: Data("hello".utf8))),
                ("Depth: infinity", 403, "{\(dav)}propfind-finite-depth",
                 try await server.request("PROPFIND", Self.book, headers: ["Depth": "infinity"])),
                ("unknown report", 403, "{\(dav)}supported-report",
                 try await server.request("REPORT", Self.book, headers: Self.xml, body: Data(#"<x:nothing xmlns:x="urn:x"/>"#.utf8))),
                ("stale sync token", 403, "{\(dav)}valid-sync-token",
                 try await server.request("REPORT", Self.book, headers: Self.xml, body: Data("""
                    <d:sync-collection xmlns:d="DAV:"><d:sync-token>http://example.com/not-ours</d:sync-token>\
                    <d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>
                    """.utf8))),
                ("unknown collation", 403, "{\(Self.carddav)}supported-collation",
                 try await server.request("REPORT", Self.book, headers: Self.xml, body: Data("""
                    <c:addressbook-query xmlns:d="DAV:" xmlns:c="\(Self.carddav)"><d:prop><d:getetag/></d:prop>\
                    <c:filter><c:prop-filter name="FN"><c:text-match collation="x;nope">a</c:text-match></c:prop-filter></c:filter>\
                    </c:addressbook-query>
                    """.utf8))),
                ("address book in an address book", 403, "{\(Self.carddav)}addressbook-collection-location-ok",
                 try await server.request("MKCOL", Self.book + "inner/")),
                ("DOCTYPE with an external entity", 403, "{\(dav)}no-external-entities",
                 try await server.request("PROPFIND", Self.book, headers: ["Depth": "0"], body: Data("""
                    <?xml version="1.0"?><!DOCTYPE d:propfind [<!ENTITY x SYSTEM "file:///etc/passwd">]>\
                    <d:propfind xmlns:d="DAV:"><d:prop><d:displayname>&x;</d:displayname></d:prop></d:propfind>
                    """.utf8))),
                ("UNLOCK with a token that is not the resource's", 409, "{\(dav)}lock-token-matches-request-uri",
                 try await server.request("UNLOCK", Self.book + "ada.vcf", headers: ["Lock-Token": "<urn:uuid:not-a-lock>"])),
            ]
            for (what, status, condition, response) in cases {
                #expect(response.status == status, "\(what): \(response.text)")
                #expect(response.headers["content-type"]?.hasPrefix("application/xml") == true, "\(what)")
                #expect(response.errorConditions == [condition], "\(what): \(response.text)")
            }
        }
    }

    // MARK: GET of a book, the home and the principal

    @Test func getOfABookIsEveryCardAsOneVCardStreamOrAJCardArray() async throws {
        try await TestServer.with { server in
            let empty = try await server.request("GET", Self.book)
            #expect(empty.status == 200)
            #expect(empty.headers["content-type"] == "text/vcard; charset=utf-8")
            #expect(empty.body.isEmpty)
            #expect(try await server.request("GET", Self.book, headers: ["Accept": "application/vcard+json"]).text == "[]\n")

            for (name, full) in [("ada", "Ada Lovelace"), ("alan", "Alan Turing"), ("grace", "Grace Hopper")] {
                _ = try await DAVFlowTests.put(server, name + ".vcf", uid: name + "-1", fullName: full)
            }
            let whole = try await server.request("GET", Self.book)
            #expect(whole.headers["vary"] == "Accept")
            #expect(whole.headers["content-length"] == String(whole.body.count))
            // The stored cards, byte for byte, in name order.
            #expect(whole.body == DAVFlowTests.card(uid: "ada-1", name: "Ada Lovelace") + DAVFlowTests.card(uid: "alan-1", name: "Alan Turing")
                + DAVFlowTests.card(uid: "grace-1", name: "Grace Hopper"))
            let json = try await server.request("GET", Self.book, headers: ["Accept": "application/vcard+json"])
            #expect(json.headers["content-type"] == "application/vcard+json")
            #expect(try JCard.decode([UInt8](json.body)).map { $0.first("FN")?.text } == ["Ada Lovelace", "Alan Turing", "Grace Hopper"])
            // (curl -I writes the head where the body would go: no card may follow it.)
            let head = try await server.request("HEAD", Self.book)
            #expect(head.status == 200 && !head.text.contains("BEGIN:VCARD"))
            #expect(head.headers["content-length"] == String(whole.body.count))

            // Bob sees nothing of alice's book.
            #expect(try await server.request("GET", Self.book, user: "bob").status == 404)
        }
    }

    @Test func getOfABookBiggerThanAChunkIsStreamedWhole() async throws {
        try await TestServer.with { server in
            let count = 4_000 // some 340 KB, more than a 256 KB chunk
            try await StreamedResponseTests.importCards(count, into: server.store)
            let text = try await server.request("GET", Self.book)
            #expect(text.status == 200)
            #expect(text.headers["transfer-encoding"] == "chunked")
            #expect(text.headers["content-length"] == nil)
            let cards = try VCardParser.parse([UInt8](text.body))
            #expect(Set(cards.compactMap { $0.first("UID")?.text }) == Set((0..<count).map { "card-\($0)" }))

            let json = try await server.request("GET", Self.book, headers: ["Accept": "application/vcard+json"])
            #expect(json.headers["transfer-encoding"] == "chunked")
            let jCards = try JCard.decode([UInt8](json.body))
            #expect(jCards.count == count)
            #expect(Set(jCards.compactMap { $0.first("UID")?.text }) == Set((0..<count).map { "card-\($0)" }))

            let head = try await server.request("HEAD", Self.book)
            #expect(head.status == 200 && !head.text.contains("BEGIN:VCARD"))
            #expect(head.headers["content-type"] == "text/vcard; charset=utf-8")
        }
    }

    @Test func getOfTheHomeAndThePrincipalNamesTheBooksAndURLs() async throws {
        try await TestServer.with { server in
            let mkcol = Data("""
                <d:mkcol xmlns:d="DAV:" xmlns:c="\(Self.carddav)"><d:set><d:prop>\
                <d:resourcetype><d:collection/><c:addressbook/></d:resourcetype><d:displayname>Work people</d:displayname>\
                </d:prop></d:set></d:mkcol>
                """.utf8)
            #expect(try await server.request("MKCOL", "/dav/addressbooks/alice/work/", headers: Self.xml, body: mkcol).status == 201)
            let home = try await server.request("GET", "/dav/addressbooks/alice/")
            #expect(home.status == 200)
            #expect(home.headers["content-type"] == "text/plain; charset=utf-8")
            #expect(home.text.contains("/dav/addressbooks/alice/default/"))
            #expect(home.text.contains("/dav/addressbooks/alice/work/  Work people"))
            let head = try await server.request("HEAD", "/dav/addressbooks/alice/")
            #expect(head.status == 200 && !head.text.contains("default/"))
            #expect(head.headers["content-length"] == String(home.body.count))

            for path in ["/dav/principals/alice/", "/dav/"] {
                let principal = try await server.request("GET", path)
                #expect(principal.status == 200, "\(path)")
                #expect(principal.text.contains("Principal: /dav/principals/alice/"), "\(path)")
                #expect(principal.text.contains("Address book home: /dav/addressbooks/alice/"), "\(path)")
            }
            #expect(try await server.request("GET", "/dav/principals/bob/").status == 404)
            #expect(try await server.request("GET", "/dav/addressbooks/bob/").status == 404)
        }
    }

    // MARK: Names with any percent-encoded byte

    /// Names as a client writes them in the URL; every one decodes to a name the store keeps
    /// exactly, and comes back in hrefs encoded the same way.
    static let encodedNames = ["a%0Ab.vcf", "tab%09x.vcf", "cr%0D.vcf", "del%7F.vcf", "pct%25.vcf", "sp%20ace.vcf",
                               "caf%C3%A9.vcf", "q%3Fh%23.vcf", "%01%1F.vcf"]

    @Test func namesWithAnyPercentEncodedByteWorkForEveryMethodAndComeBackTheSame() async throws {
        try await TestServer.with { server in
            // The first card's UID holds a line break, as the clients that name cards so have it.
            for (index, name) in Self.encodedNames.enumerated() {
                let uid = index == 0 ? "a\\nb" : "uid-\(index)"
                let card = Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:Card \(index)\r\nN:\(index);Card;;;\r\nEND:VCARD\r\n".utf8)
                let put = try await server.request("PUT", Self.book + name, headers: DAVFlowTests.vcardType, body: card)
                #expect(put.status == 201, "\(name)")
                let get = try await server.request("GET", Self.book + name)
                #expect(get.status == 200 && get.body == card, "\(name)")
            }
            let book = try #require(try await server.store.collection(owner: "alice", path: ["default"]))
            let stored = Set(try await server.store.listResources(collectionID: book.id).map(\.name))
            #expect(stored == Set(Self.encodedNames.map { $0.removingPercentEncoding! }))
            #expect(stored.contains("a\nb.vcf"))

            // PROPFIND and an initial sync list them under the same hrefs.
            let propfind = Data(#"<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>"#.utf8)
            let listing = try await server.request("PROPFIND", Self.book, headers: ["Depth": "1"], body: propfind)
            let expected = Set(Self.encodedNames.map { Self.book + $0 })
            #expect(Set(try listing.xml().responsesByHref.keys).subtracting([Self.book]) == expected)
            let sync = Data("""
                <d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>
                """.utf8)
            let initial = try await server.request("REPORT", Self.book, headers: Self.xml, body: sync)
            let initialXML = try initial.xml()
            #expect(Set(initialXML.responsesByHref.keys) == expected)
            let token = try #require(initialXML.child("DAV:", "sync-token")?.text)

            // A multiget by those hrefs finds every card.
            let hrefs = Self.encodedNames.map { "<d:href>\(Self.book)\($0)</d:href>" }.joined()
            let multiget = Data("""
                <c:addressbook-multiget xmlns:d="DAV:" xmlns:c="\(Self.carddav)"><d:prop><d:getetag/><c:address-data/></d:prop>\(hrefs)</c:addressbook-multiget>
                """.utf8)
            let found = try await server.request("REPORT", Self.book, headers: Self.xml.merging(["Depth": "0"]) { $1 }, body: multiget)
            let responses = try found.xml().responsesByHref
            #expect(Set(responses.keys) == expected)
            #expect(responses.values.allSatisfy { $0.property(Self.carddav, "address-data") != nil })
            #expect(responses[Self.book + "a%0Ab.vcf"]?.property(Self.carddav, "address-data")?.text.contains("UID:a\\nb") == true)

            // MOVE to another such name, DELETE one: the sync reports both under their hrefs.
            let move = try await server.request("MOVE", Self.book + "a%0Ab.vcf",
                                                headers: ["Destination": "http://127.0.0.1:\(server.port)\(Self.book)moved%0A%09.vcf"])
            #expect(move.status == 201)
            #expect(try await server.request("GET", Self.book + "a%0Ab.vcf").status == 404)
            #expect(try await server.request("GET", Self.book + "moved%0A%09.vcf").status == 200)
            #expect(try await server.request("DELETE", Self.book + "pct%25.vcf").status == 204)
            let changes = try await server.request("REPORT", Self.book, headers: Self.xml, body: Data("""
                <d:sync-collection xmlns:d="DAV:"><d:sync-token>\(token)</d:sync-token><d:sync-level>1</d:sync-level>\
                <d:prop><d:getetag/></d:prop></d:sync-collection>
                """.utf8))
            let changed = try changes.xml().responsesByHref
            #expect(Set(changed.keys) == [Self.book + "a%0Ab.vcf", Self.book + "moved%0A%09.vcf", Self.book + "pct%25.vcf"])
            #expect(changed[Self.book + "pct%25.vcf"]?.child("DAV:", "status")?.text.contains("404") == true)
        }
    }

    @Test func encodedSlashNULAndBytesThatAreNotUTF8AreRefusedWith400() async throws {
        try await TestServer.with { server in
            for name in ["a%2Fb.vcf", "a%2fb.vcf", "nul%00.vcf", "bad%FF.vcf", "half%C3.vcf", "short%4.vcf"] {
                let put = try await server.request("PUT", Self.book + name, headers: DAVFlowTests.vcardType,
                                                   body: DAVFlowTests.card(uid: name, name: "X"))
                #expect(put.status == 400, "\(name)")
                #expect(try await server.request("GET", Self.book + name).status == 400, "\(name)")
            }
        }
    }

    // MARK: COPY and MOVE of what is not the user's

    @Test func copyAndMoveOfTheRootHomeOrPrincipalAre403() async throws {
        try await TestServer.with { server in
            let sources = ["/", "/dav/", "/dav/principals/", "/dav/principals/alice/", "/dav/addressbooks/", "/dav/addressbooks/alice/"]
            let destinations = ["/dav/addressbooks/alice/copy/", "http://elsewhere.example/dav/x/", "/not-dav/x/", "/dav/"]
            for method in ["COPY", "MOVE"] {
                for source in sources {
                    for destination in destinations {
                        let response = try await server.request(method, source, headers: ["Destination": destination])
                        #expect(response.status == 403, "\(method) \(source) -> \(destination): \(response.status)")
                    }
                }
            }
            #expect(try await server.request("PROPFIND", "/dav/addressbooks/alice/copy/", headers: ["Depth": "0"]).status == 404)
        }
    }
}
