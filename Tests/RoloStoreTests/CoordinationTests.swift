import Foundation
import GRDB
import PostgresNIO
import PostgresTestSupport
import Synchronization
import Testing
@testable import RoloPostgres
@testable import RoloSQLite
@testable import RoloStore

/// What several processes on one database coordinate through the store (issue 20): WebDAV
/// write locks, push delivery claims and maintenance leases. The same rules on both
/// backends; on PostgreSQL also across two store instances (two processes).
@Suite(.closesStores) struct CoordinationTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func lock(_ token: String, user: String = "alice", root: String, scope: WriteLockScope = .exclusive,
                     infinite: Bool = true, timeout: Int = 600, at now: Date = start) -> WriteLock {
        WriteLock(token: token, user: user, root: root, rootHref: "/dav/\(root)", scope: scope, infinite: infinite,
                  ownerXML: "<D:href>mailto:\(user)@example.org</D:href>", timeout: timeout,
                  expires: now.addingTimeInterval(TimeInterval(timeout)))
    }

    @Test(arguments: StoreBackend.allCases)
    func locksConflictAsRFC4918SaysAndSharedOnesCoexist(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store, now = Self.start
        #expect(try await store.grantWriteLock(Self.lock("t1", root: "alice/default/a.vcf", infinite: false), maxPerUser: 10, now: now) == nil)
        // An exclusive lock on the same resource, or an infinite one on its book, conflicts.
        #expect(try await store.grantWriteLock(Self.lock("t2", root: "alice/default/a.vcf"), maxPerUser: 10, now: now) == .conflict)
        #expect(try await store.grantWriteLock(Self.lock("t3", root: "alice/default"), maxPerUser: 10, now: now) == .conflict)
        // A sibling is free; a depth-0 lock on the book does not cover its members.
        #expect(try await store.grantWriteLock(Self.lock("t4", root: "alice/default/b.vcf"), maxPerUser: 10, now: now) == nil)
        #expect(try await store.grantWriteLock(Self.lock("t5", root: "alice/other", scope: .shared), maxPerUser: 10, now: now) == nil)
        #expect(try await store.grantWriteLock(Self.lock("t6", root: "alice/other", scope: .shared), maxPerUser: 10, now: now) == nil)
        #expect(try await store.grantWriteLock(Self.lock("t7", root: "alice/other/x", scope: .exclusive), maxPerUser: 10, now: now) == .conflict)
        // Another home never conflicts.
        #expect(try await store.grantWriteLock(Self.lock("t8", user: "bob", root: "bob/default"), maxPerUser: 10, now: now) == nil)

        let found = try await store.writeLocks(covering: "alice/default/a.vcf", descendants: false, now: now)
        #expect(found.map(\.token) == ["t1"])
        #expect(found.first == Self.lock("t1", root: "alice/default/a.vcf", infinite: false))
        #expect(try await store.writeLocks(covering: "alice/default", descendants: true, now: now).map(\.token) == ["t1", "t4"])
        #expect(try await store.writeLocks(covering: "alice/other/y", descendants: false, now: now).map(\.token) == ["t5", "t6"])
        // Erasing the store (a test-control reset) drops them; locks taken afterwards are found.
        try await store.eraseAll()
        #expect(try await store.writeLocks(covering: "alice/default/a.vcf", descendants: false, now: now).isEmpty)
        #expect(try await store.grantWriteLock(Self.lock("z", root: "alice/default/a.vcf"), maxPerUser: 10, now: now) == nil)
        #expect(try await store.writeLocks(covering: "alice/default/a.vcf", descendants: false, now: now).map(\.token) == ["z"])
    }

    @Test(arguments: StoreBackend.allCases)
    func locksExpireRefreshUnlockAndGoWithTheirResource(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store, now = Self.start
        #expect(try await store.grantWriteLock(Self.lock("a", root: "alice/default/a.vcf", timeout: 60), maxPerUser: 10, now: now) == nil)
        // Refresh only through a key the lock covers.
        #expect(try await store.refreshWriteLock(token: "a", key: "alice/default/b.vcf", timeout: 600, now: now) == nil)
        let refreshed = try #require(try await store.refreshWriteLock(token: "a", key: "alice/default/a.vcf", timeout: 600,
                                                                      now: now.addingTimeInterval(30)))
        #expect(refreshed.expires == now.addingTimeInterval(630))
        #expect(refreshed.timeout == 600)
        // Past its expiry it is gone: not found, not refreshable, no conflict.
        let later = now.addingTimeInterval(631)
        #expect(try await store.writeLocks(covering: "alice/default/a.vcf", descendants: false, now: later).isEmpty)
        #expect(try await store.refreshWriteLock(token: "a", key: "alice/default/a.vcf", timeout: 60, now: later) == nil)
        #expect(try await store.grantWriteLock(Self.lock("b", root: "alice/default/a.vcf", at: later), maxPerUser: 10, now: later) == nil)
        // Unlock: the token must apply to the key.
        #expect(try await store.removeWriteLock(token: "b", key: "alice/default/zzz", now: later) == false)
        #expect(try await store.removeWriteLock(token: "b", key: "alice/default/a.vcf", now: later))
        #expect(try await store.removeWriteLock(token: "b", key: "alice/default/a.vcf", now: later) == false)
        // Deleting a collection drops the locks at and below it, not its siblings'.
        for (token, root) in [("c", "alice/files/sub/x"), ("d", "alice/files/sub"), ("e", "alice/files/subway"), ("f", "alice/files2")] {
            #expect(try await store.grantWriteLock(Self.lock(token, root: root, infinite: false, at: later), maxPerUser: 10, now: later) == nil)
        }
        try await store.removeWriteLocks(under: "alice/files/sub")
        #expect(try await store.writeLocks(covering: "alice", descendants: true, now: later).map(\.token) == ["e", "f"])
        try await store.removeAllWriteLocks()
        #expect(try await store.writeLocks(covering: "alice", descendants: true, now: later).isEmpty)
    }

    @Test(arguments: StoreBackend.allCases)
    func aUserHoldsAtMostTheCapOfLocks(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store, now = Self.start
        for index in 0..<3 {
            #expect(try await store.grantWriteLock(Self.lock("l\(index)", root: "alice/default/\(index)"), maxPerUser: 3, now: now) == nil)
        }
        #expect(try await store.grantWriteLock(Self.lock("l3", root: "alice/default/3"), maxPerUser: 3, now: now) == .tooManyLocks)
        #expect(try await store.grantWriteLock(Self.lock("m0", user: "bob", root: "alice/default/9"), maxPerUser: 3, now: now) == nil)
        // Expired ones no longer count.
        let later = now.addingTimeInterval(601)
        #expect(try await store.grantWriteLock(Self.lock("l4", root: "alice/default/4", at: later), maxPerUser: 3, now: later) == nil)
    }

    @Test(arguments: StoreBackend.allCases)
    func onePushClaimWinsPerSeqAndARegistrationStartsAtItsBooksSeq(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await fixture.put("a.vcf")
        try await fixture.put("b.vcf")
        let registration = try await fixture.store.registerPush(PushRegistrationRequest(
            user: "alice", collectionID: fixture.book.id, credentialID: 0, pushResource: "https://push.example/1",
            publicKey: Data(repeating: 4, count: 65), authSecret: Data(repeating: 1, count: 16),
            expires: Date().addingTimeInterval(86_400)), limit: 10)
        // Nothing is owed for the two changes before the registration.
        #expect(try await fixture.store.claimPushDelivery(registrationID: registration.id, seq: 2) == false)
        let claims = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 { group.addTask { (try? await fixture.store.claimPushDelivery(registrationID: registration.id, seq: 3)) ?? false } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(claims.filter { $0 }.count == 1)
        #expect(try await fixture.store.claimPushDelivery(registrationID: registration.id, seq: 3) == false)
        #expect(try await fixture.store.claimPushDelivery(registrationID: registration.id, seq: 5))
        #expect(try await fixture.store.claimPushDelivery(registrationID: "nobody", seq: 9) == false)
    }

    @Test(arguments: StoreBackend.allCases)
    func aMaintenanceLeaseRunsItsBody(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let runs = Shared(0)
        #expect(try await fixture.store.withMaintenanceLease("tidy") { runs.value.withLock { $0 += 1 } })
        #expect(try await fixture.store.withMaintenanceLease("tidy") { runs.value.withLock { $0 += 1 } })
        #expect(runs.value.withLock { $0 } == 2)
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await fixture.store.withMaintenanceLease("tidy") { throw Boom() } }
        // A body that threw gave the lease back.
        #expect(try await fixture.store.withMaintenanceLease("tidy") {})
    }

    @Test(arguments: StoreBackend.allCases)
    func failedLoginsAreCountedPerSubnetAndAccountWithinTheWindow(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store, now = Self.start
        #expect(try await store.recordLoginFailure(subnet: "203.0.113.7", account: "alice", window: 60, now: now)
                == LoginFailureCounts(subnet: 1, account: 1))
        #expect(try await store.recordLoginFailure(subnet: "203.0.113.7", account: "bob", window: 60, now: now.addingTimeInterval(10))
                == LoginFailureCounts(subnet: 2, account: 1))
        #expect(try await store.recordLoginFailure(subnet: "198.51.100.1", account: "alice", window: 60, now: now.addingTimeInterval(20))
                == LoginFailureCounts(subnet: 1, account: 2))
        // Concurrent failures (two processes at once) all count.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask { _ = try? await store.recordLoginFailure(subnet: "203.0.113.7", account: "x", window: 60,
                                                                         now: now.addingTimeInterval(30)) }
            }
        }
        #expect(try await store.recordLoginFailure(subnet: "203.0.113.7", account: "alice", window: 60, now: now.addingTimeInterval(40))
                == LoginFailureCounts(subnet: 9, account: 3))
        // A success from the subnet forgets it, not the account.
        try await store.forgetLoginFailures(subnet: "203.0.113.7")
        #expect(try await store.recordLoginFailure(subnet: "203.0.113.7", account: "alice", window: 60, now: now.addingTimeInterval(41))
                == LoginFailureCounts(subnet: 1, account: 4))
        // A window without failures starts the counts afresh.
        #expect(try await store.recordLoginFailure(subnet: "203.0.113.7", account: "alice", window: 60, now: now.addingTimeInterval(102))
                == LoginFailureCounts(subnet: 1, account: 1))
    }

    // MARK: Two processes on one PostgreSQL database

    /// Two stores on one database, as two processes are, both with `configure`'s settings
    /// and a patient notices heartbeat (`CardCacheTests.patient`).
    static func twoStores(_ configure: (inout PostgresStore.Configuration) -> Void = { _ in }) async throws
        -> (StoreFixture, PostgresStore) {
        let fixture = try await StoreFixture.postgres(configure)
        let store = try #require(fixture.store as? PostgresStore)
        let other = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await other.close() }
        CardCacheTests.patient(store, other)
        return (fixture, other)
    }

    /// Two processes granting conflicting locks at once: exactly one gets it, each round.
    @Test func twoProcessesNeverBothGrantConflictingLocks() async throws {
        let (fixture, other) = try await Self.twoStores()
        defer { fixture.close() }
        let stores: [any RoloStore] = [fixture.store, other]
        for round in 0..<20 {
            let granted = await withTaskGroup(of: Int.self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask {
                        // One locks the card, the other its whole book: these conflict.
                        let root = index == 0 ? "alice/default/r\(round).vcf" : "alice/default"
                        let lock = Self.lock("r\(round)-\(index)", root: root)
                        do {
                            return try await store.grantWriteLock(lock, maxPerUser: 100, now: Self.start) == nil ? 1 : 0
                        } catch {
                            Issue.record("unexpected \(error)")
                            return 0
                        }
                    }
                }
                return await group.reduce(0, +)
            }
            #expect(granted == 1, "round \(round)")
            try await other.removeAllWriteLocks()
        }
        // A lock taken through one process is seen, refreshed and released through the other.
        #expect(try await fixture.store.grantWriteLock(Self.lock("x", root: "alice/default/x.vcf"), maxPerUser: 10, now: Self.start) == nil)
        #expect(try await other.writeLocks(covering: "alice/default/x.vcf", descendants: false, now: Self.start).map(\.token) == ["x"])
        #expect(try await other.refreshWriteLock(token: "x", key: "alice/default/x.vcf", timeout: 60, now: Self.start)?.timeout == 60)
        #expect(try await other.removeWriteLock(token: "x", key: "alice/default/x.vcf", now: Self.start))
        #expect(try await fixture.store.writeLocks(covering: "alice/default/x.vcf", descendants: false, now: Self.start).isEmpty)
    }

    /// Two processes' upkeep at the same moment: one runs the job, the other skips it; once
    /// it is done, the lease is free again.
    @Test func aMaintenanceLeaseIsHeldByOneProcessAtATime() async throws {
        let (fixture, other) = try await Self.twoStores()
        defer { fixture.close() }
        let inside = Shared(0), most = Shared(0), skipped = Shared(0)
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for store in [fixture.store, other as any RoloStore] {
                group.addTask {
                    let ran = try await store.withMaintenanceLease("tidy") {
                        let now = inside.value.withLock { $0 += 1; return $0 }
                        most.value.withLock { $0 = max($0, now) }
                        // Held until the other process has tried (a fixed half second let a
                        // loaded machine start the other's try after it, and both ran).
                        let deadline = ContinuousClock.now + .seconds(10)
                        while skipped.value.withLock({ $0 }) == 0 && ContinuousClock.now < deadline {
                            try await Task.sleep(for: .milliseconds(10))
                        }
                        inside.value.withLock { $0 -= 1 }
                    }
                    if !ran { skipped.value.withLock { $0 += 1 } }
                    return ran
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 2 && results.filter { $0 }.count == 1)
        #expect(most.value.withLock { $0 } == 1)
        // Another lease name is independent; the first is free again.
        #expect(try await other.withMaintenanceLease("tidy") {})
        #expect(try await fixture.store.withMaintenanceLease("backfill") {})
    }

    /// A change committed through one process is heard by another's `followBookChanges`,
    /// with the writing request's Push-Dont-Notify.
    @Test func aProcessHearsTheBookChangesOfAnother() async throws {
        let (fixture, other) = try await Self.twoStores()
        defer { fixture.close() }
        other.bookChanges.open()
        defer { other.bookChanges.close() }
        let listening = Task { await other.followBookChanges() }
        defer { listening.cancel() }
        // LISTEN is in place once the initial sweep has run; give it a moment.
        try await Task.sleep(for: .milliseconds(500))
        let exclusion = PushExclusion.registrations(user: "alice", ids: ["r1"])
        try await PushExclusion.$current.withValue(exclusion) { try await fixture.put("a.vcf") }
        let heard = try await withTimeout { await other.bookChanges.take() }
        #expect(heard == [BookChange(collectionID: fixture.book.id, seq: 1, exclusion: exclusion)])
        try await fixture.put("b.vcf")
        let next = try await withTimeout { await other.bookChanges.take() }
        #expect(next == [BookChange(collectionID: fixture.book.id, seq: 2)])
    }

    /// The database restarts under a listening process: it listens again by itself, and a
    /// change committed while it was away is announced (the sweep of books whose
    /// registrations are owed a message), as are changes after.
    @Test func aListenerReconnectsAfterTheDatabaseRestartsAndCatchesUp() async throws {
        let cluster = try await TestPostgres.onThread { try TestPostgres.startCluster() }
        defer { cluster.stop() }
        var configuration = try PostgresStore.Configuration(url: cluster.url)
        configuration.poolSize = 2
        configuration.bcryptCost = 4
        // As in `aLostServerMakesCallsUnavailableAndTheStoreRecoversByItself`: long enough for
        // a fresh cluster's first connections while the whole suite runs on two cores.
        configuration.connectionTimeout = .seconds(15)
        let writer = try await PostgresStoreTests.openWhileTheRunIsBusy(configuration)
        let listener = try await PostgresStoreTests.openWhileTheRunIsBusy(configuration)
        // The restart closes the connections, which is told at once; a slow count is not lost.
        CardCacheTests.patient(writer, listener)
        StoreCleanups.schedule {
            await writer.close()
            await listener.close()
        }
        try await writer.createUser(name: "alice", password: "pw")
        let book = try #require(try await writer.collection(owner: "alice", path: ["default"]))
        _ = try await writer.registerPush(PushRegistrationRequest(
            user: "alice", collectionID: book.id, credentialID: 0, pushResource: "https://push.example/1",
            publicKey: Data(repeating: 4, count: 65), authSecret: Data(repeating: 1, count: 16),
            expires: Date().addingTimeInterval(86_400)), limit: 10)
        func put(_ name: String) async throws {
            _ = try await writer.putResource(collectionID: book.id, name: name, data: Data(vcard(uid: name, fn: name).utf8),
                                             contentType: "text/vcard",
                                             card: CardMetadata(uid: name, kind: "individual", indexEntries: [], members: []),
                                             precondition: .none)
        }
        listener.bookChanges.open()
        defer { listener.bookChanges.close() }
        let listening = Task { await listener.followBookChanges() }
        defer { listening.cancel() }
        try await Task.sleep(for: .milliseconds(500))
        try await put("a.vcf")
        #expect(try await withTimeout { await listener.bookChanges.take() }.map(\.seq) == [1])

        try await writer.autocommit { try await $0.execute("CHECKPOINT") }
        try await TestPostgres.onThread { try cluster.shutDown() }
        try await TestPostgres.onThread { try cluster.restart() }
        // Written before the listener is back (it retries each second): announced by its sweep
        // or by the notification, in either case once it listens again.
        var written = false
        for _ in 0..<100 where !written {
            do { try await put("b.vcf"); written = true } catch { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(written)
        #expect(try await heard(seq: 2, by: listener))
        try await Task.sleep(for: .seconds(2))
        try await put("c.vcf")
        #expect(try await heard(seq: 3, by: listener))
    }

    /// Whether `store`'s feed gets a change of seq `seq` or later within 60 seconds (the
    /// sweep after a reconnection may also announce an earlier one first).
    func heard(seq: Int64, by store: PostgresStore) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let changes = try await withTimeout { await store.bookChanges.take() }
            if changes.contains(where: { $0.seq >= seq }) { return true }
        }
        return false
    }

    /// `body`'s value, or a thrown `CancellationError` after 30 s: a guard against a hang,
    /// long enough for a loaded machine.
    func withTimeout<T: Sendable>(_ body: @escaping @Sendable () async -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await body() }
            group.addTask { try await Task.sleep(for: .seconds(30)); return nil }
            defer { group.cancelAll() }
            guard let value = try await group.next() ?? nil else { throw CancellationError() }
            return value
        }
    }

    // MARK: Upgrades

    /// A v9 SQLite database (before issue 20) upgrades in place: registrations owe nothing
    /// for changes made before, and locks can be taken.
    @Test func aVersion9DatabaseGainsLocksAndPushClaims() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-v10-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("v9.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(queue, upTo: "v9-web")
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO users (id, name, password_hash, created) VALUES (1, 'alice', 'x', 0);
                INSERT INTO collections (id, owner_id, parent_id, path, kind, sync_seq, created, modified)
                    VALUES (1, 1, NULL, 'default', 'addressbook', 7, 0, 0);
                INSERT INTO push_registrations (id, user_id, collection_id, credential_id, push_resource, public_key,
                    auth_secret, expires, created)
                    VALUES ('reg', 1, 1, 0, 'https://push.example/1', x'04', x'01', 4000000000, 0);
                """)
        }
        try queue.close()

        let store = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? store.close() }
        #expect(try await store.claimPushDelivery(registrationID: "reg", seq: 7) == false)
        #expect(try await store.claimPushDelivery(registrationID: "reg", seq: 8))
        #expect(try await store.grantWriteLock(Self.lock("t", root: "alice/default/a.vcf"), maxPerUser: 10, now: Self.start) == nil)
        #expect(try await store.writeLocks(covering: "alice/default/a.vcf", descendants: false, now: Self.start).map(\.token) == ["t"])
    }

    /// A PostgreSQL database at v2-web upgrades in place the same way.
    @Test func aVersion2PostgresDatabaseGainsLocksAndPushClaims() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        try await fixture.put("a.vcf")
        let registration = try await store.registerPush(PushRegistrationRequest(
            user: "alice", collectionID: fixture.book.id, credentialID: 0, pushResource: "https://push.example/1",
            publicKey: Data(repeating: 4, count: 65), authSecret: Data(repeating: 1, count: 16),
            expires: Date().addingTimeInterval(86_400)), limit: 10)
        // Back to the schema before v3: what v3 added is dropped, as if never applied.
        try await store.autocommit { connection in
            for statement in [
                "DROP TRIGGER collections_notify_change ON collections", "DROP FUNCTION rolo_notify_book_change()",
                "DROP TABLE locks", "DROP TABLE login_failures", "ALTER TABLE push_registrations DROP COLUMN last_sent_seq",
                "DELETE FROM schema_migrations WHERE version = 'v3-coordination'",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        try await fixture.put("b.vcf")
        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        #expect(try await upgraded.claimPushDelivery(registrationID: registration.id, seq: 2) == false)
        #expect(try await upgraded.claimPushDelivery(registrationID: registration.id, seq: 3))
        #expect(try await upgraded.grantWriteLock(Self.lock("t", root: "alice/default/a.vcf"), maxPerUser: 10, now: Self.start) == nil)
    }
}

/// A value closures running elsewhere change (a `Mutex` cannot be captured by them itself).
final class Shared<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
}
