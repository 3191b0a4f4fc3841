import Foundation
import GRDB
import Synchronization
import Testing
@testable import RoloSQLite
@testable import RoloStore

/// A clock a test moves by hand: expiry without sleeping.
final class ManualClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var storeClock: StoreClock { StoreClock { [self] in now } }
}

@Suite(.closesStores) struct PushStoreTests {
    static let key = Data([0x04] + Array(repeating: 7, count: 64))
    static let secret = Data(repeating: 9, count: 16)

    func request(_ fixture: StoreFixture, user: String = "alice", resource: String = "https://push.example/a",
                 credential: Int64 = 0, expires: Date) -> PushRegistrationRequest {
        PushRegistrationRequest(user: user, collectionID: fixture.book.id, credentialID: credential, pushResource: resource,
                                publicKey: Self.key, authSecret: Self.secret, expires: expires)
    }

    static func fixture(_ backend: StoreBackend, clock: ManualClock) async throws -> StoreFixture {
        try await StoreFixture.make(backend, clock: clock.storeClock)
    }

    @Test(arguments: StoreBackend.allCases)
    func registeringTheSamePushResourceAgainRenewsTheSameRow(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let fixture = try await Self.fixture(backend, clock: clock)
        defer { fixture.close() }
        let store = fixture.store
        let first = try await store.registerPush(request(fixture, expires: clock.now.addingTimeInterval(86_400)), limit: 5)
        #expect(first.id.count == 32 && first.failures == 0)
        try await store.recordPushOutcome(id: first.id, .failed(retryAfter: clock.now.addingTimeInterval(60)))
        let renewed = try await store.registerPush(request(fixture, expires: clock.now.addingTimeInterval(3 * 86_400)), limit: 5)
        #expect(renewed.id == first.id)
        #expect(renewed.expires == clock.now.addingTimeInterval(3 * 86_400))
        #expect(renewed.failures == 0 && renewed.retryAfter == nil)
        #expect(try await store.pushRegistrations(collectionID: fixture.book.id).count == 1)
        // Another push resource is another registration.
        let other = try await store.registerPush(request(fixture, resource: "https://push.example/b",
                                                         expires: clock.now.addingTimeInterval(86_400)), limit: 5)
        #expect(other.id != first.id)
        #expect(try await store.pushRegistrations(collectionID: fixture.book.id).count == 2)
    }

