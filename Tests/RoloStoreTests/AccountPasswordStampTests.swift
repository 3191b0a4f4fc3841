import Foundation
import Testing
@testable import RoloSQLite
@testable import RoloStore

/// What a cached login is compared against on each request (`accountPasswordStamp`), the
/// same on both back ends, and the one password rule (`AccountRules.checkPassword`).
@Suite(.closesStores) struct AccountPasswordStampTests {
    @Test(arguments: StoreBackend.allCases)
    func theStampChangesWithEveryChangeThatEndsAnAccountPasswordLogin(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        let first = try #require(try await store.accountPasswordStamp(user: "alice"))
        #expect(try await store.accountPasswordStamp(user: "alice") == first)
        #expect(try await store.accountPasswordStamp(user: "nobody") == nil)

        try await store.setPassword(user: "alice", password: "secret")
        let second = try #require(try await store.accountPasswordStamp(user: "alice"))
        #expect(second != first, "the same password set again has a new salt")

        try await store.updateAccount(name: "alice", UserAccountUpdate(disabled: true))
        #expect(try await store.accountPasswordStamp(user: "alice") == nil)
        try await store.updateAccount(name: "alice", UserAccountUpdate(disabled: false))
        #expect(try await store.accountPasswordStamp(user: "alice") == second)

        try await store.updateAccount(name: "alice", UserAccountUpdate(appPasswordsOnly: true))
        #expect(try await store.accountPasswordStamp(user: "alice") == nil)
        try await store.updateAccount(name: "alice", UserAccountUpdate(appPasswordsOnly: false))
        #expect(try await store.accountPasswordStamp(user: "alice") == second)

        try await store.deleteUser(name: "alice")
        #expect(try await store.accountPasswordStamp(user: "alice") == nil)
        try await store.createUser(name: "alice", password: "secret")
        let again = try #require(try await store.accountPasswordStamp(user: "alice"))
        #expect(again != first && again != second)
    }

    /// The inline GET's read (`InlineResourceReads`) gives the login's stamp with the card,
    /// as `accountPasswordStamp` would: the owner's own, another login's (a sharee reading
    /// the book), nil once the account password no longer signs in, and with a miss too.
    @Test(arguments: StoreBackend.allCases)
    func theInlineReadGivesTheLoginsStampWithTheCardOrWithoutOne(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        let reads = try #require(store as? any InlineResourceReads)
        _ = try await fixture.put("a.vcf", fn: "A")
        try await store.createUser(name: "bob", password: "bob's secret")
        @Sendable func read(_ name: String, as user: String) async -> InlineRead? {
            await withCheckedContinuation { continuation in
                reads.readInline(owner: "alice", collectionPath: ["default"], name: name, stampOf: user) {
                    continuation.resume(returning: $0)
                }
            }
        }
        let alice = try #require(try await store.accountPasswordStamp(user: "alice"))
        let bob = try #require(try await store.accountPasswordStamp(user: "bob"))

        let own = try #require(await read("a.vcf", as: "alice"))
        #expect(own.found?.resource.info.name == "a.vcf")
        #expect(own.stamp == alice)
        let sharee = try #require(await read("a.vcf", as: "bob"))
        #expect(sharee.found?.resource.info.name == "a.vcf")
        #expect(sharee.stamp == bob)
        #expect(await read("a.vcf", as: "nobody")?.stamp == nil)
        let miss = try #require(await read("gone.vcf", as: "alice"))
        #expect(miss.found == nil)
        #expect(miss.stamp == alice)

        try await store.updateAccount(name: "alice", UserAccountUpdate(appPasswordsOnly: true))
        let appPasswordsOnly = try #require(await read("a.vcf", as: "alice"))
        #expect(appPasswordsOnly.found != nil)
        #expect(appPasswordsOnly.stamp == nil)
        #expect(await read("a.vcf", as: "bob")?.stamp == bob)
        try await store.updateAccount(name: "alice", UserAccountUpdate(appPasswordsOnly: false, disabled: true))
        #expect(await read("a.vcf", as: "alice")?.stamp == nil)
        #expect(await read("gone.vcf", as: "alice")?.stamp == nil)
    }

    @Test func thePasswordRuleNamesWhatItRefuses() {
        #expect(throws: StoreError.passwordTooShort) { try AccountRules.checkPassword("") }
        #expect(throws: StoreError.passwordTooShort) { try AccountRules.checkPassword("1234567") }
        // Characters, not bytes: eight umlauts are eight characters.
        #expect(throws: Never.self) { try AccountRules.checkPassword("12345678") }
        #expect(throws: Never.self) { try AccountRules.checkPassword(String(repeating: "ä", count: 8)) }
        #expect(throws: Never.self) { try AccountRules.checkPassword(String(repeating: "a", count: 72)) }
        #expect(throws: StoreError.passwordTooLong) { try AccountRules.checkPassword(String(repeating: "a", count: 73)) }
        #expect(throws: StoreError.passwordTooLong) { try AccountRules.checkPassword(String(repeating: "ä", count: 37)) }
        #expect(throws: StoreError.passwordControl) { try AccountRules.checkPassword("long enough\n") }
        #expect(throws: StoreError.passwordControl) { try AccountRules.checkPassword("long\u{0}enough") }
        #expect(StoreError.passwordTooShort == .invalid("a password needs at least 8 characters"))
    }
}
