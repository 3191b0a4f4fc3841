import Foundation
import RoloStore
import Testing

/// RFC 3744 principal reports through real HTTP on SQLite: finding a sharee by name or
/// e-mail (and nothing more of them), who may search, who may read a shared book's ACL
/// principals, and principal-match.
@Suite struct PrincipalReportsHTTPTests {
    static let xml = ["Content-Type": "application/xml; charset=utf-8", "Depth": "0"]
    static let aliceBook = "/dav/addressbooks/alice/default/"
    static let mount = "/dav/addressbooks/bob/default~alice/"

    static func search(prop: String, match: String) -> Data {
        Data("""
            <?xml version="1.0"?><d:principal-property-search xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/" \
            xmlns:card="urn:ietf:params:xml:ns:carddav" test="anyof"><d:property-search><d:prop>\(prop)</d:prop>\
            <d:match>\(match)</d:match></d:property-search><d:prop><d:displayname/><cs:email-address-set/>\
            <card:addressbook-home-set/></d:prop></d:principal-property-search>
            """.utf8)
    }

    static let aclPrincipals = Data("""
        <?xml version="1.0"?><d:acl-principal-prop-set xmlns:d="DAV:"><d:prop><d:displayname/><d:principal-URL/>\
        </d:prop></d:acl-principal-prop-set>
        """.utf8)

    static func withNames(_ body: (TestServer) async throws -> Void) async throws {
        try await TestServer.with { server in
            try await server.store.updateAccount(name: "alice", UserAccountUpdate(displayName: "Alice Liddell",
                                                                                  email: "alice@wonderland.test"))
            try await server.store.updateAccount(name: "bob", UserAccountUpdate(displayName: "Bob Builder"))
            try await body(server)
        }
    }

    /// The text of each `<d:response>` of a multistatus, keyed by its href.
    static func responses(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for chunk in text.components(separatedBy: "<d:response>").dropFirst() {
            guard let start = chunk.range(of: "<d:href>"), let end = chunk.range(of: "</d:href>") else { continue }
            result[String(chunk[start.upperBound..<end.lowerBound])] = chunk
        }
        return result
    }

    @Test func bobFindsAliceByNameWithHerDisplayNameAndNothingMore() async throws {
        try await Self.withNames { server in
            let found = try await server.request("REPORT", "/dav/principals/", user: "bob", headers: Self.xml,
                                                 body: Self.search(prop: "<d:displayname/>", match: "ali"))
            #expect(found.status == 207, "\(found.text)")
            let responses = Self.responses(found.text)
            #expect(Set(responses.keys) == ["/dav/principals/alice/"], "\(found.text)")
            let alice = try #require(responses["/dav/principals/alice/"])
            #expect(alice.contains("<d:displayname>Alice Liddell</d:displayname>"))
            // Her home is not revealed: 404 propstat, no href to it anywhere.
            #expect(!found.text.contains("/dav/addressbooks/alice/"))
            #expect(alice.contains("404"))
            // PROPFIND of her principal is still 404 for bob.
            let propfind = try await server.request("PROPFIND", "/dav/principals/alice/", user: "bob", headers: ["Depth": "0"])
            #expect(propfind.status == 404)
            // The display name matches too, case-insensitively.
            let byDisplayName = try await server.request("REPORT", "/dav/principals/", user: "alice", headers: Self.xml,
                                                         body: Self.search(prop: "<d:displayname/>", match: "BUILDER"))
            #expect(Set(Self.responses(byDisplayName.text).keys) == ["/dav/principals/bob/"])
            #expect(byDisplayName.text.contains("Bob Builder"))
        }
    }

    @Test func searchByEmail() async throws {
        try await Self.withNames { server in
            let found = try await server.request("REPORT", "/dav/principals/", user: "bob", headers: Self.xml,
                                                 body: Self.search(prop: "<cs:email-address-set/>", match: "wonderland"))
            #expect(found.status == 207)
            let alice = try #require(Self.responses(found.text)["/dav/principals/alice/"], "\(found.text)")
            #expect(alice.contains("alice@wonderland.test"))
            let nobody = try await server.request("REPORT", "/dav/principals/", user: "bob", headers: Self.xml,
                                                  body: Self.search(prop: "<cs:email-address-set/>", match: "nowhere.test"))
            #expect(nobody.status == 207 && Self.responses(nobody.text).isEmpty)
        }
    }

