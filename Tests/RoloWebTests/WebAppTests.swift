import Foundation
import RoloStore
import Testing
@testable import RoloWeb

/// The web UI's pages and defences through `WebApp.handle`, on a real (temporary) store.
@Suite struct WebAppTests {
    static let nasty = [
        "BEGIN:VCARD", "VERSION:3.0", "UID:nasty", "N:<script>alert(1)</script>;Eve;;;",
        "FN:<script>alert(1)</script> Eve", "ORG:\"><img src=x onerror=alert(2)>",
        "URL:javascript:alert(3)", "item1.URL:https://example.org/ok", "item1.X-ABLabel:<b>Blog</b>",
        "EMAIL:eve@example.org", "NOTE:<iframe src=//evil>", "END:VCARD", "",
    ].joined(separator: "\r\n")

    @Test func everyAnswerCarriesTheSecurityHeaders() async throws {
        let web = try await WebHarness()
        for response in [await web.get("/web/login"), await web.get("/web/"), await web.get("/web/nope"),
                         await web.get("/web/static/app.00000000.js")] {
            #expect(response.header("Content-Security-Policy") == WebApp.contentSecurityPolicy)
            #expect(response.header("X-Content-Type-Options") == "nosniff")
            #expect(response.header("Referrer-Policy") == "same-origin")
        }
        #expect(await web.get("/web/").status == 303)
    }

    @Test func staticFilesAreHashNamedAndImmutable() async throws {
        let web = try await WebHarness()
        let page = await web.get("/web/login").text
        let js = try #require(page.range(of: #"/web/static/app\.[0-9a-f]{8}\.js"#, options: .regularExpression))
        let css = try #require(page.range(of: #"/web/static/app\.[0-9a-f]{8}\.css"#, options: .regularExpression))
        let script = await web.get(String(page[js]))
        #expect(script.status == 200 && script.header("Content-Type")?.hasPrefix("text/javascript") == true)
        #expect(script.header("Cache-Control") == "public, max-age=31536000, immutable")
        #expect(script.text == EmbeddedStatic.appJS)
        #expect(await web.get(String(page[css])).text == EmbeddedStatic.appCSS)
    }

    @Test func signInMakesASessionAndSignOutEndsIt() async throws {
        let web = try await WebHarness()
        await web.get("/web/login")
        let wrong = await web.post("/web/login", [("user", "alice"), ("password", "nope")])
        #expect(wrong.status == 401 && wrong.text.contains(WebApp.genericLoginError.replacingOccurrences(of: ",", with: ",")))
        let unknown = await web.post("/web/login", [("user", "zed"), ("password", "nope")])
        #expect(unknown.status == 401 && unknown.text.contains("The user name or password is wrong"))
        let signedIn = await web.post("/web/login", [("user", "alice"), ("password", "alice-secret")])
        #expect(signedIn.status == 303)
        let cookie = try #require(signedIn.headerValues("Set-Cookie").first { $0.hasPrefix("rolo_session=") })
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/") && !cookie.contains("Secure"))
        let token = try #require(web.cookies["rolo_session"])
        // The store keeps only the hash.
        #expect(try await web.store.webSession(tokenHash: token) == nil)
        #expect(try await web.store.webSession(tokenHash: Tokens.sha256Hex(token))?.user == "alice")
        let list = await web.get("/web/b/default/")
        #expect(list.status == 200 && list.text.contains("data-testid=\"contact-list\""))
        #expect(await web.post("/web/logout", []).status == 303)
        #expect(try await web.store.webSession(tokenHash: Tokens.sha256Hex(token)) == nil)
        web.cookies["rolo_session"] = token
        #expect(await web.get("/web/b/default/").status == 303)
    }

    @Test func aDisabledUserCannotSignIn() async throws {
        let web = try await WebHarness()
        try await web.store.updateAccount(name: "bob", UserAccountUpdate(disabled: true))
        await web.get("/web/login")
        let response = await web.post("/web/login", [("user", "bob"), ("password", "bob-secret")])
        #expect(response.status == 401 && web.cookies["rolo_session"] == nil)
    }

    @Test func aLoginFormFromElsewhereIsRefused() async throws {
        let web = try await WebHarness()
        // No nonce cookie: a form posted from another site.
        let response = await web.post("/web/login", [("user", "alice"), ("password", "alice-secret")], csrf: "forged")
        #expect(response.status == 403 && web.cookies["rolo_session"] == nil)
    }

