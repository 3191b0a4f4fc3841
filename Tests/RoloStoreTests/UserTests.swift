import Foundation
import GRDB
import Testing
@testable import RoloStore

@Suite struct UserTests {
    @Test func createdUserVerifiesOnlyItsOwnPasswordAndGetsADefaultBook() async throws {
        let fixture = try await StoreFixture.make()
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

    @Test func passwordHashIsBcryptNotThePassword() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        let hash = try await fixture.store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT password_hash FROM users WHERE name = 'alice'")
        }
        #expect(hash?.hasPrefix("$2") == true)
        #expect(hash?.contains("secret") == false)
    }

    @Test func setPasswordReplacesTheOldOne() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.store.setPassword(user: "alice", password: "new one")
        #expect(try await fixture.store.verifyPassword(user: "alice", password: "new one"))
        #expect(try await !fixture.store.verifyPassword(user: "alice", password: "secret"))
        await #expect(throws: StoreError.noSuchUser) {
            try await fixture.store.setPassword(user: "bob", password: "x")
        }
    }

    @Test func duplicateAndInvalidUserNamesAreRefused() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        await #expect(throws: StoreError.userExists) {
            try await fixture.store.createUser(name: "alice", password: "x")
        }
        for bad in ["", "a/b", "..", ".", "nul\0", String(repeating: "x", count: 256)] {
            await #expect(throws: StoreError.self) { try await fixture.store.createUser(name: bad, password: "x") }
        }
        #expect(try await fixture.store.listUsers() == ["alice"])
    }

    @Test func deletingAUserRemovesEverythingTheyOwn() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("a.vcf")
        try await fixture.store.createUser(name: "bob", password: "pw")
        try await fixture.store.deleteUser(name: "alice")
        #expect(try await fixture.store.listUsers() == ["bob"])
        #expect(try await fixture.store.collection(id: fixture.book.id) == nil)
        let leftovers = try await fixture.store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT COUNT(*) FROM resources) + (SELECT COUNT(*) FROM card_index) + (SELECT COUNT(*) FROM changes)")
        }
        #expect(leftovers == 0)
        #expect(try await fixture.store.integrityCheck() == [])
        await #expect(throws: StoreError.noSuchUser) { try await fixture.store.deleteUser(name: "alice") }
    }
}
