import Foundation
import Testing

/// Whole CardDAV exchanges through the real server, store and engine, as clients make them.
@Suite struct DAVFlowTests {
    static let book = "/dav/addressbooks/alice/default/"

    static func card(uid: String, name: String, email: String = "someone@example.com") -> Data {
        Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(name)\r\nN:\(name);;;;\r\nEMAIL;TYPE=INTERNET:\(email)\r\nEND:VCARD\r\n".utf8)
    }

    static let vcardType = ["Content-Type": "text/vcard; charset=utf-8"]

    static func put(_ server: TestServer, _ name: String, uid: String, fullName: String) async throws -> CurlResult {
        try await server.request("PUT", book + name, headers: vcardType.merging(["If-None-Match": "*"]) { $1 },
                                 body: card(uid: uid, name: fullName))
    }

    @Test func putThenGetReturnsTheExactBytesAndETag() async throws {
        try await TestServer.with { server in
            let put = try await Self.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            #expect(put.status == 201)
            let etag = try #require(put.headers["etag"])
            let get = try await server.request("GET", Self.book + "ada.vcf")
            #expect(get.status == 200)
            #expect(get.body == Self.card(uid: "ada-1", name: "Ada Lovelace"))
            #expect(get.headers["etag"] == etag)
            #expect(get.headers["content-type"]?.hasPrefix("text/vcard") == true)
        }
    }

    @Test func putWithStaleIfMatchIsRefusedAndChangesNothing() async throws {
        try await TestServer.with { server in
            _ = try await Self.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            let stale = try await server.request(
                "PUT", Self.book + "ada.vcf", headers: Self.vcardType.merging(["If-Match": "\"not-the-etag\""]) { $1 },
                body: Self.card(uid: "ada-1", name: "Changed"))
            #expect(stale.status == 412)
            let get = try await server.request("GET", Self.book + "ada.vcf")
            #expect(get.text.contains("FN:Ada Lovelace"))
        }
    }

    @Test func propfindDepthOneListsTheCardWithItsETag() async throws {
        try await TestServer.with { server in
            let put = try await Self.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            let body = Data("""
                <?xml version="1.0" encoding="utf-8"?>
                <d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:resourcetype/></d:prop></d:propfind>
                """.utf8)
            let response = try await server.request("PROPFIND", Self.book,
                                                    headers: ["Depth": "1", "Content-Type": "application/xml"], body: body)
            #expect(response.status == 207)
            #expect(response.text.contains(Self.book + "ada.vcf"))
            #expect(response.text.contains("addressbook"))
            if let etag = put.headers["etag"] {
                #expect(response.text.contains(etag.replacingOccurrences(of: "\"", with: "&quot;")) || response.text.contains(etag))
            }
        }
    }

    @Test func multigetReturnsAddressDataOfRequestedCards() async throws {
        try await TestServer.with { server in
            _ = try await Self.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            _ = try await Self.put(server, "alan.vcf", uid: "alan-1", fullName: "Alan Turing")
            let body = Data("""
                <?xml version="1.0" encoding="utf-8"?>
                <c:addressbook-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">
                <d:prop><d:getetag/><c:address-data/></d:prop>
                <d:href>\(Self.book)ada.vcf</d:href><d:href>\(Self.book)missing.vcf</d:href>
                </c:addressbook-multiget>
                """.utf8)
            let response = try await server.request("REPORT", Self.book,
                                                    headers: ["Depth": "1", "Content-Type": "application/xml"], body: body)
            #expect(response.status == 207)
            #expect(response.text.contains("FN:Ada Lovelace"))
            #expect(!response.text.contains("Alan Turing"))
            #expect(response.text.contains("404"))
        }
    }

    @Test func syncCollectionReportsChangesAndDeletionsSinceAToken() async throws {
        try await TestServer.with { server in
            _ = try await Self.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            let initial = try await Self.syncCollection(server, token: "")
            #expect(initial.status == 207)
            #expect(initial.text.contains("ada.vcf"))
            let token = try #require(Self.syncToken(in: initial.text))

            _ = try await Self.put(server, "alan.vcf", uid: "alan-1", fullName: "Alan Turing")
            let deleted = try await server.request("DELETE", Self.book + "ada.vcf")
            #expect(deleted.status == 204)

            let delta = try await Self.syncCollection(server, token: token)
            #expect(delta.status == 207)
            #expect(delta.text.contains("alan.vcf"))
            #expect(delta.text.contains("ada.vcf"))
            #expect(delta.text.contains("404"))
            #expect(Self.syncToken(in: delta.text) != token)
        }
    }

    @Test func addressbookQueryFindsCardsByEmail() async throws {
        try await TestServer.with { server in
            _ = try await server.request("PUT", Self.book + "ada.vcf", headers: Self.vcardType,
                                         body: Self.card(uid: "ada-1", name: "Ada Lovelace", email: "ada@engine.org"))
            _ = try await server.request("PUT", Self.book + "alan.vcf", headers: Self.vcardType,
                                         body: Self.card(uid: "alan-1", name: "Alan Turing", email: "alan@bletchley.uk"))
            let body = Data("""
                <?xml version="1.0" encoding="utf-8"?>
                <c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">
                <d:prop><d:getetag/></d:prop>
                <c:filter><c:prop-filter name="EMAIL"><c:text-match collation="i;unicode-casemap" match-type="contains">ENGINE</c:text-match></c:prop-filter></c:filter>
                </c:addressbook-query>
                """.utf8)
            let response = try await server.request("REPORT", Self.book,
                                                    headers: ["Depth": "1", "Content-Type": "application/xml"], body: body)
            #expect(response.status == 207)
            #expect(response.text.contains("ada.vcf"))
            #expect(!response.text.contains("alan.vcf"))
        }
    }

