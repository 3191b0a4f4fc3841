import Crypto
import Foundation
import GRDB
import Testing
@testable import RoloSQLite
@testable import RoloStore

/// Feeds at secret URLs (issue 33), on both back ends: the secret opens its feed and nothing
/// else, only its hash is stored, books are chosen by the names the user's home shows, and a
/// revoked feed is gone.
@Suite(.closesStores) struct FeedStoreTests {
    static func feeds(_ fixture: StoreFixture) throws -> any FeedStore {
        try #require(fixture.store as? any FeedStore)
    }

    @Test(arguments: StoreBackend.allCases)
    func aFeedIsFoundByItsSecretAndListedWithoutIt(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = try Self.feeds(fixture)
        let made = try await store.createFeed(user: "alice", kind: .birthdays, books: [])
        #expect(made.secret.utf8.count == 43)
        #expect(made.secret.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        #expect(made.feed.kind == .birthdays && made.feed.user == "alice" && made.feed.bookIDs.isEmpty && made.feed.lastRead == nil)
        #expect(try await store.feed(secret: made.secret) == made.feed)
        #expect(try await store.feeds(user: "alice") == [made.feed])
        let other = try await store.createFeed(user: "alice", kind: .yealink, books: [])
        #expect(other.secret != made.secret)
        #expect(try await store.feeds(user: "alice").map(\.id) == [made.feed.id, other.feed.id])
    }

