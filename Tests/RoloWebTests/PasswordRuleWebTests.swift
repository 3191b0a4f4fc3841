import Foundation
import RoloStore
import Testing

/// The admin page sets passwords through `AccountRules.checkPassword`, like the CLI: what the
/// rule refuses is a 400 naming the rule, and nothing changes (issue 29).
@Suite struct PasswordRuleWebTests {
    @Test func theAdminPageRefusesWhatThePasswordRuleRefusesAndChangesNothing() async throws {
        let web = try await WebHarness()
        try await web.store.updateAccount(name: "alice", UserAccountUpdate(admin: true))
        try await web.signIn("alice")
        #expect(await web.get("/web/admin").status == 200)
        let tooLong = String(repeating: "ä", count: 37)  // 37 characters, 74 bytes: bcrypt would cut it.
        let created = await web.post("/web/admin/users", [("user", "carol"), ("password", tooLong)])
        #expect(created.status == 400)
        #expect(created.text.contains("at most 72 bytes"), "\(created.text)")
        #expect(try await web.store.account(name: "carol") == nil)

        let short = await web.post("/web/admin/users", [("user", "carol"), ("password", "1234567")])
        #expect(short.status == 400 && short.text.contains("at least 8 characters"))
        #expect(try await web.store.account(name: "carol") == nil)

        await web.get("/web/admin/users/bob")
        let reset = await web.post("/web/admin/users/bob/password", [("password", "with\ttab")])
        #expect(reset.status == 400 && reset.text.contains("control characters"), "\(reset.text)")
        #expect(try await web.store.verifyPassword(user: "bob", password: "bob-secret"))
        #expect(await web.post("/web/admin/users/bob/password", [("password", "bob-secret-2")]).status == 303)
        #expect(try await web.store.verifyPassword(user: "bob", password: "bob-secret-2"))
    }
}
