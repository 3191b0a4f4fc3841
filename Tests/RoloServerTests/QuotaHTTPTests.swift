import Foundation
import RoloServer
import RoloStore
import Testing

/// The quota through real HTTP on every write path that adds bytes (`Quota` in the
/// Authorization module): the web UI's editor, new contact and import, and DAV's COPY, as
/// well as PUT. Each refusal changes nothing and says so in the front end's own terms.
@Suite struct QuotaHTTPTests {
    typealias Browser = WebUIHTTPTests.Browser

    static func card(_ uid: String, note: String = "") -> String {
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nN:Quota;\(uid);;;\r\nFN:\(uid) Quota\r\n"
            + (note.isEmpty ? "" : "NOTE:\(note)\r\n") + "END:VCARD\r\n"
    }

    /// A server whose users may store `quota` bytes, with one card of alice's already in.
    static func withServer(quota: Int64, _ body: (TestServer, _ used: Int) async throws -> Void) async throws {
        try await TestServer.with(configure: { $0.limits.quotaBytes = quota }) { server in
            let first = Data(card("first").utf8)
            let put = try await server.request("PUT", "/dav/addressbooks/alice/default/first.vcf",
                                               headers: ["Content-Type": "text/vcard"], body: first)
            #expect(put.status == 201)
            try await body(server, first.count)
        }
    }

    @Test func aWebEditThatWouldPassTheQuotaIsRefusedAndTheCardStaysAsItWas() async throws {
        try await Self.withServer(quota: 400) { server, _ in
            let before = try await server.request("GET", "/dav/addressbooks/alice/default/first.vcf")
            let browser = Browser(server)
            #expect(try await browser.signIn().status == 303)
            let editor = try await browser.get("/web/b/default/c/first.vcf/edit")
            var form = try #require(HTMLForm(in: editor.text, id: "edit-form"))
            form.set("note", to: String(repeating: "long note ", count: 60))
            let saved = try await browser.post(form.action, form.urlEncoded)
            #expect(saved.status == 507)
            #expect(saved.text.contains("storage quota"), "\(saved.text.prefix(800))")
            let after = try await server.request("GET", "/dav/addressbooks/alice/default/first.vcf")
            #expect(after.headers["etag"] == before.headers["etag"])
            #expect(after.text == before.text)

            // A small edit still fits.
            form.set("note", to: "short")
            #expect(try await browser.post(form.action, form.urlEncoded).status == 303)
        }
    }

    @Test func aNewContactPastTheQuotaIsRefused() async throws {
        try await Self.withServer(quota: 200) { server, _ in
            let browser = Browser(server)
            #expect(try await browser.signIn().status == 303)
            let page = try await browser.get("/web/b/default/new")
            var form = try #require(HTMLForm(in: page.text, id: "edit-form"))
            form.set("fn", to: "Over Quota")
            form.set("note", to: String(repeating: "x", count: 300))
            let created = try await browser.post(form.action, form.urlEncoded)
            #expect(created.status == 507)
            #expect(try await server.store.usedBytes(owner: "alice") < 200)
            let list = try await browser.get("/web/b/default/")
            #expect(!list.text.contains("Over Quota"))
        }
    }

    @Test func aWebImportStopsAtTheQuotaAndSaysWhatWentIn() async throws {
        try await Self.withServer(quota: 600) { server, used in
            let browser = Browser(server)
            #expect(try await browser.signIn().status == 303)
            let page = try await browser.get("/web/b/default/import")
            let csrf = Browser.firstCSRF(page.text)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("quota-\(UUID().uuidString).vcf")
            defer { try? FileManager.default.removeItem(at: file) }
            let cards = (1...20).map { Self.card("import-\($0)", note: String(repeating: "n", count: 100)) }
            try Data(cards.joined().utf8).write(to: file)
            let imported = try await server.request("POST", "/web/b/default/import", user: nil, headers: ["Expect": ""],
                                                    extra: ["-b", browser.jar, "-c", browser.jar, "-F", "csrf=\(csrf)",
                                                            "-F", "collision=skip", "-F", "file=@\(file.path);type=text/vcard"])
            #expect(imported.status == 507)
            #expect(imported.text.contains("Import stopped"), "\(imported.text.prefix(800))")
            // Nothing past the quota went in: the book holds the first card alone (the
            // import writes in batches of 200, and this one batch was refused whole).
            #expect(try await server.store.usedBytes(owner: "alice") == Int64(used))
        }
    }

    @Test func aDAVCopyPastTheQuotaIs507AndCopiesNothing() async throws {
        try await Self.withServer(quota: 150) { server, _ in
            let copy = try await server.request("COPY", "/dav/addressbooks/alice/default/first.vcf",
                                                headers: ["Destination": "/dav/addressbooks/alice/default/second.vcf"])
            #expect(copy.status == 507)
            #expect(copy.text.contains("quota-not-exceeded"))
            #expect(try await server.request("GET", "/dav/addressbooks/alice/default/second.vcf").status == 404)
            // A move adds nothing, so it passes however full the quota is.
            let move = try await server.request("MOVE", "/dav/addressbooks/alice/default/first.vcf",
                                                headers: ["Destination": "/dav/addressbooks/alice/default/moved.vcf"])
            #expect(move.status == 201)
        }
    }

    @Test func aCopyOfAWholeBookCountsItsCards() async throws {
        try await Self.withServer(quota: 150) { server, _ in
            let copy = try await server.request("COPY", "/dav/addressbooks/alice/default/",
                                                headers: ["Destination": "/dav/addressbooks/alice/copy/"])
            #expect(copy.status == 507)
            #expect(try await server.request("PROPFIND", "/dav/addressbooks/alice/copy/", headers: ["Depth": "0"]).status == 404)
        }
    }

    @Test func aShareesWebEditCountsAgainstTheBooksOwner() async throws {
        try await Self.withServer(quota: 400) { server, _ in
            try await server.store.shareBook(owner: "alice", book: "default", with: "bob", access: .readWrite, accepted: true)
            let browser = Browser(server)
            #expect(try await browser.signIn("bob", "bob-secret").status == 303)
            let editor = try await browser.get("/web/b/default~alice/c/first.vcf/edit")
            var form = try #require(HTMLForm(in: editor.text, id: "edit-form"))
            form.set("note", to: String(repeating: "long note ", count: 60))
            #expect(try await browser.post(form.action, form.urlEncoded).status == 507)
        }
    }
}
