import Foundation
import RoloServer
import RoloStore
import Testing

/// The web UI on a real server through curl: sign in with a cookie, list, edit a phone
/// label, and see the edit over CardDAV (new ETag, the label, an unknown property kept byte
/// for byte); CSRF refusals; the session cookie opens no DAV request.
@Suite struct WebUIHTTPTests {
    static let card = [
        "BEGIN:VCARD", "VERSION:3.0", "PRODID:-//Test//EN", "UID:web-boat", "N:Sailor;Sam;;;", "FN:Sam Sailor",
        "TEL;TYPE=CELL;TYPE=VOICE:+1 555 0100", "EMAIL;TYPE=INTERNET:sam@example.org",
        "X-UNKNOWN-THING;X-PARAM=\"a,b\";type=odd:keep me exactly\\, please",
        "END:VCARD", "",
    ].joined(separator: "\r\n")

    /// A browser: one cookie jar for every request; never Basic auth.
    struct Browser {
        let server: TestServer
        let jar: String

        init(_ server: TestServer) {
            self.server = server
            jar = server.cookieJar()
        }

        func get(_ path: String, headers: [String: String] = [:]) async throws -> CurlResult {
            try await server.request("GET", path, user: nil, headers: headers, extra: ["-b", jar, "-c", jar])
        }

        func post(_ path: String, _ body: Data, headers: [String: String] = [:]) async throws -> CurlResult {
            var all = headers
            all["Content-Type"] = "application/x-www-form-urlencoded"
            all["Expect"] = ""
            return try await server.request("POST", path, user: nil, headers: all, body: body, extra: ["-b", jar, "-c", jar])
        }

        func signIn(_ user: String = "alice", _ password: String = "alice-secret") async throws -> CurlResult {
            let page = try await get("/web/login")
            var form = try #require(HTMLForm(in: page.text, id: "login-form"))
            form.set("user", to: user)
            form.set("password", to: password)
            return try await post(form.action, form.urlEncoded)
        }

        func csrf(from html: String) -> String {
            HTMLForm(in: html, id: "edit-form")?.values("csrf").first ?? Self.firstCSRF(html)
        }

        static func firstCSRF(_ html: String) -> String {
            guard let range = html.range(of: #"name="csrf" value=""#) else { return "" }
            let rest = html[range.upperBound...]
            return String(rest[..<(rest.firstIndex(of: "\"") ?? rest.endIndex)])
        }
    }

    @Test func anEditInTheBrowserReachesCardDAVAndKeepsWhatTheUIDoesNotShow() async throws {
        try await TestServer.with { server in
            let put = try await server.request("PUT", "/dav/addressbooks/alice/default/boat.vcf",
                                               headers: ["Content-Type": "text/vcard; charset=utf-8"], body: Data(Self.card.utf8))
            #expect(put.status == 201)
            let etag = try #require(put.headers["etag"])
            let browser = Browser(server)

            let signedIn = try await browser.signIn()
            #expect(signedIn.status == 303 && signedIn.headers["location"] == "/web/")
            #expect(signedIn.headers["set-cookie"]?.contains("HttpOnly") == true)
            let list = try await browser.get("/web/b/default/")
            #expect(list.status == 200 && list.text.contains("Sam Sailor"))
            #expect(list.headers["content-security-policy"]?.contains("script-src 'self'") == true)

            let editor = try await browser.get("/web/b/default/c/boat.vcf/edit")
            #expect(editor.status == 200)
            var form = try #require(HTMLForm(in: editor.text, id: "edit-form"))
            #expect(form.values("tel-value") == ["+1 555 0100"])
            #expect(form.values("tel-label") == ["mobile"])
            #expect(form.values("etag") == [etag])
            form.set("tel-label", to: "custom")
            form.set("tel-custom", to: "Boat")
            let saved = try await browser.post(form.action, form.urlEncoded)
            #expect(saved.status == 303, "\(saved.text.prefix(500))")

            let after = try await server.request("GET", "/dav/addressbooks/alice/default/boat.vcf")
            #expect(after.status == 200)
            #expect(after.headers["etag"] != etag)
            let lines = after.text.components(separatedBy: "\r\n")
            #expect(lines.contains("item1.TEL;TYPE=VOICE:+1 555 0100"), "\(after.text)")
            #expect(lines.contains { $0.uppercased() == "ITEM1.X-ABLABEL:BOAT" }, "\(after.text)")
            #expect(lines.contains("X-UNKNOWN-THING;X-PARAM=\"a,b\";type=odd:keep me exactly\\, please"))
            #expect(lines.contains("EMAIL;TYPE=INTERNET:sam@example.org") && lines.contains("PRODID:-//Test//EN"))
            #expect(lines.contains { $0.hasPrefix("REV:") })

            // The page shows the label as the phone does.
            let view = try await browser.get("/web/b/default/c/boat.vcf")
            #expect(view.text.contains("<dt>Boat</dt>"))
        }
    }

