import CardIndexing
import Foundation
import RoloServer
import RoloStore
import Testing

/// A card's history and the undo of a book (issue 31) through a real server: the contact
/// page's versions and "restore this version", the undo page's plan and confirm, the JSON
/// API's same three, and their refusals (nothing changed after any of them).
@Suite struct HistoryWebHTTPTests {
    typealias Browser = WebUIHTTPTests.Browser

    static func card(_ uid: String, _ name: String, phone: String) -> String {
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(name)\r\nN:\(name);;;;\r\nTEL;TYPE=CELL:\(phone)\r\nEND:VCARD\r\n"
    }

    static let vcard = ["Content-Type": "text/vcard; charset=utf-8"]
    static let json = ["Content-Type": "application/json"]

    static func object(_ result: CurlResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(result.text.utf8))) as? [String: Any] ?? [:]
    }

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// A time between two moments of the test, whole seconds (what a person types).
    static func pause() async throws -> String {
        try await Task.sleep(for: .milliseconds(1100))
        let stamp = CardHistory.format(Date())
        try await Task.sleep(for: .milliseconds(1100))
        return stamp
    }

    @Test func theContactPageShowsTheVersionsAndRestoresOneAsANewWrite() async throws {
        try await TestServer.with { server in
            let path = "/dav/addressbooks/alice/default/ann.vcf"
            let first = Self.card("ann", "Ann Boat", phone: "+1 555 0100")
            #expect(try await server.request("PUT", path, headers: Self.vcard, body: Data(first.utf8)).status == 201)
            let etag1 = try #require(try await server.request("GET", path).headers["etag"])
            let second = Self.card("ann", "Ann Boat", phone: "+1 555 0199")
            #expect(try await server.request("PUT", path, headers: Self.vcard.merging(["If-Match": etag1]) { $1 },
                                             body: Data(second.utf8)).status == 204)
            let etag2 = try #require(try await server.request("GET", path).headers["etag"])

            let browser = Browser(server)
            #expect(try await browser.signIn().status == 303)
            let page = try await browser.get("/web/b/default/c/ann.vcf")
            #expect(page.status == 200)
            #expect(page.text.contains("History (2 versions)"))
            #expect(page.text.contains("+1 555 0199 added") && page.text.contains("+1 555 0100 removed"), "\(page.text)")
            #expect(page.text.contains("alice, account password"))
            let history: any CardHistoryStore = server.store
            let book = try #require(try await server.store.collection(owner: "alice", path: ["default"]))
            let versions = try await history.cardVersions(collectionID: book.id, name: "ann.vcf")
            #expect(versions.count == 2)
            // Only the earlier version is offered, with the ETag the page shows.
            #expect(HTMLForm(in: page.text, id: "restore-\(versions[1].seq)") == nil)
            let form = try #require(HTMLForm(in: page.text, id: "restore-\(versions[0].seq)"))
            #expect(form.values("etag") == [etag2])

            let restored = try await browser.post(form.action, form.urlEncoded)
            #expect(restored.status == 303 && restored.headers["location"]?.contains("done=version-restored") == true)
            let now = try await server.request("GET", path)
            #expect(now.text == first)
            #expect(now.headers["etag"] != etag2)
            // A new change in the log by alice, not a rewrite: three versions now.
            let after = try await history.cardVersions(collectionID: book.id, name: "ann.vcf")
            #expect(after.count == 3 && after.last?.user == "alice" && after.last?.credentialID == 0)

            // The same form again: the card changed since the page showed it; nothing changes.
            let stale = try await browser.post(form.action, form.urlEncoded)
            #expect(stale.status == 400 && stale.text.contains("changed on another device"))
            #expect(try await server.request("GET", path).headers["etag"] == now.headers["etag"])

            // A version pruned meanwhile: a clear error, nothing changes.
            let fresh = try await browser.get("/web/b/default/c/ann.vcf")
            // The first version has the bytes the card has again: nothing to offer there.
            #expect(HTMLForm(in: fresh.text, id: "restore-\(after[0].seq)") == nil)
            let offered = try #require(HTMLForm(in: fresh.text, id: "restore-\(after[1].seq)"))
            try await history.pruneCardVersions(now: Date().addingTimeInterval(86_400), retention: HistoryRetention(days: 0, versions: 1))
            let gone = try await browser.post(offered.action, offered.urlEncoded)
            #expect(gone.status == 400 && gone.text.contains("no longer kept"), "\(gone.text.prefix(400))")
            #expect(try await server.request("GET", path).headers["etag"] == now.headers["etag"])
        }
    }

    /// A second device deletes one card, blanks another's phone, edits a third that the
    /// account password edits after it, and makes a fourth; the undo page shows the plan,
    /// refuses a future time, an unknown device and a read-only book, and its confirm
    /// brings the cards back byte for byte, leaves the conflict alone and removes the new card.
    @Test func theUndoPageShowsThePlanThenTakesBackOneDevicesChanges() async throws {
        try await TestServer.with(configure: { $0.accessHistoryFlushInterval = .milliseconds(50) }) { server in
            let phone = try await server.store.createAppPassword(user: "alice", name: "Phone", readOnly: false, books: nil).secret
            let base = "/dav/addressbooks/alice/default/"
            var originals: [String: String] = [:]
            for (uid, name) in [("a", "Ada Alpha"), ("b", "Bea Beta"), ("c", "Cy Gamma")] {
                originals[uid] = Self.card(uid, name, phone: "+1 555 01\(uid.unicodeScalars.first!.value)")
                #expect(try await server.request("PUT", base + "\(uid).vcf", headers: Self.vcard, body: Data(originals[uid]!.utf8)).status == 201)
            }
            let time = try await Self.pause()
            func etag(_ uid: String) async throws -> String { try #require(try await server.request("GET", base + "\(uid).vcf").headers["etag"]) }
            #expect(try await server.request("DELETE", base + "a.vcf", password: phone).status == 204)
            #expect(try await server.request("PUT", base + "b.vcf", password: phone, headers: Self.vcard.merging(["If-Match": try await etag("b")]) { $1 },
                                             body: Data(Self.card("b", "Bea Beta", phone: "").utf8)).status == 204)
            #expect(try await server.request("PUT", base + "c.vcf", password: phone, headers: Self.vcard.merging(["If-Match": try await etag("c")]) { $1 },
                                             body: Data(Self.card("c", "Cy Gamma", phone: "").utf8)).status == 204)
            let otherDevice = Self.card("c", "Cy Gamma", phone: "+1 555 0777")
            #expect(try await server.request("PUT", base + "c.vcf", headers: Self.vcard.merging(["If-Match": try await etag("c")]) { $1 },
                                             body: Data(otherDevice.utf8)).status == 204)
            #expect(try await server.request("PUT", base + "d.vcf", password: phone, headers: Self.vcard,
                                             body: Data(Self.card("d", "Dee New", phone: "+1 555 0400").utf8)).status == 201)
            let before = try await etag("b")

            let browser = Browser(server)
            #expect(try await browser.signIn().status == 303)
            let query = "to=\(Self.escape(time))&device=Phone"
            let plan = try await browser.get("/web/b/default/undo-changes?" + query)
            #expect(plan.status == 200)
            #expect(plan.text.contains("2 cards put back, 1 card removed, 1 conflict left alone."), "\(plan.text)")
            #expect(plan.text.contains("Ada Alpha") && plan.text.contains("comes back (it was deleted)"))
            #expect(plan.text.contains("data-testid=\"undo-conflict\"><th scope=\"row\">Cy Gamma</th><td>alice with account password</td>"))

            // Asked for, the conflict goes back too (only in the plan here).
            let over = try await browser.get("/web/b/default/undo-changes?" + query + "&conflicts=include")
            #expect(over.text.contains("3 cards put back, 1 card removed, 1 conflict undone too."), "\(over.text)")
            #expect(try #require(HTMLForm(in: over.text, id: "undo-confirm")).values("conflicts") == ["include"])
            #expect(try #require(HTMLForm(in: plan.text, id: "undo-confirm")).values("conflicts").isEmpty)

            // Refusals: a clear error, nothing changed.
            let future = try await browser.get("/web/b/default/undo-changes?to=2999-01-01T00:00:00Z&device=Phone")
            #expect(future.status == 400 && future.text.contains("is in the future"))
            let unknown = try await browser.get("/web/b/default/undo-changes?to=\(Self.escape(time))&device=Toaster")
            #expect(unknown.status == 400 && unknown.text.contains("No device Toaster of alice"))
            let badTime = try await browser.get("/web/b/default/undo-changes?to=yesterday")
            #expect(badTime.status == 400 && badTime.text.contains("ISO 8601"))
            var confirm = try #require(HTMLForm(in: plan.text, id: "undo-confirm"))
            confirm.set("device", to: "Toaster")
            let unknownPost = try await browser.post(confirm.action, confirm.urlEncoded)
            #expect(unknownPost.status == 400 && unknownPost.text.contains("No device Toaster"))
            _ = try await server.store.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: true)
            let slug = try #require(try await server.store.mounts(sharee: "bob").first?.mount?.name)
            let reader = Browser(server)
            #expect(try await reader.signIn("bob", "bob-secret").status == 303)
            let readOnly = try await reader.get("/web/b/\(slug)/undo-changes?" + query)
            #expect(readOnly.status == 403 && readOnly.text.contains("read-only"))
            #expect(try await server.request("GET", base + "a.vcf").status == 404)
            #expect(try await etag("b") == before)

            // The privacy page links the phone's row of the access history to this page.
            var privacy = try await browser.get("/web/privacy")
            let deadline = ContinuousClock.now + .seconds(30)
            while !privacy.text.contains("device=Phone"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                privacy = try await browser.get("/web/privacy")
            }
            #expect(privacy.text.contains("data-testid=\"device-changes\"") && privacy.text.contains("/web/b/default/undo-changes?to="))
            #expect(privacy.text.contains("device=Phone#undo-confirm"))

            let done = try await browser.post(try #require(HTMLForm(in: plan.text, id: "undo-confirm")).action,
                                              try #require(HTMLForm(in: plan.text, id: "undo-confirm")).urlEncoded)
            #expect(done.status == 303 && done.headers["location"]?.contains("done=changes-undone") == true, "\(done.text.prefix(400))")
            #expect(try await server.request("GET", base + "a.vcf").text == originals["a"])
            #expect(try await server.request("GET", base + "b.vcf").text == originals["b"])
            #expect(try await server.request("GET", base + "c.vcf").text == otherDevice)
            #expect(try await server.request("GET", base + "d.vcf").status == 404)
            let history: any CardHistoryStore = server.store
            let book = try #require(try await server.store.collection(owner: "alice", path: ["default"]))
            let last = try #require(try await history.cardVersions(collectionID: book.id, name: "a.vcf").last)
            #expect(last.user == "alice" && last.credentialID == 0)
        }
    }

    @Test func theAPIGivesTheHistoryRestoresAVersionAndUndoesWithTheSameRefusals() async throws {
        try await TestServer.with(configure: { $0.accessHistoryFlushInterval = .milliseconds(50) }) { server in
            let phone = try await server.store.createAppPassword(user: "alice", name: "Phone", readOnly: false, books: nil).secret
            let path = "/dav/addressbooks/alice/default/ann.vcf"
            let first = Self.card("ann", "Ann Boat", phone: "+1 555 0100")
            #expect(try await server.request("PUT", path, headers: Self.vcard, body: Data(first.utf8)).status == 201)
            let time = try await Self.pause()
            let etag1 = try #require(try await server.request("GET", path).headers["etag"])
            #expect(try await server.request("PUT", path, password: phone, headers: Self.vcard.merging(["If-Match": etag1]) { $1 },
                                             body: Data(Self.card("ann", "Ann Boat", phone: "").utf8)).status == 204)

            let listed = try await server.request("GET", "/api/books/default/cards/ann/history")
            #expect(listed.status == 200, "\(listed.text)")
            let versions = try #require(Self.object(listed)["versions"] as? [[String: Any]])
            #expect(Self.object(listed)["card"] as? String == "ann.vcf")
            #expect(versions.count == 2 && versions[1]["device"] as? String == "Phone")
            #expect((versions[1]["changes"] as? [String])?.contains { $0.contains("+1 555 0100 removed") } == true, "\(listed.text)")
            let seq = try #require(versions[0]["seq"] as? Int)

            // Dry run: the plan, nothing changed; refusals.
            let dry = try await server.request("POST", "/api/books/default/undo", headers: Self.json,
                                               body: Data(#"{"to":"\#(time)","device":"Phone","dry_run":true}"#.utf8))
            #expect(dry.status == 200 && Self.object(dry)["applied"] as? Bool == false)
            #expect((Self.object(dry)["steps"] as? [[String: Any]])?.map { $0["card"] as? String } == ["ann.vcf"])
            let changed = try #require(try await server.request("GET", path).headers["etag"])
            #expect(changed != etag1)
            for (body, status, text) in [
                (#"{"to":"2999-01-01T00:00:00Z"}"#, 400, "in the future"),
                (#"{"to":"\#(time)","device":"Toaster"}"#, 400, "No device Toaster"),
                (#"{"to":"yesterday"}"#, 400, "ISO 8601"),
            ] {
                let refused = try await server.request("POST", "/api/books/default/undo", headers: Self.json, body: Data(body.utf8))
                #expect(refused.status == status && refused.text.contains(text), "\(body): \(refused.text)")
            }
            #expect(try await server.request("POST", "/api/books/default/undo", password: phone, headers: Self.json,
                                             body: Data(#"{"to":"\#(time)"}"#.utf8)).status == 403)
            _ = try await server.store.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: true)
            let slug = try #require(try await server.store.mounts(sharee: "bob").first?.mount?.name)
            #expect(try await server.request("GET", "/api/books/\(slug)/cards/ann.vcf/history", user: "bob").status == 200)
            let readOnly = try await server.request("POST", "/api/books/\(slug)/undo", user: "bob", headers: Self.json,
                                                    body: Data(#"{"to":"\#(time)"}"#.utf8))
            #expect(readOnly.status == 403 && readOnly.text.contains("read-only"))
            #expect(try await server.request("POST", "/api/books/\(slug)/cards/ann.vcf/restore", user: "bob", headers: Self.json,
                                             body: Data(#"{"seq":\#(seq)}"#.utf8)).status == 403)
            #expect(try await server.request("GET", "/api/books/nothing/cards/ann.vcf/history").status == 404)
            #expect(try await server.request("GET", path).headers["etag"] == changed)

            let stale = try await server.request("POST", "/api/books/default/cards/ann.vcf/restore", headers: Self.json,
                                                 body: Data(#"{"seq":\#(seq),"etag":"\"stale\""}"#.utf8))
            #expect(stale.status == 409 && stale.text.contains("changed"), "\(stale.text)")
            #expect(try await server.request("GET", path).headers["etag"] == changed)

            // Restore one version: a new write with a new ETag; the undo has nothing left to do.
            let restored = try await server.request("POST", "/api/books/default/cards/ann.vcf/restore", headers: Self.json,
                                                    body: Data(#"{"seq":\#(seq)}"#.utf8))
            #expect(restored.status == 200, "\(restored.text)")
            let now = try await server.request("GET", path)
            #expect(now.text == first && now.headers["etag"] != changed)
            #expect(Self.object(restored)["etag"] as? String == now.headers["etag"])
            let again = try await server.request("POST", "/api/books/default/cards/ann.vcf/restore", headers: Self.json,
                                                 body: Data(#"{"seq":999999}"#.utf8))
            #expect(again.status == 409 && again.text.contains("no longer kept"))

            // Undo by time (every device): the phone's change and the restore both go.
            #expect(try await server.request("PUT", path, password: phone, headers: Self.vcard.merging(["If-Match": now.headers["etag"]!]) { $1 },
                                             body: Data(Self.card("ann", "Ann Boat", phone: "+1 555 0999").utf8)).status == 204)
            let undone = try await server.request("POST", "/api/books/default/undo", headers: Self.json,
                                                  body: Data(#"{"to":"\#(time)"}"#.utf8))
            #expect(undone.status == 200 && Self.object(undone)["applied"] as? Bool == true, "\(undone.text)")
            #expect(try await server.request("GET", path).text == first)

            // The restore and the undo each have their entry in the access history, under the
            // credential that asked: with the first PUT, three cards written by the account password.
            func writtenByAccountPassword() async throws -> Int {
                try await server.store.accessHistory(user: "alice", since: .distantPast)
                    .filter { $0.credential == nil && $0.book == "default" }.map(\.cardsWritten).reduce(0, +)
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while try await writtenByAccountPassword() != 3, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await writtenByAccountPassword() == 3)
        }
    }
}
