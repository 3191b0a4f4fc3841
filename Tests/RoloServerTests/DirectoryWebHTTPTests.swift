import Foundation
import RoloServer
import RoloStore
import Testing

/// "My card" (issue 32): a user edits their directory entry on the account page and the
/// directory is rebuilt at once; a field they empty never leaves the server (GET, multiget,
/// query, sync, the web export), they can leave the directory or hide it from their own
/// devices, and a web edit of the directory is refused.
@Suite struct DirectoryWebHTTPTests {
    typealias Browser = WebUIHTTPTests.Browser
    static let mount = "/dav/addressbooks/alice/directory~rolo/"

    /// The server rebuilds the directory as it starts: wait until alice's home has it.
    static func waitForDirectory(_ server: TestServer) async throws {
        for _ in 0..<100 {
            if try await server.request("PROPFIND", mount, headers: ["Depth": "0"]).status == 207 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the directory never appeared in alice's home")
    }

    @Test func myCardReachesColleaguesAndAnEmptiedFieldNeverLeavesTheServer() async throws {
        try await TestServer.with(configure: { $0.directory = .all }) { server in
            try await Self.waitForDirectory(server)
            try await server.store.updateAccount(name: "bob", UserAccountUpdate(email: .some("bob@example.org")))
            let bob = Browser(server)
            #expect(try await bob.signIn("bob", "bob-secret").status == 303)
            let page = try await bob.get("/web/account")
            var form = try #require(HTMLForm(in: page.text, id: "directory-form"), "\(page.text)")
            // Empty boxes, the account's values shown as placeholders: saved as they are, they follow the account.
            #expect(form.values("email") == [""] && form.values("display_name") == [""], "\(page.text)")
            #expect(page.text.contains(#"placeholder="bob@example.org""#), "\(page.text)")
            form.set("hide_email", to: "on")
            form.set("phones", to: "+49 30 1234\n+49 170 5")
            form.set("title", to: "Skipper")
            form.set("organization", to: "Boats Ltd")
            // alice's entry changed without a rebuild: bob's save rebuilds his card alone.
            let aliceBefore = try await server.request("GET", Self.mount + "alice.vcf")
            try await server.store.setDirectoryEntry(user: "alice", DirectoryEntry(title: "Queen"))
            let saved = try await bob.post(form.action, form.urlEncoded)
            #expect(saved.status == 303 && saved.headers["location"] == "/web/account?done=directory-saved", "\(saved.text)")

            let card = try await server.request("GET", Self.mount + "bob.vcf")
            #expect(card.status == 200 && card.text.contains("TITLE:Skipper") && card.text.contains("+49 30 1234")
                    && card.text.contains("ORG:Boats Ltd"), "\(card.text)")
            #expect(!card.text.contains("bob@example.org"))
            #expect(aliceBefore.status == 200 && !aliceBefore.text.contains("Queen"))
            #expect(try await server.request("GET", Self.mount + "alice.vcf").text == aliceBefore.text)
            let multiget = try await server.request("REPORT", Self.mount, headers: ["Content-Type": "application/xml"], body: Data("""
                <?xml version="1.0"?><c:addressbook-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
                <d:prop><c:address-data/></d:prop><d:href>\(Self.mount)bob.vcf</d:href></c:addressbook-multiget>
                """.utf8))
            #expect(multiget.text.contains("Skipper") && !multiget.text.contains("bob@example.org"), "\(multiget.text)")
            let query = try await server.request("REPORT", Self.mount, headers: ["Content-Type": "application/xml", "Depth": "1"],
                                                 body: Data("""
                <?xml version="1.0"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
                <d:prop><c:address-data/></d:prop><c:filter><c:prop-filter name="EMAIL">\
                <c:text-match match-type="contains">example.org</c:text-match></c:prop-filter></c:filter></c:addressbook-query>
                """.utf8))
            #expect(query.status == 207 && !query.text.contains("bob.vcf") && !query.text.contains("bob@"), "\(query.text)")
            let sync = try await server.request("REPORT", Self.mount, headers: ["Content-Type": "application/xml"], body: Data("""
                <?xml version="1.0"?><d:sync-collection xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
                <d:sync-token/><d:sync-level>1</d:sync-level><d:prop><c:address-data/></d:prop></d:sync-collection>
                """.utf8))
            #expect(sync.text.contains("Skipper") && !sync.text.contains("bob@example.org"), "\(sync.text)")

            let alice = Browser(server)
            #expect(try await alice.signIn().status == 303)
            let export = try await alice.get("/web/b/directory~rolo/export")
            #expect(export.status == 200 && export.text.contains("Skipper") && !export.text.contains("bob@example.org"),
                    "\(export.status) \(export.text.prefix(300))")
            // A web edit of the directory is refused, and changes nothing.
            let account = try await alice.get("/web/account")
            let csrf = Browser.firstCSRF(account.text)
            let edit = try await alice.post("/web/b/directory~rolo/c/bob.vcf/edit", Data("csrf=\(csrf)&fn=Mallory".utf8))
            #expect(edit.status == 403, "\(edit.status) \(edit.text.prefix(300))")
            #expect(try await server.request("GET", Self.mount + "bob.vcf").text == card.text)

            // A phone with letters is refused and nothing changes.
            form.set("phones", to: "call me")
            let refused = try await bob.post(form.action, form.urlEncoded)
            #expect(refused.status == 400 && refused.text.contains("call me is not a phone number"), "\(refused.status)")
            #expect(try await server.request("GET", Self.mount + "bob.vcf").text == card.text)

            // Hidden from bob's devices: gone from his home, still in alice's with his card.
            form.set("phones", to: "+49 30 1234")
            form.set("mount_hidden", to: "on")
            #expect(try await bob.post(form.action, form.urlEncoded).status == 303)
            let bobHome = try await server.request("PROPFIND", "/dav/addressbooks/bob/", user: "bob", headers: ["Depth": "1"])
            #expect(bobHome.status == 207 && !bobHome.text.contains("directory~rolo"), "\(bobHome.text)")
            #expect(try await server.request("GET", Self.mount + "bob.vcf").status == 200)
            // Left out: his card is gone.
            form.set("hidden", to: "on")
            #expect(try await bob.post(form.action, form.urlEncoded).status == 303)
            #expect(try await server.request("GET", Self.mount + "bob.vcf").status == 404)
        }
    }

    /// The directory form as a browser posts it with a file chosen: multipart, the photo as `photo`.
    static func upload(_ browser: Browser, _ form: HTMLForm, photo: Data, type: String = "image/jpeg") async throws -> CurlResult {
        let boundary = "rolo-\(UUID().uuidString)"
        var body = Data()
        for field in form.fields {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field.name)\"\r\n\r\n\(field.value)\r\n".utf8))
        }
        body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"me\"\r\nContent-Type: \(type)\r\n\r\n".utf8))
        body.append(photo)
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        return try await browser.server.request("POST", form.action, user: nil,
                                                headers: ["Content-Type": "multipart/form-data; boundary=\(boundary)", "Expect": ""],
                                                body: body, extra: ["-b", browser.jar, "-c", browser.jar])
    }

    /// A photo on "My card": a JPEG or PNG up to 256 KiB reaches the card at the save's
    /// rebuild; another kind of file, a larger one, or a post without the page's CSRF token
    /// is refused and changes nothing; "Remove the photo" takes it off the card.
    @Test func aPhotoUploadedOnMyCardReachesTheCardAndAnythingElseChangesNothing() async throws {
        try await TestServer.with(configure: { $0.directory = .all }) { server in
            try await Self.waitForDirectory(server)
            let bob = Browser(server)
            #expect(try await bob.signIn("bob", "bob-secret").status == 303)
            let page = try await bob.get("/web/account")
            #expect(page.text.contains(#"enctype="multipart/form-data" class="stack" id="directory-form""#)
                    && page.text.contains(#"name="photo" type="file""#), "\(page.text)")
            let form = try #require(HTMLForm(in: page.text, id: "directory-form"))
            let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [UInt8](repeating: 7, count: 2000))
            let saved = try await Self.upload(bob, form, photo: jpeg)
            #expect(saved.status == 303 && saved.headers["location"] == "/web/account?done=directory-saved", "\(saved.text)")
            let card = try await server.request("GET", Self.mount + "bob.vcf")
            #expect(card.status == 200 && card.text.contains("PHOTO") && card.text.contains(jpeg.base64EncodedString().prefix(24)),
                    "\(card.text)")
            #expect(try await server.store.directoryEntry(user: "bob").photo == jpeg)

            let gif = Data("GIF89a".utf8 + [UInt8](repeating: 1, count: 100))
            let notAnImage = try await Self.upload(bob, form, photo: gif, type: "image/gif")
            #expect(notAnImage.status == 400 && notAnImage.text.contains("The photo must be a JPEG or PNG picture of at most 256 KB. "
                                                                          + "Nothing was changed."), "\(notAnImage.status)")
            let large = Data([0x89, 0x50, 0x4E, 0x47] + [UInt8](repeating: 0, count: 256 * 1024))
            let tooLarge = try await Self.upload(bob, form, photo: large, type: "image/png")
            #expect(tooLarge.status == 400 && tooLarge.text.contains("Nothing was changed."), "\(tooLarge.status)")
            var forged = form
            forged.fields.removeAll { $0.name == "csrf" }
            let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 3, count: 100))
            #expect(try await Self.upload(bob, forged, photo: png, type: "image/png").status == 403)
            #expect(try await server.request("GET", Self.mount + "bob.vcf").text == card.text)
            #expect(try await server.store.directoryEntry(user: "bob").photo == jpeg)

            // Saved again without a file, the photo stays; "Remove the photo" takes it off.
            let again = try await bob.get("/web/account")
            var keep = try #require(HTMLForm(in: again.text, id: "directory-form"))
            #expect(again.text.contains(#"name="photo_remove""#), "\(again.text)")
            keep.set("title", to: "Skipper")
            #expect(try await bob.post(keep.action, keep.urlEncoded).status == 303)
            let titled = try await server.request("GET", Self.mount + "bob.vcf")
            #expect(titled.text.contains("TITLE:Skipper") && titled.text.contains("PHOTO"), "\(titled.text)")
            keep.set("photo_remove", to: "on")
            #expect(try await bob.post(keep.action, keep.urlEncoded).status == 303)
            let removed = try await server.request("GET", Self.mount + "bob.vcf")
            #expect(removed.text.contains("TITLE:Skipper") && !removed.text.contains("PHOTO"), "\(removed.text)")
        }
    }

    /// `directory_fields`: cards carry only the fields listed (the name always), and "My card"
    /// offers only those; what it does not offer keeps its stored value through a save.
    @Test func directoryFieldsLimitWhatCardsCarryAndWhatMyCardOffers() async throws {
        try await TestServer.with(configure: { $0.directory = .all; $0.directoryFields = [.name, .email] }) { server in
            try await Self.waitForDirectory(server)
            try await server.store.updateAccount(name: "bob", UserAccountUpdate(email: .some("bob@example.org")))
            try await server.store.setDirectoryEntry(user: "bob", DirectoryEntry(displayName: "Bob Boat", phones: ["+49 30 1234"],
                                                                                 title: "Skipper"))
            let bob = Browser(server)
            #expect(try await bob.signIn("bob", "bob-secret").status == 303)
            let page = try await bob.get("/web/account")
            let form = try #require(HTMLForm(in: page.text, id: "directory-form"))
            #expect(form.values("email") == [""] && form.values("display_name") == ["Bob Boat"])
            for absent in ["phones", "title", "department", "organization", "photo", "hide_phone"] {
                #expect(!page.text.contains("name=\"\(absent)\""), "\(absent) offered")
            }
            #expect(try await bob.post(form.action, form.urlEncoded).status == 303)
            let card = try await server.request("GET", Self.mount + "bob.vcf")
            #expect(card.status == 200 && card.text.contains("FN:Bob Boat") && card.text.contains("bob@example.org")
                    && !card.text.contains("Skipper") && !card.text.contains("1234"), "\(card.text)")
            let entry = try await server.store.directoryEntry(user: "bob")
            #expect(entry.title == "Skipper" && entry.phones == ["+49 30 1234"], "\(entry)")
        }
    }

    /// `directory_opt_out = off`: "My card" does not offer leaving the directory, a post asking
    /// for it is refused and changes nothing, and an admin's choice (`rolo user set
    /// --directory-hidden`) survives the user's next save.
    @Test func withoutOptOutUsersCannotLeaveTheDirectoryThemselves() async throws {
        try await TestServer.with(configure: { $0.directory = .all; $0.directoryOptOut = false }) { server in
            try await Self.waitForDirectory(server)
            let bob = Browser(server)
            #expect(try await bob.signIn("bob", "bob-secret").status == 303)
            let page = try await bob.get("/web/account")
            var form = try #require(HTMLForm(in: page.text, id: "directory-form"))
            #expect(!page.text.contains(#"name="hidden""#) && page.text.contains(#"name="mount_hidden""#), "\(page.text)")
            form.set("title", to: "Skipper")
            form.set("hidden", to: "on")
            let refused = try await bob.post(form.action, form.urlEncoded)
            #expect(refused.status == 403 && refused.text.contains("Leaving the directory is for an admin on this server. "
                                                                    + "Nothing was changed."), "\(refused.status)")
            let card = try await server.request("GET", Self.mount + "bob.vcf")
            #expect(card.status == 200 && !card.text.contains("Skipper"), "\(card.text)")
            #expect(try await server.store.directoryEntry(user: "bob").hidden == false)

            // The admin takes bob out; his own save keeps him out.
            var hidden = try await server.store.directoryEntry(user: "bob")
            hidden.hidden = true
            try await server.store.setDirectoryEntry(user: "bob", hidden)
            form.fields.removeAll { $0.name == "hidden" }
            #expect(try await bob.post(form.action, form.urlEncoded).status == 303)
            #expect(try await server.store.directoryEntry(user: "bob").hidden == true)
            #expect(try await server.request("GET", Self.mount + "bob.vcf").status == 404)
        }
    }

    /// RFC 6352 §7.1.3 and §8.6.1: the user's own principal names the directory as its
    /// gateway, and a query over more people than the server's limit answers that many
    /// with `DAV:number-of-matches-within-limits`, whatever the client asked.
    @Test func thePrincipalNamesTheDirectoryGatewayAndAQueryStopsAtTheServersLimit() async throws {
        try await TestServer.with(configure: { $0.directory = .all; $0.directoryQueryLimit = 1 }) { server in
            try await Self.waitForDirectory(server)
            let propfind = Data("""
                <?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">                <d:prop><c:directory-gateway/></d:prop></d:propfind>
                """.utf8)
            let own = try await server.request("PROPFIND", "/dav/principals/alice/", headers: ["Depth": "0"], body: propfind)
            #expect(own.status == 207 && own.text.contains("directory-gateway><d:href>\(Self.mount)</d:href>"), "\(own.text)")
            let other = try await server.request("PROPFIND", "/dav/principals/bob/", headers: ["Depth": "0"], body: propfind)
            // Another user's principal never names it (alice may not even see bob's principal).
            #expect([207, 404].contains(other.status) && !other.text.contains("directory-gateway><d:href>"), "\(other.text)")

            for limit in ["", "<c:limit><c:nresults>5</c:nresults></c:limit>"] {
                let query = try await server.request("REPORT", Self.mount, headers: ["Content-Type": "application/xml", "Depth": "1"],
                                                     body: Data("""
                    <?xml version="1.0"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">                    <d:prop><d:getetag/></d:prop><c:filter><c:prop-filter name="FN">                    <c:text-match match-type="contains">b</c:text-match></c:prop-filter>                    <c:prop-filter name="UID"><c:text-match match-type="starts-with">rolo-directory-</c:text-match>                    </c:prop-filter></c:filter>\(limit)</c:addressbook-query>
                    """.utf8))
                #expect(query.status == 207, "\(query.text)")
                #expect(query.text.components(separatedBy: ".vcf</d:href>").count - 1 == 1, "\(query.text)")
                #expect(query.text.contains("number-of-matches-within-limits") && query.text.contains("507"), "\(query.text)")
            }
            // An own book keeps no server limit.
            let own2 = try await server.request("REPORT", "/dav/addressbooks/alice/default/",
                                                headers: ["Content-Type": "application/xml", "Depth": "1"], body: Data("""
                <?xml version="1.0"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">                <d:prop><d:getetag/></d:prop></c:addressbook-query>
                """.utf8))
            #expect(own2.status == 207 && !own2.text.contains("number-of-matches-within-limits"))
        }
    }
}
