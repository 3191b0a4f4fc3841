import CardIndexing
import Foundation
import RoloSQLite
import RoloStore
import Testing
import VCard
@testable import RoloWeb

/// Each flow of the web UI once, through its forms, checking what the store holds after.
@Suite struct WebFlowTests {
    static func card(_ uid: String, _ fn: String, extra: [String] = []) -> String {
        let parts = fn.split(separator: " ")
        return (["BEGIN:VCARD", "VERSION:3.0", "UID:\(uid)", "N:\(parts.last ?? "");\(parts.first ?? "");;;", "FN:\(fn)"]
                + extra + ["END:VCARD", ""]).joined(separator: "\r\n")
    }

    static func text(_ resource: StoredResource?) -> String { String(decoding: resource?.data ?? Data(), as: UTF8.self) }

    @Test func anEditOfACardChangedElsewhereShowsBothVersionsAndKeepsBothChanges() async throws {
        let web = try await WebHarness()
        try await web.put(Self.card("c1", "Ann Example", extra: ["TEL;TYPE=CELL:+1 555 0100", "EMAIL:ann@old.example"]), name: "c1.vcf")
        try await web.signIn()
        var form = try web.form(await web.get("/web/b/default/c/c1.vcf/edit").text, id: "edit-form")
        // Another device changes the e-mail address meanwhile.
        try await web.put(Self.card("c1", "Ann Example", extra: ["TEL;TYPE=CELL:+1 555 0100", "EMAIL:ann@new.example"]), name: "c1.vcf")
        form.set("tel-label", to: "work")
        let conflict = await web.postMultipart(form.action, form.submitted)
        #expect(conflict.status == 409)
        #expect(conflict.text.contains("data-testid=\"conflict\"") && conflict.text.contains("changed on another device"))
        #expect(conflict.text.contains("data-testid=\"your-version\"") && conflict.text.contains("data-testid=\"saved-version\""))
        var again = try web.form(conflict.text, id: "edit-form")
        #expect(again.values("email-value") == ["ann@new.example"])
        #expect(again.values("tel-label") == ["work"])
        #expect(await web.postMultipart(again.action, again.submitted).status == 303)
        let stored = Self.text(try await web.stored("c1.vcf"))
        #expect(stored.contains("TEL;TYPE=WORK:+1 555 0100") && stored.contains("EMAIL:ann@new.example"))
    }

