import Foundation
import GRDB
import Testing
@testable import RoloSQLite
@testable import RoloStore

@Suite(.closesStores) struct SharingStoreTests {
    @Test func aVersion5DatabaseUpgradesKeepingEveryCardETagAndSyncToken() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-v5-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("v5.sqlite").path
        // A database as the previous release leaves it: two cards, one deletion.
        let queue = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(queue, upTo: "v5-pending-index")
        let body = Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:a\r\nFN:Ann\r\nEND:VCARD\r\n".utf8)
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO users (id, name, password_hash, created) VALUES (1, 'alice', 'x', 0);
                INSERT INTO collections (id, owner_id, parent_id, path, kind, sync_seq, created, modified)
                    VALUES (1, 1, NULL, 'default', 'addressbook', 3, 0, 0);
                INSERT INTO resources (id, collection_id, name, content_type, etag, size, modified, seq, uid, kind)
                    VALUES (1, 1, 'a.vcf', 'text/vcard', '"etag-a"', \(body.count), 0, 1, 'a', 'individual');
                INSERT INTO changes (collection_id, seq, name, deleted, at) VALUES (1, 1, 'a.vcf', 0, 0), (1, 3, 'b.vcf', 1, 0);
                """)
            try db.execute(sql: "INSERT INTO resource_bodies (resource_id, data) VALUES (1, ?)", arguments: [body])
        }
        try queue.close()

        let store = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? store.close() }
        let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
        #expect(book.syncSeq == 3)
        let card = try #require(try await store.resource(collectionID: 1, name: "a.vcf"))
        #expect(card.info.etag == "\"etag-a\"" && card.data == body)
        let changes = try await store.changes(collectionID: 1, since: 1, limit: nil)
        #expect(changes.changes.map(\.name) == ["b.vcf"] && changes.changes[0].deleted && changes.newSeq == 3)
        let account = try #require(try await store.account(name: "alice"))
        #expect(!account.appPasswordsOnly && !account.admin)
        #expect(try await store.shares(of: "alice").isEmpty)
    }

    @Test(arguments: StoreBackend.allCases)
    func aShareIsInvisibleUntilAcceptedAndGoesAtOnceWhenRemoved(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createUser(name: "bob", password: "pw")
        try await fixture.put("ann.vcf", fn: "Ann")
        let homeBefore = try #require(try await store.account(name: "bob")).homeSeq

        let pending = try await store.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: false)
        #expect(pending.state == .pending && pending.mountName == "default~alice")
        #expect(try await store.mounts(sharee: "bob").isEmpty)
        #expect(try await store.mount(sharee: "bob", name: "default~alice") == nil)
        #expect(try await store.account(name: "bob")?.homeSeq == homeBefore)

        try await store.acceptShare(sharee: "bob", owner: "alice", book: "default")
        let mounted = try #require(try await store.mount(sharee: "bob", name: "default~alice"))
        #expect(mounted.id == fixture.book.id && mounted.owner == "alice" && mounted.path == ["default"])
        #expect(mounted.mount?.access == .readOnly && mounted.mount?.displayName == "Contacts (alice)")
        #expect(try await store.account(name: "bob")!.homeSeq > homeBefore)
        #expect(try await store.shares(of: "bob").map(\.state) == [.accepted])

        // Sharing again changes the access of the same share.
        try await store.shareBook(owner: "alice", book: "default", with: "bob", access: .readWrite, accepted: false)
        #expect(try await store.mount(sharee: "bob", name: "default~alice")?.mount?.access == .readWrite)

        let beforeRename = try await store.account(name: "bob")!.homeSeq
        try await store.renameMount(sharee: "bob", name: "default~alice", displayName: "Family")
        #expect(try await store.mount(sharee: "bob", name: "default~alice")?.mount?.displayName == "Family")
        #expect(try await store.account(name: "bob")!.homeSeq > beforeRename)

        let beforeRemove = try await store.account(name: "bob")!.homeSeq
        try await store.removeShare(owner: "alice", book: "default", sharee: "bob")
        #expect(try await store.mount(sharee: "bob", name: "default~alice") == nil)
        #expect(try await store.account(name: "bob")!.homeSeq > beforeRemove)
        #expect(try await store.resource(collectionID: fixture.book.id, name: "ann.vcf") != nil)
    }

    @Test(arguments: StoreBackend.allCases)
    func badSharesAreRefusedAndChangeNothing(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createUser(name: "bob", password: "pw")
        await #expect(throws: StoreError.invalid("a book cannot be shared with its own owner")) {
            try await store.shareBook(owner: "alice", book: "default", with: "alice", access: .readOnly, accepted: true)
        }
        await #expect(throws: StoreError.invalid("there is no user zed")) {
            try await store.shareBook(owner: "alice", book: "default", with: "zed", access: .readOnly, accepted: true)
        }
        await #expect(throws: StoreError.notFound) {
            try await store.shareBook(owner: "alice", book: "nope", with: "bob", access: .readOnly, accepted: true)
        }
        await #expect(throws: StoreError.notFound) {
            try await store.acceptShare(sharee: "bob", owner: "alice", book: "default")
        }
        // `~` is the mounts' mark: no collection may take it.
        await #expect(throws: StoreError.self) {
            try await store.createCollection(owner: "bob", path: ["default~alice"], kind: .addressBook, displayName: nil, description: nil)
        }
        #expect(try await store.shares(of: "alice").isEmpty)
    }

    @Test(arguments: StoreBackend.allCases)
    func deletingASharedBookRemovesItsMountsAndMovesTheShareesHome(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createUser(name: "bob", password: "pw")
        let work = try await store.createCollection(owner: "alice", path: ["work"], kind: .addressBook, displayName: "Work", description: nil)
        try await store.shareBook(owner: "alice", book: "work", with: "bob", access: .readWrite, accepted: true)
        let before = try await store.account(name: "bob")!.homeSeq
        try await store.deleteCollection(id: work.id)
        #expect(try await store.mounts(sharee: "bob").isEmpty)
        #expect(try await store.account(name: "bob")!.homeSeq > before)
    }

    @Test(arguments: StoreBackend.allCases)
    func appPasswordsAreCheckedByKeyedHashScopedAndRevocable(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createUser(name: "bob", password: "pw")
        let phone = try await store.createAppPassword(user: "alice", name: "Phone", readOnly: true, books: ["default"])
        #expect(phone.secret.hasPrefix("rolo_") && phone.secret.count == 5 + 8 + 1 + 40)
        #expect(phone.appPassword.scope == CredentialScope(readOnly: true, books: [fixture.book.id]))
        #expect(phone.appPassword.bookNames == ["default"])

        let check = try #require(try await store.checkAppPassword(user: "alice", secret: phone.secret))
        #expect(check.scope.readOnly && check.scope.books == [fixture.book.id] && !check.revoked)
        // Someone else's name, a wrong secret, a malformed one: not an app password.
        #expect(try await store.checkAppPassword(user: "bob", secret: phone.secret) == nil)
        var wrong = phone.secret
        wrong.removeLast(); wrong.append(phone.secret.last == "0" ? "1" : "0")
        #expect(try await store.checkAppPassword(user: "alice", secret: wrong) == nil)
        #expect(try await store.checkAppPassword(user: "alice", secret: "secret") == nil)
        // Only the hash is stored.
        let stored = try await fixture.blobs("SELECT secret_hash FROM app_passwords")
        #expect(stored.count == 1 && !stored[0].isEmpty && String(decoding: stored[0], as: UTF8.self) != phone.secret)

        await #expect(throws: StoreError.invalid("alice already has an app password named Phone")) {
            try await store.createAppPassword(user: "alice", name: "Phone", readOnly: false, books: nil)
        }
        await #expect(throws: StoreError.invalid("alice has no address book nope")) {
            try await store.createAppPassword(user: "alice", name: "Laptop", readOnly: false, books: ["nope"])
        }
        let laptop = try await store.createAppPassword(user: "alice", name: "Laptop", readOnly: false, books: nil)
        #expect(try await store.checkAppPassword(user: "alice", secret: laptop.secret)?.scope == .full)

        try await store.revokeAppPassword(user: "alice", name: "Phone")
        #expect(try await store.checkAppPassword(user: "alice", secret: phone.secret)?.revoked == true)
        let listed = try await store.appPasswords(user: "alice")
        #expect(listed.map(\.name) == ["Phone", "Laptop"] && listed[0].revoked != nil && listed[1].revoked == nil)
        // A revoked password's name can be used again.
        _ = try await store.createAppPassword(user: "alice", name: "Phone", readOnly: false, books: nil)
    }

    @Test(arguments: StoreBackend.allCases)
    func theHistoryCountsPerCredentialBookAndHourAndRollsUpIntoDays(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createUser(name: "bob", password: "pw")
        try await store.shareBook(owner: "alice", book: "default", with: "bob", access: .readWrite, accepted: true)
        let phone = try await store.createAppPassword(user: "bob", name: "Bob's phone", readOnly: false, books: nil)
        let book = fixture.book.id
        let hour: Int64 = 1_790_000_000 / 3600 * 3600
        try await store.recordAccess([
            AccessTally(user: "alice", credentialID: 0, bookID: book, hour: hour, requests: 2, cardsRead: 50, fullDownload: true),
            AccessTally(user: "bob", credentialID: phone.appPassword.id, bookID: book, hour: hour, requests: 1, cardsWritten: 1),
        ], uses: [CredentialUse(credentialID: phone.appPassword.id, at: Date(timeIntervalSince1970: Double(hour)),
                                address: "192.0.2.0", userAgent: "DAVx5")])
        try await store.recordAccess([AccessTally(user: "alice", credentialID: 0, bookID: book, hour: hour, requests: 1, cardsRead: 1)],
                                     uses: [])
        let alice = try await store.accessHistory(user: "alice", since: Date(timeIntervalSince1970: 0))
        let own = try #require(alice.first { $0.user == "alice" })
        #expect(own.requests == 3 && own.cardsRead == 51 && own.fullDownload && own.credential == nil && own.book == "default")
        // The owner sees the sharee's writes, not the sharee's device.
        let bob = try #require(alice.first { $0.user == "bob" })
        #expect(bob.cardsWritten == 1 && bob.credential == nil)
        let bobsView = try await store.accessHistory(user: "bob", since: Date(timeIntervalSince1970: 0))
        #expect(bobsView.map(\.credential) == ["Bob's phone"] && bobsView[0].bookOwner == "alice")
        let used = try #require(try await store.appPasswords(user: "bob").first)
        #expect(used.lastAddress == "192.0.2.0" && used.lastUserAgent == "DAVx5" && used.lastUsed != nil)

        // 31 days later the hours become one day; 13 months later that goes too.
        let later = Date(timeIntervalSince1970: Double(hour) + 31 * 86_400)
        try await store.pruneAccessHistory(now: later, retention: .default)
        let rolled = try await store.accessHistory(user: "alice", since: Date(timeIntervalSince1970: 0))
        #expect(rolled.allSatisfy { $0.period == .day })
        #expect(rolled.first { $0.user == "alice" }?.cardsRead == 51)
        try await store.pruneAccessHistory(now: later.addingTimeInterval(400 * 86_400), retention: .default)
        #expect(try await store.accessHistory(user: "alice", since: Date(timeIntervalSince1970: 0)).isEmpty)
    }

    @Test(arguments: StoreBackend.allCases)
    func eachChangeRecordsWhichUserAndCredentialMadeIt(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        let phone = try await store.createAppPassword(user: "alice", name: "Phone", readOnly: false, books: nil)
        try await ChangeAuthor.$current.withValue(ChangeAuthor(user: "alice", credentialID: phone.appPassword.id)) {
            try await fixture.put("a.vcf")
        }
        let byPhone = try await store.attributedChanges(collectionID: fixture.book.id, limit: 1)
        #expect(byPhone.first?.credential == "Phone" && byPhone.first?.user == "alice")
        try await ChangeAuthor.$current.withValue(ChangeAuthor(user: "alice", credentialID: 0)) {
            try await fixture.put("b.vcf")
            try await store.deleteResource(collectionID: fixture.book.id, name: "a.vcf", precondition: .none)
        }
        let changes = try await store.attributedChanges(collectionID: fixture.book.id, limit: 10)
        #expect(changes.map(\.name) == ["a.vcf", "b.vcf"])
        #expect(changes[0].deleted && changes[0].credential == "account password" && changes[0].user == "alice")
        #expect(changes[1].credential == "account password")
        try await fixture.put("c.vcf")
        #expect(try await store.attributedChanges(collectionID: fixture.book.id, limit: 1).first?.user == nil)
    }
}