    @Test func mkcolPropPatchAndDeleteOfAnAddressBook() async throws {
        try await TestServer.with { server in
            let mkcol = Data("""
                <?xml version="1.0" encoding="utf-8"?>
                <d:mkcol xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:set><d:prop>
                <d:resourcetype><d:collection/><c:addressbook/></d:resourcetype><d:displayname>Work</d:displayname>
                </d:prop></d:set></d:mkcol>
                """.utf8)
            let created = try await server.request("MKCOL", "/dav/addressbooks/alice/work/",
                                                   headers: ["Content-Type": "application/xml"], body: mkcol)
            #expect(created.status == 201)

            let patch = Data("""
                <?xml version="1.0" encoding="utf-8"?>
                <d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:displayname>Office</d:displayname></d:prop></d:set></d:propertyupdate>
                """.utf8)
            let patched = try await server.request("PROPPATCH", "/dav/addressbooks/alice/work/",
                                                   headers: ["Content-Type": "application/xml"], body: patch)
            #expect(patched.status == 207)
            #expect(patched.text.contains("200"))

            let find = Data("""
                <?xml version="1.0" encoding="utf-8"?>
                <d:propfind xmlns:d="DAV:"><d:prop><d:displayname/></d:prop></d:propfind>
                """.utf8)
            let listed = try await server.request("PROPFIND", "/dav/addressbooks/alice/work/",
                                                  headers: ["Depth": "0", "Content-Type": "application/xml"], body: find)
            #expect(listed.text.contains("Office"))

            let deleted = try await server.request("DELETE", "/dav/addressbooks/alice/work/")
            #expect(deleted.status == 204 || deleted.status == 200)
            let gone = try await server.request("PROPFIND", "/dav/addressbooks/alice/work/", headers: ["Depth": "0"])
            #expect(gone.status == 404)
        }
    }

    /// Another user's tree does not exist for bob (Docs/sharing.md): 404 for every method, never 403.
    @Test func bobCannotReadOrWriteAlicesBook() async throws {
        try await TestServer.with { server in
            _ = try await Self.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            let get = try await server.request("GET", Self.book + "ada.vcf", user: "bob")
            #expect(get.status == 404)
            #expect(!get.text.contains("Lovelace"))

            let find = try await server.request("PROPFIND", Self.book, user: "bob", headers: ["Depth": "1"])
            #expect(find.status == 404)
            #expect(!find.text.contains("ada.vcf"))

            let put = try await server.request("PUT", Self.book + "evil.vcf", user: "bob", headers: Self.vcardType,
                                               body: Self.card(uid: "evil", name: "Evil"))
            #expect(put.status == 404)
            let delete = try await server.request("DELETE", Self.book + "ada.vcf", user: "bob")
            #expect(delete.status == 404)
            let still = try await server.request("GET", Self.book + "ada.vcf")
            #expect(still.status == 200)
        }
    }

    @Test func optionsAdvertisesAddressbookSupport() async throws {
        try await TestServer.with { server in
            let response = try await server.request("OPTIONS", Self.book, user: nil)
            #expect(response.status == 200 || response.status == 204)
            #expect(response.headers["dav"]?.contains("addressbook") == true)
            #expect(response.headers["allow"]?.contains("PROPFIND") == true)
        }
    }

    @Test func headReturnsHeadersWithoutBody() async throws {
        try await TestServer.with { server in
            _ = try await Self.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            let get = try await server.request("GET", Self.book + "ada.vcf")
            let head = try await server.request("HEAD", Self.book + "ada.vcf")
            #expect(head.status == 200)
            #expect(head.headers["etag"] == get.headers["etag"])
            #expect(head.headers["content-length"] == String(get.body.count))
        }
    }

    static func syncCollection(_ server: TestServer, token: String) async throws -> CurlResult {
        let body = Data("""
            <?xml version="1.0" encoding="utf-8"?>
            <d:sync-collection xmlns:d="DAV:"><d:sync-token>\(token)</d:sync-token><d:sync-level>1</d:sync-level>
            <d:prop><d:getetag/></d:prop></d:sync-collection>
            """.utf8)
        return try await server.request("REPORT", book, headers: ["Content-Type": "application/xml"], body: body)
    }

    static func syncToken(in xml: String) -> String? {
        guard let range = xml.range(of: #"<[A-Za-z0-9]*:?sync-token>([^<]+)</"#, options: .regularExpression) else { return nil }
        let element = String(xml[range])
        guard let start = element.firstIndex(of: ">") else { return nil }
        return String(element[element.index(after: start)...].dropLast(2))
    }
}
