import Foundation
import Testing
@testable import RoloStore

/// The users' directory entries (issue 32), on both back ends: an entry reads back as set,
/// goes with its user, is refused for an unknown one, and an erased store holds none.
@Suite(.closesStores) struct DirectoryStoreTests {
    static func directory(_ fixture: StoreFixture) throws -> any DirectoryStore {
        try #require(fixture.store as? any DirectoryStore)
    }

    static let entry = DirectoryEntry(displayName: "Alice Liddell", email: "", phones: ["+44 1865 1"], title: "Dreamer",
                                      department: "Wonder", organization: "Oxford", photo: Data([0xFF, 0xD8, 0xFF, 1]),
                                      hidden: false, mountHidden: true)

    @Test(arguments: StoreBackend.allCases)
    func anEntryReadsBackAsSetAndGoesWithItsUser(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = try Self.directory(fixture)
        #expect(try await store.directoryEntries().isEmpty)
        #expect(try await store.directoryEntry(user: "alice") == DirectoryEntry())
        try await store.setDirectoryEntry(user: "alice", Self.entry)
        #expect(try await store.directoryEntries() == ["alice": Self.entry])
        var changed = Self.entry
        changed.hidden = true
        try await store.setDirectoryEntry(user: "alice", changed)
        #expect(try await store.directoryEntry(user: "alice") == changed)
        await #expect(throws: StoreError.noSuchUser) { try await store.setDirectoryEntry(user: "nobody", Self.entry) }
        #expect(try await store.directoryAccounts().map(\.name).contains("alice"))
        try await fixture.store.deleteUser(name: "alice")
        #expect(try await store.directoryEntries().isEmpty)
        #expect(try await !store.directoryAccounts().map(\.name).contains("alice"))
    }

    @Test(arguments: StoreBackend.allCases)
    func erasingTheStoreRemovesEntries(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = try Self.directory(fixture)
        try await store.setDirectoryEntry(user: "alice", Self.entry)
        try await fixture.store.eraseAll()
        try await fixture.store.createUser(name: "alice", password: "pw")
        #expect(try await store.directoryEntries().isEmpty)
    }
}
