import Foundation
import RoloServer
import RoloStore
import Testing

/// `directory = gateway` (issue 32): the directory of a large organisation is searched
/// through each user's directory gateway with addressbook-query (under
/// `directory_query_limit`), and nothing else: not in the home's listing, not read card by
/// card, not synced, not written.
@Suite struct DirectoryGatewayHTTPTests {
    static let gateway = "/dav/addressbooks/alice/directory~rolo/"

    static func query(_ text: String, property: String = "FN") -> Data {
        Data("""
            <?xml version="1.0"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
            <d:prop><d:getetag/><c:address-data/></d:prop><c:filter><c:prop-filter name="\(property)">\
            <c:text-match match-type="contains">\(text)</c:text-match></c:prop-filter></c:filter></c:addressbook-query>
            """.utf8)
    }

    @Test func theDirectoryIsSearchedThroughTheGatewayAndNeitherListedNorSynced() async throws {
        try await TestServer.with(configure: { $0.directory = .gateway; $0.directoryQueryLimit = 1 }) { server in
            // The server's rebuild at start: alice's and bob's cards (their names as FN).
            var cards = 0
            for _ in 0..<200 {
                if let book = try await server.store.collection(owner: DirectoryRules.owner, path: [DirectoryRules.book]) {
                    cards = try await server.store.listResources(collectionID: book.id).count
                    if cards == 2 { break }
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(cards == 2)

            let principal = try await server.request("PROPFIND", "/dav/principals/alice/", headers: ["Depth": "0"], body: Data("""
                <?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
                <d:prop><c:directory-gateway/></d:prop></d:propfind>
                """.utf8))
            #expect(principal.text.contains("<d:href>\(Self.gateway)</d:href>"), "\(principal.text)")

            let bob = try await server.request("REPORT", Self.gateway, headers: ["Content-Type": "application/xml", "Depth": "1"],
                                               body: Self.query("bob"))
            #expect(bob.status == 207 && bob.text.contains("\(Self.gateway)bob.vcf") && bob.text.contains("FN:bob")
                    && !bob.text.contains("alice.vcf"), "\(bob.text)")
            // Both match, the limit is one: one card and number-of-matches-within-limits.
            let both = try await server.request("REPORT", Self.gateway, headers: ["Content-Type": "application/xml", "Depth": "1"],
                                                body: Self.query("rolo-directory-", property: "UID"))
            #expect(both.status == 207 && both.text.contains("number-of-matches-within-limits")
                    && both.text.components(separatedBy: "FN:").count == 2, "\(both.text)")

            // Not listed in the home, not listable, readable, syncable or writable.
            let home = try await server.request("PROPFIND", "/dav/addressbooks/alice/", headers: ["Depth": "1"])
            #expect(home.status == 207 && !home.text.contains("directory"), "\(home.text)")
            #expect(try await server.request("PROPFIND", Self.gateway, headers: ["Depth": "1"]).status == 403)
            #expect(try await server.request("PROPFIND", Self.gateway, headers: ["Depth": "0"]).status == 403)
            #expect(try await server.request("GET", Self.gateway + "bob.vcf").status == 403)
            let sync = try await server.request("REPORT", Self.gateway, headers: ["Content-Type": "application/xml"], body: Data("""
                <?xml version="1.0"?><d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:sync-level>1</d:sync-level>\
                <d:prop><d:getetag/></d:prop></d:sync-collection>
                """.utf8))
            #expect(sync.status == 403 && !sync.text.contains("bob.vcf"), "\(sync.text)")
            let multiget = try await server.request("REPORT", Self.gateway, headers: ["Content-Type": "application/xml"], body: Data("""
                <?xml version="1.0"?><c:addressbook-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
                <d:prop><c:address-data/></d:prop><d:href>\(Self.gateway)bob.vcf</d:href></c:addressbook-multiget>
                """.utf8))
            #expect(multiget.status == 403 && !multiget.text.contains("FN:bob"), "\(multiget.text)")
            let put = try await server.request("PUT", Self.gateway + "x.vcf", headers: ["Content-Type": "text/vcard"],
                                               body: Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:x\r\nFN:X\r\nEND:VCARD\r\n".utf8))
            #expect(put.status == 403)
            #expect(try await server.request("DELETE", Self.gateway + "bob.vcf").status == 403)
            // No share was made: nobody has it mounted.
            let book = try #require(try await server.store.collection(owner: DirectoryRules.owner, path: [DirectoryRules.book]))
            #expect(try await server.store.shares(bookID: book.id).isEmpty)
        }
    }
}
