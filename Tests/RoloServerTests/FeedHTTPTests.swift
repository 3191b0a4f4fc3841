import Foundation
import RoloStore
import Testing

/// Feeds at secret URLs (issue 33) through real HTTP: the birthday calendar and a phone book
/// without a login, 304 on a matching `If-None-Match`, 404 (never 401) for a wrong or revoked
/// secret, and a book whose share is removed leaving the next answer.
@Suite struct FeedHTTPTests {
    static func card(_ uid: String, _ lines: String) -> Data {
        Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(uid)\r\n\(lines)END:VCARD\r\n".utf8)
    }

    static func put(_ server: TestServer, user: String, path: String, _ data: Data) async throws {
        let answer = try await server.request("PUT", path, user: user, headers: ["Content-Type": "text/vcard"], body: data)
        #expect(answer.status == 201, "\(answer.text)")
    }

    @Test func theBirthdayFeedIsReadWithoutALoginAndAnswers304WhenUnchanged() async throws {
        try await TestServer.with { server in
            try await Self.put(server, user: "alice", path: "/dav/addressbooks/alice/default/ada.vcf",
                               Self.card("ada", "FN:Ada Lovelace\r\nBDAY:18151210\r\nTEL;TYPE=cell:+44 1\r\n"))
            let feed = try await server.store.createFeed(user: "alice", kind: .birthdays, books: [])
            let path = "/feeds/" + feed.secret
            let first = try await server.request("GET", path, user: nil)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.headers["content-type"] == "text/calendar; charset=utf-8")
            #expect(first.text.hasPrefix("BEGIN:VCALENDAR\r\n"))
            #expect(first.text.contains("SUMMARY:Ada Lovelace's birthday (born 1815)\r\n"))
            let etag = try #require(first.headers["etag"])
            #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
            #expect(first.headers["last-modified"] != nil)
            #expect(try await server.request("GET", path + ".ics", user: nil).text == first.text)

            let head = try await server.request("HEAD", path, user: nil)
            // (`curl -I` writes the head where the body would go: the length says what a GET sends.)
            #expect(head.status == 200 && head.headers["etag"] == etag)
            #expect(head.headers["content-length"] == String(first.body.count))
            let unchanged = try await server.request("GET", path, user: nil, headers: ["If-None-Match": etag])
            #expect(unchanged.status == 304 && unchanged.body.isEmpty && unchanged.headers["etag"] == etag)
            #expect(try await server.store.feed(secret: feed.secret)?.lastRead != nil)
            // Without an ETag, Last-Modified answers the same question (RFC 9110 §13.1.3).
            let lastModified = try #require(first.headers["last-modified"])
            #expect(try await server.request("GET", path, user: nil, headers: ["If-Modified-Since": lastModified]).status == 304)
            let old = "Sat, 01 Jan 2000 00:00:00 GMT"
            #expect(try await server.request("GET", path, user: nil, headers: ["If-Modified-Since": old]).status == 200)

            // A change to the book changes the ETag: the same condition now gets the new feed.
            try await Self.put(server, user: "alice", path: "/dav/addressbooks/alice/default/bob.vcf",
                               Self.card("bob", "FN:Bob\r\nBDAY:--0229\r\n"))
            let changed = try await server.request("GET", path, user: nil, headers: ["If-None-Match": etag])
            #expect(changed.status == 200 && changed.headers["etag"] != etag)
            #expect(changed.text.contains("RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1"))
            // Only GET and HEAD; no method below /feeds meets a password prompt.
            let post = try await server.request("POST", path, user: nil)
            #expect(post.status == 405 && post.headers["www-authenticate"] == nil)
        }
    }

    @Test func aWrongOrRevokedSecretIs404NeverALoginPrompt() async throws {
        try await TestServer.with { server in
            let feed = try await server.store.createFeed(user: "alice", kind: .yealink, books: ["default"])
            #expect(try await server.request("GET", "/feeds/" + feed.secret, user: nil).status == 200)
            var wrong = Array(feed.secret)
            wrong[5] = wrong[5] == "x" ? "y" : "x"
            for path in ["/feeds/" + String(wrong), "/feeds/", "/feeds", "/feeds/" + feed.secret + "/more"] {
                let answer = try await server.request("GET", path, user: nil)
                #expect(answer.status == 404, "\(path)")
                #expect(answer.headers["www-authenticate"] == nil, "\(path)")
            }
            try await server.store.revokeFeed(user: "alice", id: feed.feed.id)
            let revoked = try await server.request("GET", "/feeds/" + feed.secret, user: nil)
            #expect(revoked.status == 404 && revoked.headers["www-authenticate"] == nil)
        }
    }

    @Test func aBookNoLongerSharedDropsOutOfTheFeed() async throws {
        try await TestServer.with { server in
            try await Self.put(server, user: "alice", path: "/dav/addressbooks/alice/default/ann.vcf",
                               Self.card("ann", "FN:Ann Shared\r\nTEL;TYPE=work:+49 30 1\r\n"))
            try await Self.put(server, user: "bob", path: "/dav/addressbooks/bob/default/ben.vcf",
                               Self.card("ben", "FN:Ben Own\r\nTEL;TYPE=home:+49 30 2\r\n"))
            _ = try await server.store.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: true)
            let mount = try #require(try await server.store.mounts(sharee: "bob").first?.mount?.name)
            let chosen = try await server.store.createFeed(user: "bob", kind: .fritzbox, books: [mount, "default"])
            let all = try await server.store.createFeed(user: "bob", kind: .snom, books: [])
            for secret in [chosen.secret, all.secret] {
                let before = try await server.request("GET", "/feeds/" + secret, user: nil)
                #expect(before.status == 200 && before.headers["content-type"] == "text/xml; charset=utf-8")
                #expect(before.text.contains("Ann") && before.text.contains("Ben"), "\(before.text)")
            }
            let etag = try #require(try await server.request("GET", "/feeds/" + chosen.secret, user: nil).headers["etag"])
            try await server.store.removeShare(owner: "alice", book: "default", sharee: "bob")
            for secret in [chosen.secret, all.secret] {
                let after = try await server.request("GET", "/feeds/" + secret, user: nil, headers: ["If-None-Match": etag])
                #expect(after.status == 200)
                #expect(!after.text.contains("Ann") && after.text.contains("Ben"), "\(after.text)")
            }
        }
    }
}