    @Test func aNewContactIsCreatedFromTheForm() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        var form = try web.form(await web.get("/web/b/default/new").text, id: "edit-form")
        form.set("given", to: "Zoë")
        form.set("family", to: "Quinn")
        form.set("tel-value", to: "+44 20 7946 0000")
        form.set("tel-label", to: "custom")
        form.set("tel-custom", to: "Boat")
        form.set("bday-day", to: "15")
        form.set("bday-month", to: "4")
        let created = await web.postMultipart(form.action, form.submitted)
        #expect(created.status == 303)
        let location = try #require(created.header("Location"))
        let name = try #require(location.split(separator: "/").last.map { String($0.split(separator: "?")[0]) })
        let stored = Self.text(try await web.stored(FormData.decodeComponent(Substring(name))))
        let card = try VCardParser.parse(stored)[0]
        try VCardValidator.validate(card, requireUID: true)
        #expect(stored.contains("FN:Zoë Quinn") && stored.contains("N:Quinn;Zoë;;;"))
        #expect(stored.contains("BDAY;X-APPLE-OMIT-YEAR=1604:1604-04-15"))
        #expect(stored.uppercased().contains("ITEM1.X-ABLABEL:BOAT"))
        // Nameless contacts are refused with the form kept.
        var empty = try web.form(await web.get("/web/b/default/new").text, id: "edit-form")
        empty.set("tel-value", to: "123")
        let refused = await web.postMultipart(empty.action, empty.submitted)
        #expect(refused.status == 400 && refused.text.contains("Give the contact a name"))
    }

    @Test func aDeletedContactGoesToTheTrashAndComesBackTheSame() async throws {
        let web = try await WebHarness()
        let text = Self.card("d1", "Dora Delete", extra: ["X-ODD;x=1:kept"])
        let etag = try await web.put(text, name: "d1.vcf")
        try await web.signIn()
        await web.get("/web/b/default/c/d1.vcf")
        let deleted = await web.post("/web/b/default/c/d1.vcf/delete", [("etag", etag)])
        #expect(deleted.status == 303)
        #expect(try await web.stored("d1.vcf") == nil)
        let list = await web.get(try #require(deleted.header("Location")))
        #expect(list.text.contains("data-testid=\"undo\""))
        let trash = await web.get("/web/b/default/trash")
        #expect(trash.text.contains("Dora Delete"))
        let restore = try web.form(trash.text.replacingOccurrences(of: "<form method=\"post\" action=\"/web/b/default/trash/restore\" class=\"inline\">",
                                                                 with: "<form method=\"post\" action=\"/web/b/default/trash/restore\" id=\"restore\">"),
                                   id: "restore")
        #expect(await web.post(restore.action, restore.submitted).status == 303)
        #expect(Self.text(try await web.stored("d1.vcf")) == text)
        #expect(!(await web.get("/web/b/default/trash")).text.contains("Dora Delete"))

        // Undo from the notice after a delete.
        let again = try #require(try await web.stored("d1.vcf"))
        let second = await web.post("/web/b/default/c/d1.vcf/delete", [("etag", again.info.etag)])
        let batch = try #require(second.header("Location")?.components(separatedBy: "batch=").last)
        #expect(await web.post("/web/b/default/undo", [("batch", FormData.decodeComponent(Substring(batch)))]).status == 303)
        #expect(Self.text(try await web.stored("d1.vcf")) == text)
    }

    @Test func aMergeKeepsEveryValueRewritesGroupsAndCanBeUndone() async throws {
        let web = try await WebHarness()
        let first = Self.card("m1", "Max Muster", extra: ["EMAIL:max@example.org", "TEL;TYPE=CELL:+49 30 1234", "X-KEEP:survivor only"])
        let second = Self.card("m2", "Maximilian Muster", extra: ["EMAIL:MAX@example.org", "TEL;TYPE=WORK:+49 30 9999", "NOTE:met in Berlin"])
        let group = "BEGIN:VCARD\r\nVERSION:3.0\r\nX-ADDRESSBOOKSERVER-KIND:group\r\nN:Team;;;;\r\nFN:Team\r\nUID:g1\r\n"
            + "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:m2\r\nEND:VCARD\r\n"
        try await web.put(first, name: "m1.vcf")
        try await web.put(second, name: "m2.vcf")
        try await web.put(group, name: "g1.vcf")
        try await web.signIn()
        let duplicates = await web.get("/web/b/default/duplicates")
        #expect(duplicates.text.contains("Max Muster") && duplicates.text.contains("Maximilian Muster"))
        let mergePage = await web.get("/web/b/default/merge?c=m1.vcf&c=m2.vcf")
        #expect(mergePage.status == 200 && mergePage.text.contains("data-testid=\"conflict-FN\""))
        var form = try web.form(mergePage.text, id: "merge-form")
        #expect(form.values("c") == ["m1.vcf", "m2.vcf"])
        form.set("choice-FN", to: "1")
        let merged = await web.post(form.action, form.submitted)
        #expect(merged.status == 303, "\(merged.text.prefix(400))")
        #expect(try await web.stored("m2.vcf") == nil)
        let survivor = Self.text(try await web.stored("m1.vcf"))
        #expect(survivor.contains("FN:Maximilian Muster") && survivor.contains("NOTE:met in Berlin"))
        #expect(survivor.contains("+49 30 1234") && survivor.contains("+49 30 9999") && survivor.contains("X-KEEP:survivor only"))
        #expect(survivor.components(separatedBy: "example.org").count - 1 == 1)
        #expect(Self.text(try await web.stored("g1.vcf")).contains("X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:m1"))
        // Undo puts every card back as it was.
        let page = await web.get(try #require(merged.header("Location")))
        #expect(page.text.contains("Contacts merged.") && page.text.contains("data-testid=\"undo\""))
        let batch = try #require(merged.header("Location")?.components(separatedBy: "batch=").last)
        #expect(await web.post("/web/b/default/undo", [("batch", FormData.decodeComponent(Substring(batch)))]).status == 303)
        #expect(Self.text(try await web.stored("m1.vcf")) == first)
        #expect(Self.text(try await web.stored("m2.vcf")) == second)
        #expect(Self.text(try await web.stored("g1.vcf")) == group)
    }

    @Test func groupMembershipIsSavedInBothStyles() async throws {
        let web = try await WebHarness()
        try await web.put(Self.card("p1", "Pia Person", extra: ["CATEGORIES:Climbing"]), name: "p1.vcf")
        try await web.put(Self.card("p2", "Paul Single", extra: ["CATEGORIES:Book club"]), name: "p2.vcf")
        try await web.put("BEGIN:VCARD\r\nVERSION:4.0\r\nKIND:group\r\nFN:Family\r\nUID:fam\r\nEND:VCARD\r\n", name: "fam.vcf")
        try await web.signIn()
        let page = await web.get("/web/b/default/c/p1.vcf/groups")
        var form = try web.form(page.text, id: "membership-form")
        form.fields.append(("group", "fam.vcf"))
        form.set("new-category", to: "Book club")
        form.set("new-group", to: "Neighbours")
        let saved = await web.post(form.action, form.submitted)
        #expect(saved.status == 303, "\(saved.text.prefix(300))")
        #expect(Self.text(try await web.stored("fam.vcf")).contains("MEMBER:urn:uuid:p1"))
        #expect(Self.text(try await web.stored("p1.vcf")).contains("CATEGORIES:Climbing,Book club"))
        let collection = try #require(try await web.store.collection(owner: "alice", path: ["default"]))
        let groups = try await web.store.cardListings(collectionID: collection.id, filter: .groups, search: [], from: .first, limit: 10)
        #expect(Set(groups.rows.map(\.fields.displayName)) == ["Family", "Neighbours"])
        // The list filters by group and by category.
        #expect(await web.get("/web/b/default/?group=fam.vcf").text.contains("Pia Person"))
        #expect(await web.get("/web/b/default/?category=Book%20club").text.contains("Paul Single"))
        // A card in two categories is listed under each; the side bar lists both.
        let bookClub = await web.get("/web/b/default/?category=Book%20club").text
        #expect(bookClub.contains("Pia Person"))
        #expect(bookClub.contains("category=Climbing"))
        #expect(await web.get("/web/b/default/c/p1.vcf").text.contains("data-testid=\"contact-groups\""))
    }

    @Test func anImportReportsCreatedUpdatedSkippedAndFailed() async throws {
        let web = try await WebHarness()
        try await web.put(Self.card("i1", "Ida Import"), name: "i1.vcf")
        try await web.signIn()
        await web.get("/web/b/default/import")
        let file = Self.card("i1", "Ida Imported") + Self.card("i2", "Ivo New")
            + "BEGIN:VCARD\r\nVERSION:5.0\r\nUID:bad\r\nFN:Bad Version\r\nEND:VCARD\r\n" + "BEGIN:VCARD\r\nN:Old;Card\r\nTEL;CELL:1\r\nEND:VCARD\r\n"
        let upload = [(name: "file", filename: "cards.vcf", type: "text/vcard", data: Data(file.utf8))]
        let skip = await web.postMultipart("/web/b/default/import", [("collision", "skip")], files: upload)
        #expect(skip.status == 200)
        #expect(skip.text.contains("data-testid=\"import-created\">2<") && skip.text.contains("data-testid=\"import-skipped\">1<"))
        #expect(skip.text.contains("data-testid=\"import-failed\">1<") && skip.text.contains("Card 3 (Bad Version)"))
        #expect(skip.text.contains("unsupported VERSION 5.0"))
        #expect(Self.text(try await web.stored("i1.vcf")).contains("FN:Ida Import\r"))
        let replace = await web.postMultipart("/web/b/default/import", [("collision", "replace")], files: upload)
        // The card without a UID gets a new one each time: it is new each time.
        #expect(replace.text.contains("data-testid=\"import-updated\">2<") && replace.text.contains("data-testid=\"import-created\">1<"))
        #expect(Self.text(try await web.stored("i1.vcf")).contains("FN:Ida Imported"))
        let both = await web.postMultipart("/web/b/default/import", [("collision", "both")], files: upload)
        #expect(both.text.contains("data-testid=\"import-created\">3<"))
        let collection = try #require(try await web.store.collection(owner: "alice", path: ["default"]))
        #expect(try await web.store.cardCount(collectionID: collection.id, filter: .contacts, search: [], cap: 100) == 7)
        #expect(await web.postMultipart("/web/b/default/import", [("collision", "skip")]).status == 400)
    }

    @Test func exportsGiveTheBookAGroupOrASelection() async throws {
        let web = try await WebHarness()
        for index in 0..<5 { try await web.put(Self.card("e\(index)", "Eve Number\(index)"), name: "e\(index).vcf") }
        try await web.put("BEGIN:VCARD\r\nVERSION:4.0\r\nKIND:group\r\nFN:Two\r\nUID:two\r\nMEMBER:urn:uuid:e1\r\nMEMBER:urn:uuid:e2\r\nEND:VCARD\r\n",
                          name: "two.vcf")
        try await web.signIn()
        func download(_ path: String) async throws -> [VCard] {
            let response = await web.get(path)
            #expect(response.status == 200 && response.header("Content-Type") == "text/vcard; charset=utf-8")
            #expect(response.header("Content-Disposition")?.hasPrefix("attachment;") == true)
            var data = response.data
            if case .stream(let next) = response.body { while let chunk = try await next() { data.append(chunk) } }
            return try VCardParser.parse([UInt8](data))
        }
        #expect(try await download("/web/b/default/export").count == 6)
        #expect(try await download("/web/b/default/export?group=two.vcf").map { $0.first("UID")?.text } == ["two", "e1", "e2"])
        #expect(try await download("/web/b/default/export?c=e3.vcf&c=e0.vcf").map { $0.first("UID")?.text } == ["e3", "e0"])
        #expect(try await download("/web/b/default/export?q=number4").count == 1)
    }

    @Test func photosAreStoredSmallAndServedOnlyAsPictures() async throws {
        let web = try await WebHarness()
        try await web.put(Self.card("ph", "Pat Photo"), name: "ph.vcf")
        try await web.signIn()
        let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 7, count: 100))
        var form = try web.form(await web.get("/web/b/default/c/ph.vcf/edit").text, id: "edit-form")
        let svg = await web.postMultipart(form.action, form.submitted,
                                          files: [("photo", "x.svg", "image/svg+xml", Data("<svg onload=alert(1)/>".utf8))])
        #expect(svg.status == 400 && svg.text.contains("must be a JPEG, PNG, GIF or WebP"))
        let big = await web.postMultipart(form.action, form.submitted,
                                          files: [("photo", "big.jpg", "image/jpeg", jpeg + Data(count: 300_000))])
        #expect(big.status == 400)
        form = try web.form(await web.get("/web/b/default/c/ph.vcf/edit").text, id: "edit-form")
        #expect(await web.postMultipart(form.action, form.submitted, files: [("photo", "p.jpg", "image/jpeg", jpeg)]).status == 303)
        let page = await web.get("/web/b/default/c/ph.vcf")
        let photo = try #require(page.text.range(of: #"/web/b/default/c/ph\.vcf/photo\?v=[0-9a-f]+"#, options: .regularExpression))
        let image = await web.get(String(page.text[photo]))
        #expect(image.status == 200 && image.header("Content-Type") == "image/jpeg" && image.data == jpeg)
        #expect(image.header("X-Content-Type-Options") == "nosniff" && image.header("Cache-Control")?.hasPrefix("private") == true)
        // A photo the card links to elsewhere is never fetched nor served.
        try await web.put(Self.card("remote", "Rem Ote", extra: ["PHOTO;VALUE=uri:https://tracker.example/p.jpg"]), name: "remote.vcf")
        #expect(await web.get("/web/b/default/c/remote.vcf/photo").status == 404)
        #expect(!(await web.get("/web/b/default/c/remote.vcf")).text.contains("tracker.example"))
    }

    @Test func appPasswordsAreMadeShownOnceAndRevoked() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        await web.get("/web/privacy")
        let created = await web.post("/web/privacy/tokens", [("name", "Anna's iPhone"), ("scope", "read-only"), ("books", "some"), ("book", "default")])
        #expect(created.status == 201)
        let range = try #require(created.text.range(of: #"rolo_[A-Za-z0-9_\-]+"#, options: .regularExpression))
        let secret = String(created.text[range])
        let check = try web.store.checkAppPassword(user: "alice", secret: secret)
        #expect(check?.scope.readOnly == true && check?.scope.books?.count == 1)
        let profile = await web.post("/web/privacy/mobileconfig", [("name", "Anna's iPhone"), ("secret", secret)])
        #expect(profile.header("Content-Type") == "application/x-apple-aspen-config")
        #expect(profile.text.contains("<string>\(secret)</string>") && profile.text.contains("com.apple.carddav.account"))
        #expect(profile.text.contains("Anna&apos;s iPhone") || profile.text.contains("Anna's iPhone"))
        let privacy = await web.get("/web/privacy")
        #expect(privacy.text.contains("Anna&#39;s iPhone") && !privacy.text.contains(secret))
        #expect(await web.post("/web/privacy/tokens/revoke", [("name", "Anna's iPhone")]).status == 303)
        #expect(try web.store.checkAppPassword(user: "alice", secret: secret)?.revoked == true)
    }

    @Test func sharesAreOfferedAcceptedAndLeft() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        await web.get("/web/privacy")
        #expect(await web.post("/web/privacy/shares", [("book", "default"), ("sharee", "bob"), ("access", "read")]).status == 303)
        let bob = try await WebHarness.sharing(web.store, app: web.app)
        try await bob.signIn("bob")
        let page = await bob.get("/web/privacy")
        #expect(page.text.contains("data-testid=\"accept-share\""))
        #expect(await bob.post("/web/privacy/shares/accept", [("owner", "alice"), ("book", "default")]).status == 303)
        #expect(await bob.get("/web/b/default~alice/").status == 200)
        // Bob cannot remove someone else's share.
        #expect(await bob.post("/web/privacy/shares/remove", [("owner", "alice"), ("book", "default"), ("sharee", "carol")]).status == 403)
        #expect(await web.post("/web/privacy/shares", [("book", "default"), ("sharee", "bob"), ("access", "read-write")]).status == 303)
        #expect(try await web.store.shares(of: "bob").first?.access == .readWrite)
        #expect(await bob.post("/web/privacy/shares/remove", [("owner", "alice"), ("book", "default"), ("sharee", "bob")]).status == 303)
        #expect(await bob.get("/web/b/default~alice/").status == 404)
    }

    @Test func adminsManageUsersAndOthersCannot() async throws {
        let web = try await WebHarness()
        try await web.signIn("bob")
        #expect(await web.get("/web/admin").status == 403)
        try await web.store.updateAccount(name: "alice", UserAccountUpdate(admin: true))
        let admin = try await WebHarness.sharing(web.store, app: web.app)
        try await admin.signIn("alice")
        let page = await admin.get("/web/admin")
        #expect(page.status == 200 && page.text.contains("data-testid=\"health-cards\""))
        #expect(await admin.post("/web/admin/users", [("user", "carol"), ("password", "carol-password")]).status == 303)
        #expect(try await web.store.verifyPassword(user: "carol", password: "carol-password"))
        await admin.get("/web/admin/users/bob")
        #expect(await admin.post("/web/admin/users/bob/disable", []).status == 303)
        #expect(try await web.store.account(name: "bob")?.disabled == true)
        // Bob's session ended with it.
        #expect(await web.get("/web/b/default/").status == 303)
        #expect(await admin.post("/web/admin/users/bob/password", [("password", "short")]).status == 400)
        // Deleting needs the name typed and the admin's password.
        #expect(await admin.post("/web/admin/users/bob/delete", [("confirm", "bob"), ("password", "wrong")]).status == 403)
        #expect(await admin.post("/web/admin/users/bob/delete", [("confirm", "bo"), ("password", "alice-secret")]).status == 400)
        #expect(try await web.store.account(name: "bob") != nil)
        #expect(await admin.post("/web/admin/users/bob/delete", [("confirm", "bob"), ("password", "alice-secret")]).status == 303)
        #expect(try await web.store.account(name: "bob") == nil)
    }
}

extension WebHarness {
    /// A second browser on the same store and app.
    static func sharing(_ store: SQLiteStore, app: WebApp) async throws -> WebHarness {
        try await WebHarness(store: store, app: app)
    }
}