    @Test func postsNeedTheTokenAndThisOrigin() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        let etag = try await web.put(Self.nasty, name: "nasty.vcf")
        let fields = [("etag", etag)]
        #expect(await web.post("/web/b/default/c/nasty.vcf/delete", fields, csrf: "").status == 403)
        #expect(await web.post("/web/b/default/c/nasty.vcf/delete", fields, csrf: "wrong").status == 403)
        #expect(await web.post("/web/b/default/c/nasty.vcf/delete", fields, headers: ["origin": "https://evil.example"]).status == 403)
        #expect(await web.post("/web/b/default/c/nasty.vcf/delete", fields, headers: ["sec-fetch-site": "cross-site"]).status == 403)
        #expect(try await web.stored("nasty.vcf") != nil)
        // The header instead of the field; a same-origin request.
        let deleted = await web.post("/web/b/default/c/nasty.vcf/delete", fields, csrf: "",
                                     headers: ["x-csrf-token": web.csrf, "origin": "http://127.0.0.1:8800", "sec-fetch-site": "same-origin"])
        #expect(deleted.status == 303)
        #expect(try await web.stored("nasty.vcf") == nil)
        // GET never changes anything.
        #expect(await web.get("/web/b/default/c/nasty.vcf/delete").status == 404)
    }

    @Test func cardDataIsEscapedAndUnsafeLinksAreText() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        try await web.put(Self.nasty, name: "nasty.vcf")
        let list = await web.get("/web/b/default/")
        let contact = await web.get("/web/b/default/c/nasty.vcf")
        for page in [list.text, contact.text] {
            #expect(!page.contains("<script>alert"), "raw script in page")
            #expect(!page.contains("<img src=x"), "raw img in page")
            #expect(!page.contains("<iframe"), "raw iframe in page")
            #expect(!page.contains("href=\"javascript:"), "javascript: link")
            #expect(page.range(of: #"<script(?! src="/web/static/app\.[0-9a-f]{8}\.js" defer>)"#, options: .regularExpression) == nil)
        }
        #expect(contact.text.contains("&lt;script&gt;alert(1)&lt;/script&gt; Eve"))
        #expect(contact.text.contains("javascript:alert(3)</span>"))
        #expect(contact.text.contains("href=\"https://example.org/ok\""))
        #expect(contact.text.contains("&lt;b&gt;Blog&lt;/b&gt;"))
    }

    @Test func aReadOnlyShareShowsNoEditControlsAndRefusesEdits() async throws {
        let web = try await WebHarness()
        let etag = try await web.put(Self.nasty, name: "nasty.vcf", user: "bob")
        try await web.store.shareBook(owner: "bob", book: "default", with: "alice", access: .readOnly, accepted: true)
        try await web.signIn()
        let page = await web.get("/web/b/default~bob/c/nasty.vcf")
        #expect(page.status == 200)
        #expect(!page.text.contains("data-testid=\"edit-contact\"") && page.text.contains("data-testid=\"read-only-notice\""))
        let nav = await web.get("/web/b/default/")
        #expect(nav.text.contains("bob · read only"))
        #expect(await web.get("/web/b/default~bob/c/nasty.vcf/edit").status == 403)
        #expect(await web.post("/web/b/default~bob/c/nasty.vcf/delete", [("etag", etag)]).status == 403)
        #expect(await web.post("/web/b/default~bob/c/nasty.vcf/edit", [("etag", etag), ("given", "Mallory")]).status == 403)
        #expect(try await web.stored("nasty.vcf", user: "bob")?.info.etag == etag)
        // Another user's book is not there at all.
        #expect(await web.get("/web/b/default~carol/").status == 404)
    }

    @Test func theListPagesSearchesAndJumps() async throws {
        let web = try await WebHarness()
        for index in 0..<120 {
            let name = String(format: "Person %03d", index)
            try await web.put("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:p\(index)\r\nFN:\(name)\r\nN:\(index);Person;;;\r\nEND:VCARD\r\n",
                              name: "p\(index).vcf")
        }
        try await web.put("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:jo\r\nFN:Joanne Example\r\nN:Example;Joanne;;;\r\nEND:VCARD\r\n", name: "jo.vcf")
        try await web.signIn()
        let first = await web.get("/web/b/default/")
        #expect(first.text.components(separatedBy: "data-testid=\"contact-row\"").count - 1 == 50)
        #expect(first.text.contains("121 contacts"))
        let next = try #require(first.text.range(of: #"href="(/web/b/default/\?after=[^"]+)" id="next-page""#, options: .regularExpression))
        let nextURL = String(first.text[next]).replacingOccurrences(of: "href=\"", with: "").replacingOccurrences(of: "\" id=\"next-page\"", with: "")
        let second = await web.get(nextURL.replacingOccurrences(of: "&amp;", with: "&"))
        // Joanne sorts first: page one ends with Person 048.
        #expect(first.text.contains("Person 048") && !first.text.contains("Person 049"))
        #expect(second.text.contains("Person 049") && !second.text.contains("Person 048") && !second.text.contains("Joanne"))
        #expect(second.text.contains("id=\"previous-page\""))
        let search = await web.get("/web/b/default/?q=ann", headers: ["x-requested-with": "fetch"])
        #expect(search.text.contains("Joanne Example") && !search.text.contains("Person 001"))
        #expect(search.text.contains("1 contact") && !search.text.contains("<html"))
        let jump = await web.get("/web/b/default/?letter=p")
        #expect(jump.text.contains("Person 000") && !jump.text.contains("Joanne Example"))
    }
}