    @Test(arguments: StoreBackend.allCases)
    func aUserHasABoundedNumberOfLiveRegistrationsPerBook(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let fixture = try await Self.fixture(backend, clock: clock)
        defer { fixture.close() }
        for index in 0..<3 {
            try await fixture.store.registerPush(request(fixture, resource: "https://push.example/\(index)",
                                                         expires: clock.now.addingTimeInterval(100)), limit: 3)
        }
        await #expect(throws: StoreError.self) {
            try await fixture.store.registerPush(request(fixture, resource: "https://push.example/x",
                                                         expires: clock.now.addingTimeInterval(100)), limit: 3)
        }
        // Renewing one of the three is not a fourth.
        try await fixture.store.registerPush(request(fixture, resource: "https://push.example/1",
                                                     expires: clock.now.addingTimeInterval(200)), limit: 3)
        // Expired ones make room.
        clock.advance(150)
        try await fixture.store.registerPush(request(fixture, resource: "https://push.example/x",
                                                     expires: clock.now.addingTimeInterval(100)), limit: 3)
        #expect(try await fixture.store.pushRegistrations(collectionID: fixture.book.id).count == 2)
    }

    @Test(arguments: StoreBackend.allCases)
    func expiredRegistrationsAreNeitherListedNorDeletableAndArePruned(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let fixture = try await Self.fixture(backend, clock: clock)
        defer { fixture.close() }
        let store = fixture.store
        let registration = try await store.registerPush(request(fixture, expires: clock.now.addingTimeInterval(60)), limit: 5)
        clock.advance(61)
        #expect(try await store.pushRegistrations(collectionID: fixture.book.id).isEmpty)
        #expect(try await store.deletePushRegistration(id: registration.id, user: "alice") == false)
        #expect(try await store.pushRegistrations(user: "alice").count == 1)
        #expect(try await store.prunePushRegistrations() == 1)
        #expect(try await store.pushRegistrations(user: "alice").isEmpty)
    }

    @Test(arguments: StoreBackend.allCases)
    func onlyItsOwnerDeletesARegistration(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let fixture = try await Self.fixture(backend, clock: clock)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createUser(name: "mallory", password: "pw")
        let registration = try await store.registerPush(request(fixture, expires: clock.now.addingTimeInterval(600)), limit: 5)
        #expect(try await store.deletePushRegistration(id: registration.id, user: "mallory") == false)
        #expect(try await store.deletePushRegistration(id: registration.id, user: "alice"))
        #expect(try await store.deletePushRegistration(id: registration.id, user: "alice") == false)
    }

    @Test(arguments: StoreBackend.allCases)
    func registrationsGoWithTheirBookShareUserAndCredential(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let fixture = try await Self.fixture(backend, clock: clock)
        defer { fixture.close() }
        let store = fixture.store
        let later = clock.now.addingTimeInterval(600)
        try await store.createUser(name: "bob", password: "pw")
        _ = try await store.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: true)
        let phone = try await store.createAppPassword(user: "alice", name: "phone", readOnly: false, books: nil)
        try await store.registerPush(request(fixture, resource: "https://push.example/owner", credential: phone.appPassword.id,
                                             expires: later), limit: 5)
        try await store.registerPush(request(fixture, resource: "https://push.example/account", expires: later), limit: 5)
        try await store.registerPush(request(fixture, user: "bob", resource: "https://push.example/sharee", expires: later), limit: 5)
        func resources() async throws -> Set<String> {
            Set(try await store.pushRegistrations(collectionID: fixture.book.id).map(\.pushResource))
        }
        #expect(try await resources().count == 3)

        try await store.revokeAppPassword(user: "alice", name: "phone")
        #expect(try await resources() == ["https://push.example/account", "https://push.example/sharee"])
        try await store.removeShare(owner: "alice", book: "default", sharee: "bob")
        #expect(try await resources() == ["https://push.example/account"])
        try await store.deleteCollection(id: fixture.book.id)
        #expect(try await store.pushRegistrations(user: "alice").isEmpty)
    }

    @Test(arguments: StoreBackend.allCases)
    func topicsAreRandomStableAcrossRenamesAndDistinct(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        let topic = try await store.pushTopic(collectionID: fixture.book.id)
        #expect(topic.count == 32 && topic.allSatisfy(\.isHexDigit))
        let other = try await store.createCollection(owner: "alice", path: ["work"], kind: .addressBook,
                                                     displayName: nil, description: nil)
        #expect(try await store.pushTopic(collectionID: other.id) != topic)
        try await store.updateCollection(id: fixture.book.id, displayName: "Renamed", description: nil)
        #expect(try await store.pushTopic(collectionID: fixture.book.id) == topic)
        await #expect(throws: StoreError.notFound) { try await store.pushTopic(collectionID: 999) }
    }

    @Test(arguments: StoreBackend.allCases)
    func theVAPIDKeyIsMadeOnceAndRotatingItDropsEveryRegistration(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let fixture = try await Self.fixture(backend, clock: clock)
        defer { fixture.close() }
        let store = fixture.store
        let made = try await store.pushKey { Data(repeating: 1, count: 32) }
        #expect(try await store.pushKey { Data(repeating: 2, count: 32) } == made)
        try await store.registerPush(request(fixture, expires: clock.now.addingTimeInterval(600)), limit: 5)
        try await store.rotatePushKey(to: Data(repeating: 3, count: 32))
        #expect(try await store.pushKey { Data(repeating: 4, count: 32) } == Data(repeating: 3, count: 32))
        #expect(try await store.pushRegistrations(user: "alice").isEmpty)
    }

    @Test(arguments: StoreBackend.allCases)
    func outcomesAreRecordedAndGoneDeletes(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let fixture = try await Self.fixture(backend, clock: clock)
        defer { fixture.close() }
        let store = fixture.store
        let registration = try await store.registerPush(request(fixture, expires: clock.now.addingTimeInterval(600)), limit: 5)
        let start = clock.now
        try await store.recordPushOutcome(id: registration.id, .failed(retryAfter: start.addingTimeInterval(30)))
        clock.advance(10)
        try await store.recordPushOutcome(id: registration.id, .failed(retryAfter: nil))
        var row = try #require(try await store.pushRegistrations(user: "alice").first)
        #expect(row.failures == 2 && row.firstFailure == start && row.retryAfter == nil)
        try await store.recordPushOutcome(id: registration.id, .delivered)
        row = try #require(try await store.pushRegistrations(user: "alice").first)
        #expect(row.failures == 0 && row.firstFailure == nil && row.lastSuccess == clock.now)
        try await store.recordPushOutcome(id: registration.id, .gone)
        #expect(try await store.pushRegistrations(user: "alice").isEmpty)
    }

    @Test(arguments: StoreBackend.allCases)
    func committedWritesArePublishedWithTheirSeqAndTheRequestsExclusion(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let feed = fixture.store.bookChanges
        try await fixture.put("before.vcf")
        feed.open()
        defer { feed.close() }
        let put = try await fixture.put("a.vcf")
        let exclusion = PushExclusion.registrations(user: "alice", ids: ["r1"])
        try await PushExclusion.$current.withValue(exclusion) {
            try await fixture.store.deleteResource(collectionID: fixture.book.id, name: "before.vcf", precondition: .none)
        }
        let changes = await feed.take()
        // One entry per book: the latest seq, and an exclusion only the two changes share
        // (the PUT excluded nobody).
        #expect(changes == [BookChange(collectionID: fixture.book.id, seq: put.seq + 1, exclusion: .nobody)])
        // A failed write publishes nothing.
        await #expect(throws: StoreError.self) {
            try await fixture.store.deleteResource(collectionID: fixture.book.id, name: "missing.vcf", precondition: .none)
        }
        try await PushExclusion.$current.withValue(exclusion) { try await fixture.put("b.vcf") }
        #expect(await feed.take() == [BookChange(collectionID: fixture.book.id, seq: put.seq + 2, exclusion: exclusion)])
    }

    @Test func exclusionsMergeToWhatEveryChangeExcluded() {
        let a = PushExclusion.registrations(user: "alice", ids: ["1", "2"])
        let b = PushExclusion.registrations(user: "alice", ids: ["2", "3"])
        #expect(a.merged(with: b) == .registrations(user: "alice", ids: ["2"]))
        #expect(PushExclusion.everyone.merged(with: a) == a)
        #expect(a.merged(with: .registrations(user: "bob", ids: ["2"])) == .nobody)
        let mine = PushRegistration(id: "2", user: "alice", collectionID: 1, credentialID: 0, pushResource: "",
                                    publicKey: Data(), authSecret: Data(), expires: .now, created: .now)
        var theirs = mine
        theirs.user = "bob"
        #expect(a.excludes(mine) && !a.excludes(theirs) && PushExclusion.everyone.excludes(theirs))
    }

    @Test func aVersion6DatabaseUpgradesGivingEveryBookATopic() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-v6-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("v6.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(queue, upTo: "v6-sharing")
        let body = Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:a\r\nFN:Ann\r\nEND:VCARD\r\n".utf8)
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO users (id, name, password_hash, created) VALUES (1, 'alice', 'x', 0);
                INSERT INTO collections (id, owner_id, parent_id, path, kind, sync_seq, created, modified)
                    VALUES (1, 1, NULL, 'default', 'addressbook', 3, 0, 0), (2, 1, NULL, 'work', 'addressbook', 0, 0, 0);
                INSERT INTO resources (id, collection_id, name, content_type, etag, size, modified, seq, uid, kind)
                    VALUES (1, 1, 'a.vcf', 'text/vcard', '"etag-a"', \(body.count), 0, 1, 'a', 'individual');
                INSERT INTO changes (collection_id, seq, name, deleted, at) VALUES (1, 1, 'a.vcf', 0, 0), (1, 3, 'b.vcf', 1, 0);
                """)
            try db.execute(sql: "INSERT INTO resource_bodies (resource_id, data) VALUES (1, ?)", arguments: [body])
        }
        try queue.close()

        let store = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? store.close() }
        let card = try #require(try await store.resource(collectionID: 1, name: "a.vcf"))
        #expect(card.info.etag == "\"etag-a\"" && card.data == body)
        let changes = try await store.changes(collectionID: 1, since: 1, limit: nil)
        #expect(changes.changes.map(\.name) == ["b.vcf"] && changes.newSeq == 3)
        let topics = [try await store.pushTopic(collectionID: 1), try await store.pushTopic(collectionID: 2)]
        #expect(topics.allSatisfy { $0.count == 32 } && topics[0] != topics[1])
    }
}
