import Foundation
import RoloStore
import Testing
@testable import RoloWeb

/// What a person does to their own account and books in the web UI (issue 29): change the
/// password, create, rename and delete a book, leave a share, and where sign-in lands.
@Suite struct SelfServiceTests {
    static func card(_ uid: String, _ fn: String, extra: [String] = []) -> String {
        (["BEGIN:VCARD", "VERSION:3.0", "UID:\(uid)", "FN:\(fn)", "N:\(fn);;;;"] + extra + ["END:VCARD", ""]).joined(separator: "\r\n")
    }

    // MARK: Password

    @Test func aPasswordChangeNeedsTheCurrentPasswordAndTheRuleAndEndsOtherBrowsers() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        let other = try await WebHarness(store: web.store, app: web.app)
        try await other.signIn()
        let page = await web.get("/web/account")
        #expect(page.status == 200 && page.text.contains("id=\"password-form\""))

        // Each refusal changes nothing: the old password still opens the account.
        let wrong = await web.post("/web/account/password", [("current", "not-it"), ("password", "a-new-secret"), ("confirm", "a-new-secret")])
        #expect(wrong.status == 403 && wrong.text.contains("current password was wrong"))
        let short = await web.post("/web/account/password", [("current", "alice-secret"), ("password", "short"), ("confirm", "short")])
        #expect(short.status == 400 && short.text.contains("at least 8 characters"))
        let differ = await web.post("/web/account/password", [("current", "alice-secret"), ("password", "a-new-secret"), ("confirm", "a-new-secreT")])
        #expect(differ.status == 400 && differ.text.contains("not the same"))
        #expect(try await web.store.verifyPassword(user: "alice", password: "alice-secret"))
        #expect(await other.get("/web/account").status == 200)