    /// What a browser showed counts in the access history as DAV reads do: the owner of a
    /// shared book sees what the sharee read through the web UI.
    @Test func webReadsOfASharedBookReachTheOwnersAccessHistory() async throws {
        try await TestServer.with(configure: { $0.accessHistoryFlushInterval = .milliseconds(50) }) { server in
            for name in ["ann", "ben"] {
                let card = "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(name)\r\nFN:\(name.capitalized) Shared\r\nEND:VCARD\r\n"
                #expect(try await server.request("PUT", "/dav/addressbooks/alice/default/\(name).vcf",
                                                 headers: ["Content-Type": "text/vcard"], body: Data(card.utf8)).status == 201)
            }
            try await server.store.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: true)
            let browser = Browser(server)
            #expect(try await browser.signIn("bob", "bob-secret").status == 303)
            let slug = try #require(try await server.store.mounts(sharee: "bob").first?.mount?.name)
            let list = try await browser.get("/web/b/\(slug)/")
            #expect(list.status == 200 && list.text.contains("Ann Shared") && list.text.contains("Ben Shared"))
            #expect(try await browser.get("/web/b/\(slug)/c/ann.vcf").status == 200)
            let deadline = ContinuousClock.now + .seconds(30)
            var shared: AccessRecord?
            // Polled once more after the deadline (a loaded machine may wake this task late).
            while true {
                let rows = try await server.store.accessHistory(user: "alice", since: Date(timeIntervalSince1970: 0))
                shared = rows.hourlyTotal { $0.user == "bob" }
                // Every read flushed: the list's two, the contact's one and the list beside it.
                if let shared, shared.cardsRead >= 2 + 1 + 2, shared.requests >= 2 { break }
                if ContinuousClock.now >= deadline { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            // Two rows listed, then one contact opened (with the list beside it: two more).
            #expect(shared?.cardsRead == 2 + 1 + 2 && shared?.requests == 2 && shared?.book == "default")
        }
    }

    @Test func statesChangeOnlyWithTheTokenFromThisOrigin() async throws {
        try await TestServer.with { server in
            let put = try await server.request("PUT", "/dav/addressbooks/alice/default/boat.vcf",
                                               headers: ["Content-Type": "text/vcard"], body: Data(Self.card.utf8))
            let etag = try #require(put.headers["etag"])
            let browser = Browser(server)
            _ = try await browser.signIn()
            let page = try await browser.get("/web/b/default/c/boat.vcf")
            let token = Browser.firstCSRF(page.text)
            #expect(!token.isEmpty)
            let escapedETag = etag.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let withoutToken = try await browser.post("/web/b/default/c/boat.vcf/delete", Data("etag=\(escapedETag)".utf8))
            #expect(withoutToken.status == 403)
            let foreign = try await browser.post("/web/b/default/c/boat.vcf/delete", Data("etag=\(escapedETag)&csrf=\(token)".utf8),
                                                 headers: ["Origin": "http://evil.example"])
            #expect(foreign.status == 403)
            let sameSite = try await browser.post("/web/b/default/c/boat.vcf/delete", Data("etag=\(escapedETag)&csrf=\(token)".utf8),
                                                  headers: ["Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"])
            #expect(sameSite.status == 403)
            #expect(try await server.request("GET", "/dav/addressbooks/alice/default/boat.vcf").status == 200)
            let deleted = try await browser.post("/web/b/default/c/boat.vcf/delete", Data("etag=\(escapedETag)&csrf=\(token)".utf8),
                                                 headers: ["Origin": server.base])
            #expect(deleted.status == 303)
            #expect(try await server.request("GET", "/dav/addressbooks/alice/default/boat.vcf").status == 404)
        }
    }

    @Test func theSessionCookieOpensNoDAVRequestAndBrowsersAreSentToTheUI() async throws {
        try await TestServer.with { server in
            let browser = Browser(server)
            _ = try await browser.signIn()
            #expect(try await browser.get("/web/b/default/").status == 200)
            let dav = try await browser.get("/dav/addressbooks/alice/default/")
            #expect(dav.status == 401)
            let propfind = try await server.request("PROPFIND", "/dav/addressbooks/alice/", user: nil, headers: ["Depth": "0"],
                                                    extra: ["-b", browser.jar])
            #expect(propfind.status == 401)
            #expect(try await server.request("GET", "/api/account", user: nil, extra: ["-b", browser.jar]).status == 401)

            let root = try await server.request("GET", "/", user: nil, headers: ["Accept": "text/html,application/xhtml+xml"])
            #expect(root.status == 303 && root.headers["location"] == "/web/")
            let davRoot = try await server.request("PROPFIND", "/", user: "alice", headers: ["Depth": "0"])
            #expect(davRoot.status != 303)
            let plainGet = try await server.request("GET", "/", user: nil, headers: ["Accept": "*/*"])
            #expect(plainGet.status != 303)
        }
    }

    @Test func webSignInFailuresCountInTheDAVThrottle() async throws {
        try await TestServer.with(configure: {
            $0.loginThrottle = LoginThrottleSettingsFixture.strict
        }) { server in
            let browser = Browser(server)
            var statuses: [Int] = []
            for _ in 0..<3 { statuses.append(try await browser.signIn("alice", "wrong").status) }
            #expect(statuses.prefix(2).allSatisfy { $0 == 401 })
            #expect(statuses.last == 429)
            // DAV from the same address is blocked too: one throttle.
            #expect(try await server.request("PROPFIND", "/dav/", headers: ["Depth": "0"]).status == 429)
        }
    }
}

enum LoginThrottleSettingsFixture {
    /// No delays; the third failure from an address blocks it.
    static let strict = LoginThrottleSettings(freeFailures: 0, baseDelay: .zero, maxDelay: .zero, cappedFailures: 2)
}
