import Foundation
import RoloTesting
import Testing

/// `deterministic: true` (`rolo serve --deterministic`): two servers started with the same
/// fixtures and sent the same requests answer with the same ETags, sync tokens, dates and
/// lock tokens, byte for byte.
@Suite struct DeterminismTests {
    static let propfind = """
        <?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/>\
        <d:getlastmodified/><d:creationdate/><d:sync-token/></d:prop></d:propfind>
        """
    static let syncCollection = """
        <?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:"><d:sync-token/>\
        <d:sync-level>1</d:sync-level><d:prop><d:getetag/><d:getlastmodified/></d:prop></d:sync-collection>
        """
    static let lockInfo = """
        <?xml version="1.0" encoding="utf-8"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope>\
        <d:locktype><d:write/></d:locktype><d:owner>harness</d:owner></d:lockinfo>
        """
    static let newCard = "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:new\r\nFN:New Person\r\nEND:VCARD\r\n"
    static let changedAda = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ada\r\nFN:Ada King\r\nN:King;Ada;;;\r\nEND:VCARD\r\n"

    /// The same writes and reads against one server; returns every answer that a recorded
    /// expectation would hold (headers and bodies, without the wall-clock `Date` header).
    static func transcript(_ server: RoloTestServer) async throws -> [String] {
        var lines: [String] = []
        let vcard = ["Content-Type": "text/vcard; charset=utf-8"]
        let created = try await server.send("PUT", "addressbooks/alice/default/new.vcf", headers: vcard, body: newCard)
        lines.append("PUT new \(created.status) \(created.header("ETag") ?? "-")")
        let changed = try await server.send("PUT", "addressbooks/alice/default/ada.vcf", headers: vcard, body: changedAda)
        lines.append("PUT ada \(changed.status) \(changed.header("ETag") ?? "-")")
        let deleted = try await server.send("DELETE", "addressbooks/alice/work/alan.vcf")
        lines.append("DELETE \(deleted.status)")
        for book in ["default", "work"] {
            let listing = try await server.send("PROPFIND", "addressbooks/alice/\(book)/", headers: ["Depth": "1"],
                                                body: propfind)
            lines.append("PROPFIND \(book) \(listing.status) \(listing.text)")
            let sync = try await server.send("REPORT", "addressbooks/alice/\(book)/", headers: ["Depth": "0"],
                                             body: syncCollection)
            lines.append("REPORT \(book) \(sync.status) \(sync.text)")
        }
        let get = try await server.send("GET", "addressbooks/alice/default/ada.vcf")
        lines.append("GET \(get.header("ETag") ?? "-") \(get.header("Last-Modified") ?? "-")")
        let lock = try await server.send("LOCK", "addressbooks/alice/default/new.vcf", headers: ["Timeout": "Second-600"],
                                         body: lockInfo)
        lines.append("LOCK \(lock.status) \(lock.header("Lock-Token") ?? "-") \(lock.text)")
        return lines
    }

    @Test func twoDeterministicServersAnswerByteForByte() async throws {
        let folder = try FixtureFolder.sample()
        defer { folder.remove() }
        let options = RoloTestServer.Options(fixtures: [folder.path], deterministic: true)
        let first = try await withRoloServer(options) { try await Self.transcript($0) }
        let second = try await withRoloServer(options) { try await Self.transcript($0) }
        #expect(first.count == 9)
        for (one, other) in zip(first, second) { #expect(one == other) }

        let all = first.joined(separator: "\n")
        #expect(all.contains("PUT new 201 \""))
        #expect(all.contains("PUT ada 204 \"") && all.contains("DELETE 204"))
        #expect(first[3].hasPrefix("PROPFIND default 207") && first[4].hasPrefix("REPORT default 207"))
        #expect(all.contains("<d:getlastmodified>Wed, 01 Jan 2020 00:00:00 GMT</d:getlastmodified>"))
        #expect(all.contains("http://rolo.invalid/sync/"))
        #expect(all.contains("LOCK 200 <urn:uuid:00000000-0000-4000-8000-000000000001>"))
        #expect(first[7].hasPrefix("GET \"") && first[7].hasSuffix("Wed, 01 Jan 2020 00:00:00 GMT"))
    }

    @Test func withoutDeterminismLockTokensDiffer() async throws {
        let folder = try FixtureFolder.sample()
        defer { folder.remove() }
        let options = RoloTestServer.Options(fixtures: [folder.path])
        let tokens = try await [1, 2].asyncMap { _ in
            try await withRoloServer(options) { server in
                try await server.send("LOCK", "addressbooks/alice/default/ada.vcf", body: Self.lockInfo).header("Lock-Token")
            }
        }
        #expect(tokens[0] != nil)
        #expect(tokens[0] != tokens[1])
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