        let changed = await web.post("/web/account/password", [("current", "alice-secret"), ("password", "a-new-secret"), ("confirm", "a-new-secret")])
        #expect(changed.status == 303 && changed.header("Location") == "/web/account?done=password-changed")
        #expect(try await web.store.verifyPassword(user: "alice", password: "a-new-secret"))
        #expect(try await web.store.verifyPassword(user: "alice", password: "alice-secret") == false)
        // This browser has a new session; the other one is signed out.
        let after = await web.get("/web/account?done=password-changed")
        #expect(after.status == 200 && after.text.contains("Password changed"))
        let signedOut = await other.get("/web/account")
        #expect(signedOut.status == 303 && (signedOut.header("Location") ?? "").hasPrefix("/web/login"))
    }

    @Test func theAdminFormsAskTheSamePasswordRule() async throws {
        let web = try await WebHarness()
        try await web.store.updateAccount(name: "alice", UserAccountUpdate(admin: true))
        try await web.signIn()
        let created = await web.post("/web/admin/users", [("user", "carol"), ("password", "1234567")])
        #expect(created.status == 400 && created.text.contains(PasswordRule.problem(with: "1234567") ?? "?"))
        #expect(try await web.store.account(name: "carol") == nil)
        let reset = await web.post("/web/admin/users/bob/password", [("password", "1234567")])
        #expect(reset.status == 400)
        #expect(try await web.store.verifyPassword(user: "bob", password: "bob-secret"))
    }

    // MARK: Books

    @Test func aBookIsCreatedRenamedAndDeletedWithAConfirmation() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        let form = await web.get("/web/books/new")
        #expect(form.status == 200 && form.text.contains("id=\"new-book-form\""))
        let created = await web.post("/web/books/new", [("name", "  Family & Friends ")])
        #expect(created.status == 303 && created.header("Location") == "/web/b/family-friends/?done=book-created")
        let book = try #require(try await web.store.collection(owner: "alice", path: ["family-friends"]))
        #expect(book.kind == .addressBook && book.displayName == "Family & Friends")
        // The same name again gets a URL of its own; a bad name creates nothing.
        #expect(await web.post("/web/books/new", [("name", "Family & Friends")]).header("Location") == "/web/b/family-friends-2/?done=book-created")
        let before = try await web.store.childCollections(owner: "alice", parentPath: []).count
        for bad in ["", "   ", "two\nlines", String(repeating: "x", count: 201)] {
            let refused = await web.post("/web/books/new", [("name", bad)])
            #expect(refused.status == 400 && refused.text.contains("Give the book a name"), "\(bad.debugDescription)")
        }
        #expect(try await web.store.childCollections(owner: "alice", parentPath: []).count == before)

        let renamed = await web.post("/web/b/family-friends/settings", [("name", "Familie")])
        #expect(renamed.status == 303)
        #expect(try await web.store.collection(id: book.id)?.displayName == "Familie")
        #expect(await web.post("/web/b/family-friends/settings", [("name", "")]).status == 400)
        #expect(try await web.store.collection(id: book.id)?.displayName == "Familie")

        try await web.put(Self.card("f1", "Fay"), name: "f1.vcf", book: "family-friends")
        let settings = await web.get("/web/b/family-friends/settings")
        #expect(settings.text.contains("id=\"delete-book-form\"") && settings.text.contains("1 contact"))
        let unconfirmed = await web.post("/web/b/family-friends/settings/delete", [])
        #expect(unconfirmed.status == 400 && unconfirmed.text.contains("Tick the box"))
        #expect(try await web.store.collection(id: book.id) != nil)
        let deleted = await web.post("/web/b/family-friends/settings/delete", [("confirm", "yes")])
        #expect(deleted.status == 303 && deleted.header("Location") == "/web/?done=book-deleted")
        #expect(try await web.store.collection(id: book.id) == nil)
        #expect(await web.get("/web/b/family-friends/").status == 404)
    }

    @Test func theLastOwnBookIsNeverDeleted() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        let settings = await web.get("/web/b/default/settings")
        #expect(settings.text.contains("data-testid=\"only-book\"") && !settings.text.contains("id=\"delete-book-form\""))
        let refused = await web.post("/web/b/default/settings/delete", [("confirm", "yes")])
        #expect(refused.status == 400 && refused.text.contains("only address book"))
        #expect(try await web.store.collection(owner: "alice", path: ["default"]) != nil)
    }

    @Test func aShareeLeavesASharedBookButNeitherRenamesNorDeletesIt() async throws {
        let web = try await WebHarness()
        try await web.store.createCollection(owner: "bob", path: ["work"], kind: .addressBook, displayName: "Bob's work", description: nil)
        _ = try await web.store.shareBook(owner: "bob", book: "work", with: "alice", access: .readWrite, accepted: true)
        try await web.signIn()
        let settings = await web.get("/web/b/work~bob/settings")
        #expect(settings.status == 200 && settings.text.contains("data-testid=\"leave-book\"") && !settings.text.contains("delete-book-form"))
        #expect(await web.post("/web/b/work~bob/settings", [("name", "Mine now")]).status == 403)
        #expect(await web.post("/web/b/work~bob/settings/delete", [("confirm", "yes")]).status == 403)
        #expect(try await web.store.collection(owner: "bob", path: ["work"])?.displayName == "Bob's work")
        let left = await web.post("/web/b/work~bob/settings/leave", [])
        #expect(left.status == 303 && left.header("Location") == "/web/?done=left")
        #expect(try await web.store.mount(sharee: "alice", name: "work~bob") == nil)
        #expect(try await web.store.collection(owner: "bob", path: ["work"]) != nil)
        let landed = await web.get("/web/?done=left")
        #expect(landed.header("Location") == "/web/b/default/?done=left")
        #expect(await web.get(landed.header("Location") ?? "").text.contains("You left the shared book"))
    }

    @Test func anotherUsersBookHasNoSettingsPage() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        #expect(await web.get("/web/b/default~bob/settings").status == 404)
        #expect(await web.post("/web/b/default~bob/settings/delete", [("confirm", "yes")]).status == 404)
        #expect(try await web.store.collection(owner: "bob", path: ["default"]) != nil)
    }

    // MARK: Where sign-in lands, the side bar

    @Test func signInLandsOnABookWithCardsThenOnTheLastOneListed() async throws {
        let web = try await WebHarness()
        try await web.store.createCollection(owner: "alice", path: ["other"], kind: .addressBook, displayName: "Other", description: nil)
        try await web.put(Self.card("o1", "Olga"), name: "o1.vcf", book: "other")
        await web.get("/web/login")
        #expect(await web.post("/web/login", [("user", "alice"), ("password", "alice-secret")]).header("Location") == "/web/")
        // The default book is empty: land where the cards are.
        #expect(await web.get("/web/").header("Location") == "/web/b/other/")
        // Once a book is listed, it is where the next visit lands, even an empty one.
        await web.get("/web/b/default/")
        #expect(await web.get("/web/").header("Location") == "/web/b/default/")
        // A last book that is gone is ignored.
        web.cookies["rolo_book"] = "no-such-book"
        #expect(await web.get("/web/").header("Location") == "/web/b/other/")
    }

    @Test func aUserWithNoBookIsOfferedToCreateOne() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        let book = try #require(try await web.store.collection(owner: "alice", path: ["default"]))
        try await web.store.deleteCollection(id: book.id)
        let home = await web.get("/web/")
        #expect(home.status == 200 && home.text.contains("data-testid=\"first-book-link\""))
        #expect(await web.post("/web/books/new", [("name", "Contacts")]).header("Location") == "/web/b/contacts/?done=book-created")
        #expect(await web.get("/web/").header("Location") == "/web/b/contacts/")
    }

    @Test func anEmptyBookShowsWhatToDoBesideTheList() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        let page = await web.get("/web/b/default/")
        #expect(page.text.contains("data-testid=\"no-contact\"") && page.text.contains("No contacts yet."))
        #expect(page.text.contains("Import a file"))
    }

    @Test func theSideBarSortsBooksByDisplayName() async throws {
        let web = try await WebHarness()
        try await web.store.createCollection(owner: "alice", path: ["aaa"], kind: .addressBook, displayName: "Zebra club", description: nil)
        try await web.store.createCollection(owner: "alice", path: ["zzz"], kind: .addressBook, displayName: "apple growers", description: nil)
        try await web.signIn()
        let page = await web.get("/web/b/default/").text
        let apple = try #require(page.range(of: "apple growers")), zebra = try #require(page.range(of: "Zebra club"))
        #expect(apple.lowerBound < zebra.lowerBound)
    }
}