    @Test(arguments: StoreBackend.allCases)
    func aWrongSecretOpensNothing(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = try Self.feeds(fixture)
        let made = try await store.createFeed(user: "alice", kind: .snom, books: [])
        var wrong = Array(made.secret)
        wrong[0] = wrong[0] == "A" ? "B" : "A"
        for secret in [String(wrong), "", "short", made.secret + "x", String(made.secret.dropLast()) + "=",
                       String(repeating: "/", count: 43)] {
            #expect(try await store.feed(secret: secret) == nil, "\(secret)")
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func onlyTheSecretsHashIsStored(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = try Self.feeds(fixture)
        let made = try await store.createFeed(user: "alice", kind: .fritzbox, books: [])
        let snapshots = try #require(fixture.store as? any StoreSnapshotting)
        let reader = try await snapshots.snapshotReader()
        let records = try await reader.snapshotPage(.feeds, after: nil, limit: 10)
        await reader.close()
        guard case .feed(let row) = try #require(records.first) else { Issue.record("not a feed"); return }
        #expect(records.count == 1)
        #expect(row.secretHash == Data(SHA256.hash(data: Data(made.secret.utf8))))
        #expect(row.secretHash.range(of: Data(made.secret.utf8)) == nil)
        #expect(row.kind == "fritzbox")
    }

    @Test(arguments: StoreBackend.allCases)
    func booksAreChosenByTheirNamesOwnAndAcceptedShares(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        let feeds = try Self.feeds(fixture)
        try await store.createUser(name: "bob", password: "pw")
        try await store.createCollection(owner: "bob", path: ["work"], kind: .addressBook, displayName: nil, description: nil)
        try await store.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: true)
        let mount = try #require(try await store.mounts(sharee: "bob").first?.mount?.name)
        let bobsWork = try #require(try await store.collection(owner: "bob", path: ["work"]))
        let made = try await feeds.createFeed(user: "bob", kind: .birthdays, books: [mount, "work", "work"])
        #expect(made.feed.bookIDs == [fixture.book.id, bobsWork.id].sorted())
        #expect(made.feed.bookNames == [mount, "work"].sorted())

        // Unshared, the book leaves the listing's names (reads check access again).
        try await store.removeShare(owner: "alice", book: "default", sharee: "bob")
        #expect(try await feeds.feeds(user: "bob").first?.bookNames == ["work"])
    }

    @Test(arguments: StoreBackend.allCases)
    func aBookTheUserCannotReadIsRefusedByNameAndNothingIsMade(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        let feeds = try Self.feeds(fixture)
        try await store.createUser(name: "bob", password: "pw")
        try await store.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: false)
        // A pending share is not the sharee's to choose yet; bob's own default exists.
        let pending = try #require(try await store.shares(of: "bob").first).mountName
        for book in ["nosuch", pending] {
            await #expect(throws: StoreError.noAddressBook(user: "bob", book: book)) {
                _ = try await feeds.createFeed(user: "bob", kind: .yealink, books: ["default", book])
            }
        }
        #expect(try await feeds.feeds(user: "bob").isEmpty)
        await #expect(throws: StoreError.noSuchUser) { _ = try await feeds.createFeed(user: "nobody", kind: .snom, books: []) }
    }

    @Test(arguments: StoreBackend.allCases)
    func aRevokedFeedIsGoneAndOnlyItsOwnerCanRevokeIt(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        let feeds = try Self.feeds(fixture)
        try await store.createUser(name: "bob", password: "pw")
        let made = try await feeds.createFeed(user: "alice", kind: .birthdays, books: ["default"])
        await #expect(throws: StoreError.notFound) { try await feeds.revokeFeed(user: "bob", id: made.feed.id) }
        #expect(try await feeds.feed(secret: made.secret) != nil)
        try await feeds.revokeFeed(user: "alice", id: made.feed.id)
        #expect(try await feeds.feed(secret: made.secret) == nil)
        #expect(try await feeds.feeds(user: "alice").isEmpty)
        await #expect(throws: StoreError.notFound) { try await feeds.revokeFeed(user: "alice", id: made.feed.id) }
    }

    @Test(arguments: StoreBackend.allCases)
    func aReadIsNotedAndADisabledUsersFeedsAnswerNothing(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        let feeds = try Self.feeds(fixture)
        let made = try await feeds.createFeed(user: "alice", kind: .birthdays, books: [])
        let read = Date(timeIntervalSince1970: 1_800_000_000)
        try await feeds.noteFeedRead(id: made.feed.id, at: read)
        #expect(try await feeds.feed(secret: made.secret)?.lastRead == read)
        try await store.updateAccount(name: "alice", UserAccountUpdate(disabled: true))
        #expect(try await feeds.feed(secret: made.secret) == nil)
    }

    @Test(arguments: StoreBackend.allCases)
    func aDeletedUsersFeedsGoWithThem(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let feeds = try Self.feeds(fixture)
        try await fixture.store.createUser(name: "bob", password: "pw")
        let bobs = try await feeds.createFeed(user: "bob", kind: .yealink, books: [])
        let alices = try await feeds.createFeed(user: "alice", kind: .yealink, books: [])
        try await fixture.store.deleteUser(name: "bob")
        #expect(try await feeds.feed(secret: bobs.secret) == nil)
        #expect(try await feeds.feed(secret: alices.secret) != nil)
        try await fixture.store.createUser(name: "bob", password: "pw")
        #expect(try await feeds.feeds(user: "bob").isEmpty)
    }

    /// The test-control API's reset empties the store: feeds go with their users.
    @Test(arguments: StoreBackend.allCases)
    func erasingTheStoreRemovesFeeds(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let feeds = try Self.feeds(fixture)
        let made = try await feeds.createFeed(user: "alice", kind: .birthdays, books: [])
        try await fixture.store.eraseAll()
        #expect(try await feeds.feed(secret: made.secret) == nil)
        try await fixture.store.createUser(name: "alice", password: "pw")
        #expect(try await feeds.feeds(user: "alice").isEmpty)
        #expect(try await feeds.createFeed(user: "alice", kind: .snom, books: []).feed.id == 1)
    }

    @Test func aVersion11DatabaseUpgradesAndKeepsFeeds() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-v11-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("v11.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(queue, upTo: "v11-dead-property-language")
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO users (id, name, password_hash, created) VALUES (1, 'alice', 'x', 0)")
        }
        try queue.close()
        let secret: String
        do {
            let store = try SQLiteStore(path: path, bcryptCost: 4)
            secret = try await store.createFeed(user: "alice", kind: .birthdays, books: []).secret
            try store.close()
        }
        let store = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? store.close() }
        #expect(try await store.feed(secret: secret)?.user == "alice")
    }
}
