import Foundation
import Testing
@testable import RoloSQLite
@testable import RoloStore

@Suite(.closesStores) struct UserTests {
    @Test(arguments: StoreBackend.allCases)
    func createdUserVerifiesOnlyItsOwnPasswordAndGetsADefaultBook(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        #expect(try await store.verifyPassword(user: "alice", password: "secret"))
        #expect(try await !store.verifyPassword(user: "alice", password: "Secret"))
        #expect(try await !store.verifyPassword(user: "nobody", password: "secret"))
        #expect(fixture.book.kind == .addressBook)
        #expect(fixture.book.displayName == "Contacts")
        #expect(fixture.book.owner == "alice")
        #expect(try await store.listUsers() == ["alice"])
    }

    @Test(arguments: StoreBackend.allCases)
    func passwordHashIsBcryptNotThePassword(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let hash = try await fixture.texts("SELECT password_hash FROM users WHERE name = 'alice'").first
        #expect(hash?.hasPrefix("$2") == true)
        #expect(hash?.contains("secret") == false)
    }

    @Test(arguments: StoreBackend.allCases)
    func setPasswordReplacesTheOldOne(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await fixture.store.setPassword(user: "alice", password: "new one")
        #expect(try await fixture.store.verifyPassword(user: "alice", password: "new one"))
        #expect(try await !fixture.store.verifyPassword(user: "alice", password: "secret"))
        await #expect(throws: StoreError.noSuchUser) {
            try await fixture.store.setPassword(user: "bob", password: "x")
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func duplicateAndInvalidUserNamesAreRefused(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        await #expect(throws: StoreError.userExists) {
            try await fixture.store.createUser(name: "alice", password: "x")
        }
        for bad in ["", "a/b", "..", ".", "nul\0", String(repeating: "x", count: 256)] {
            await #expect(throws: StoreError.self) { try await fixture.store.createUser(name: bad, password: "x") }
        }
        #expect(try await fixture.store.listUsers() == ["alice"])
    }

    @Test(arguments: StoreBackend.allCases)
    func deletingAUserRemovesEverythingTheyOwn(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await fixture.put("a.vcf")
        try await fixture.store.createUser(name: "bob", password: "pw")
        try await fixture.store.deleteUser(name: "alice")
        #expect(try await fixture.store.listUsers() == ["bob"])
        #expect(try await fixture.store.collection(id: fixture.book.id) == nil)
        let leftovers = try await fixture.integer(
            "SELECT (SELECT COUNT(*) FROM resources) + (SELECT COUNT(*) FROM card_index) + (SELECT COUNT(*) FROM changes)")
        #expect(leftovers == 0)
        #expect(try await fixture.integrityCheck() == [])
        await #expect(throws: StoreError.noSuchUser) { try await fixture.store.deleteUser(name: "alice") }
    }
}