    @Test func anAppPasswordMayNotSearchAndAnEmptyMatchIsRefused() async throws {
        try await Self.withNames { server in
            let phone = try await server.store.createAppPassword(user: "bob", name: "Phone", readOnly: false, books: nil)
            let refused = try await server.request("REPORT", "/dav/principals/", user: "bob", password: phone.secret,
                                                   headers: Self.xml, body: Self.search(prop: "<d:displayname/>", match: "ali"))
            #expect(refused.status == 403)
            #expect(!refused.text.contains("Alice Liddell"))
            // The same app password still reads its own principal.
            let own = try await server.request("PROPFIND", "/dav/principals/bob/", user: "bob", password: phone.secret,
                                               headers: ["Depth": "0"])
            #expect(own.status == 207)
            let empty = try await server.request("REPORT", "/dav/principals/", user: "bob", headers: Self.xml,
                                                 body: Self.search(prop: "<d:displayname/>", match: ""))
            #expect(empty.status == 400)
        }
    }

    @Test func theOwnerReadsTheACLPrincipalsAndTheShareeMayNot() async throws {
        try await Self.withNames { server in
            _ = try await server.store.shareBook(owner: "alice", book: "default", with: "bob", access: .readWrite, accepted: true)
            let owner = try await server.request("REPORT", Self.aliceBook, headers: Self.xml, body: Self.aclPrincipals)
            #expect(owner.status == 207, "\(owner.text)")
            let responses = Self.responses(owner.text)
            #expect(Set(responses.keys) == ["/dav/principals/alice/", "/dav/principals/bob/"])
            #expect(responses["/dav/principals/alice/"]?.contains("Alice Liddell") == true)
            #expect(responses["/dav/principals/bob/"]?.contains("Bob Builder") == true)
            #expect(responses["/dav/principals/bob/"]?.contains("<d:principal-URL><d:href>/dav/principals/bob/</d:href>") == true)

            let sharee = try await server.request("REPORT", Self.mount, user: "bob", headers: Self.xml, body: Self.aclPrincipals)
            #expect(sharee.status == 403)
            #expect(sharee.text.contains("need-privileges") && sharee.text.contains("<d:read-acl/>"), "\(sharee.text)")
            #expect(!sharee.text.contains("Alice Liddell"))
            // The owner's own path stays 404 for the sharee.
            #expect(try await server.request("REPORT", Self.aliceBook, user: "bob", headers: Self.xml,
                                             body: Self.aclPrincipals).status == 404)
        }
    }

    @Test func principalMatchSelfAnswersTheCurrentUserOnly() async throws {
        try await Self.withNames { server in
            let body = Data("""
                <?xml version="1.0"?><d:principal-match xmlns:d="DAV:"><d:self/><d:prop><d:displayname/></d:prop></d:principal-match>
                """.utf8)
            let match = try await server.request("REPORT", "/dav/principals/", user: "bob", headers: Self.xml, body: body)
            #expect(match.status == 207)
            let responses = Self.responses(match.text)
            #expect(Set(responses.keys) == ["/dav/principals/bob/"])
            #expect(responses["/dav/principals/bob/"]?.contains("Bob Builder") == true)

            // Owner through a mount: the cards belong to alice, so nothing names bob.
            _ = try await server.store.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: true)
            let card = Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ann\r\nFN:Ann\r\nN:Ann;;;;\r\nEND:VCARD\r\n".utf8)
            #expect(try await server.request("PUT", Self.aliceBook + "ann.vcf", headers: ["Content-Type": "text/vcard"],
                                             body: card).status == 201)
            let owned = Data("""
                <?xml version="1.0"?><d:principal-match xmlns:d="DAV:"><d:principal-property><d:owner/></d:principal-property></d:principal-match>
                """.utf8)
            let mine = try await server.request("REPORT", Self.aliceBook, headers: Self.xml, body: owned)
            #expect(Set(Self.responses(mine.text).keys) == [Self.aliceBook + "ann.vcf"], "\(mine.text)")
            let theirs = try await server.request("REPORT", Self.mount, user: "bob", headers: Self.xml, body: owned)
            #expect(theirs.status == 207 && Self.responses(theirs.text).isEmpty, "\(theirs.text)")
        }
    }
}
