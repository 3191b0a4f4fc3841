import Foundation
import PostgresNIO
import PostgresTestSupport
@testable import RoloPostgres
import RoloStore
import Synchronization
import Testing

/// Read leases on their own (`ReadLeases`), fed the notices by hand: what a write waits for,
/// and when a process may serve without a fence. `CardCacheTests` has them between two stores.
@Suite(.closesStores) struct ReadLeasesTests {
    /// A write's wait, and whether it ended.
    private final class Waited: Sendable {
        private let ended = Atomic(false)
        var done: Bool { ended.load(ordering: .relaxed) }
        func end() { ended.store(true, ordering: .relaxed) }
    }

    /// Leases on a real connection (markers and renewals are sent on it), as session "me",
    /// with a cache that listens.
    private static func leases(_ body: (ReadLeases, CardCache) async throws -> Void) async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let connection = try await PostgresConnection.connect(configuration: store.connectionConfiguration(), id: 9,
                                                              logger: store.logger)
        let cache = CardCache(capacity: 1 << 20)
        cache.startedListening(to: 0)
        let leases = ReadLeases(cardCache: cache, logger: store.logger)
        leases.listening(on: connection, as: "me")
        do {
            try await body(leases, cache)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// A write waits until its own notice is read back, then for an acknowledgement of its
    /// seq (or a newer one) from each process whose lease had not run out; one given before
    /// the read-back counts. A change without a seq waits the same way for its marker.
    @Test func aWriteWaitsForEveryLeasedProcessToAcknowledgeIt() async throws {
        try await Self.leases { leases, _ in
            leases.informed()
            leases.heard("lease p 1", alone: false)
            leases.heard("lease q 4", alone: false)
            #expect(leases.othersLeased == 2)

            let write = Waited()
            leases.wait(for: .book(7, seq: 3), alone: false) { write.end() }
            leases.heard(book: 7, seq: 2, alone: false)
            leases.heard("ack p 7:3", alone: false)
            #expect(!write.done, "not read back: an earlier seq only")
            leases.heard(book: 7, seq: 3, alone: false)
            #expect(!write.done, "read back, q has not acknowledged")
            leases.heard("ack q 7:2 8:9", alone: false)
            #expect(!write.done, "q acknowledged an earlier seq of the book, and another book")
            leases.heard("ack q 7:5", alone: false)
            #expect(write.done)

            leases.heard("lease p 2", alone: false)
            leases.heard("lease q 5", alone: false)
            let change = Waited()
            leases.wait(for: nil, alone: false) { change.end() }
            leases.heard("ack p me#0", alone: false)
            leases.heard("mark me 0", alone: false)
            #expect(!change.done, "q has not acknowledged the marker")
            leases.heard("ack q other#0", alone: false)
            #expect(!change.done, "another process's marker")
            leases.heard("ack q me#0", alone: false)
            #expect(change.done)

            // A write's notice may be read before its own connection hears of the commit.
            leases.heard(book: 8, seq: 4, alone: false)
            leases.heard("lease p 2", alone: false)
            leases.heard("lease q 5", alone: false)
            let early = Waited()
            leases.wait(for: .book(8, seq: 4), alone: false) { early.end() }
            #expect(!early.done, "read back at once, p and q have not acknowledged")
            #expect(leases.waiting == 1)
            leases.heard("ack p 8:4", alone: false)
            leases.heard("ack q 8:4", alone: false)
            #expect(early.done)

            // A process closing says so: writes stop waiting for it.
            leases.heard("lease p 3", alone: false)
            leases.heard("lease q 6", alone: false)
            let left = Waited()
            leases.wait(for: .book(9, seq: 1), alone: false) { left.end() }
            leases.heard(book: 9, seq: 1, alone: false)
            leases.heard("ack q 9:1", alone: false)
            #expect(!left.done)
            leases.heard("bye p", alone: false)
            #expect(left.done, "p left")
            #expect(leases.othersLeased == 1)

            let alone = Waited()
            leases.wait(for: .book(7, seq: 9), alone: true) { alone.end() }
            #expect(alone.done, "alone on the database, a write waits for nobody")
        }
    }

    /// A process that never acknowledges holds a write up until every lease renewed before
    /// the commit has run out; before the session knows every lease (its announcement not yet
    /// acknowledged, and less than a lease's length since it listened), a write waits until
    /// it does.
    @Test func aWriteNotAcknowledgedWaitsOutTheLease() async throws {
        try await Self.leases { leases, _ in
            let unknown = Waited()
            leases.wait(for: .book(1, seq: 1), alone: false) { unknown.end() }
            leases.heard(book: 1, seq: 1, alone: false)
            #expect(!unknown.done, "a lease renewed before this session listened may be unknown")
            leases.informed()
            #expect(unknown.done)

            leases.heard("lease p 1", alone: false)
            let started = ContinuousClock.now
            await withCheckedContinuation { continuation in
                leases.wait(for: .book(1, seq: 2), alone: false) { continuation.resume() }
                leases.heard(book: 1, seq: 2, alone: false)
            }
            let waited = ContinuousClock.now - started
            #expect(waited >= leases.timing.length, "answered after \(waited), before p's lease ran out")
            #expect(leases.waiting == 0)
        }
    }

    /// A process holds a lease from reading back a renewal it sent, until a lease's length
    /// after sending it; not from another's, nor once it stopped leasing.
    @Test func aLeaseIsHeldFromARenewalReadBack() async throws {
        try await Self.leases { leases, cache in
            leases.renew()
            leases.heard("lease me 0", alone: false)
            #expect(!cache.isLeased, "not leasing yet: nothing was sent")
            leases.startLeasing()
            leases.heard("lease p 0", alone: false)
            #expect(!cache.isLeased, "another process's renewal")
            leases.renew()
            leases.heard("lease me 7", alone: false)
            #expect(!cache.isLeased, "a renewal never sent")
            leases.heard("lease me 0", alone: false)
            #expect(cache.isLeased)
            leases.stopLeasing()
            #expect(!cache.isLeased)
        }
    }

    /// A renewal read back serves only once every other process present that acknowledges
    /// renewals (heard on the channel, or announced) has acknowledged it or a later one, since
    /// such a process answers a write at once while it knows no lease running. A process of
    /// the first version with leases is not waited for: it waits for its own writes' notices.
    @Test func aRenewalServesOnceEveryProcessPresentAcknowledgedIt() async throws {
        try await Self.leases { leases, cache in
            leases.startLeasing()
            let other = ReadLeases.newID(), newcomer = ReadLeases.newID()
            let first = ReadLeases.idPrefix + "2" + UUID().uuidString.dropFirst()
            leases.heard("here \(other)", alone: false)
            leases.heard("here \(first)", alone: false)
            leases.heardAnnouncement(of: newcomer)
            leases.counted(4, asked: .now)
            leases.renew()
            leases.heard("lease me 0", alone: false)
            #expect(!cache.isLeased, "nobody acknowledged the renewal")
            leases.heard("ack \(other) me@0 7:1", alone: false)
            leases.heard("ack \(newcomer) \(other)@0", alone: false)
            #expect(!cache.isLeased, "the newcomer acknowledged another process's renewal only")
            leases.heard("ack \(newcomer) me@3", alone: false)
            #expect(cache.isLeased, "a later renewal acknowledged covers this one; the first version is not waited for")
        }
    }

    /// With another process on the database, a write is answered at once while no lease of
    /// another process read here is running and every process counted acknowledges renewals;
    /// otherwise it waits to read its own notice back, and for the leased processes.
    @Test func aWriteIsAnsweredAtOnceWhileNoLeaseRuns() async throws {
        try await Self.leases { leases, _ in
            leases.informed()
            let other = ReadLeases.newID()
            leases.heard("here \(other)", alone: false)
            leases.counted(3, asked: .now)
            let uncounted = Waited()
            leases.wait(for: .book(1, seq: 1), alone: false) { uncounted.end() }
            #expect(!uncounted.done, "a process counted but never heard may lease without acknowledgements")
            leases.heard(book: 1, seq: 1, alone: false)
            #expect(uncounted.done)

            leases.counted(2, asked: .now)
            let quiet = Waited()
            leases.wait(for: .book(1, seq: 2), alone: false) { quiet.end() }
            #expect(quiet.done, "no lease running, and every lease from now on acknowledged here first")

            leases.heard("lease \(other) 0", alone: false)
            let leased = Waited()
            leases.wait(for: .book(1, seq: 3), alone: false) { leased.end() }
            #expect(!leased.done, "the other process's lease runs")
            leases.heard(book: 1, seq: 3, alone: false)
            leases.heard("ack \(other) 1:3", alone: false)
            #expect(leased.done)

            let first = ReadLeases.idPrefix + "2" + UUID().uuidString.dropFirst()
            leases.heard("here \(first)", alone: false)
            leases.counted(3, asked: .now)
            try await Task.sleep(for: leases.timing.length)
            let older = Waited()
            leases.wait(for: .book(1, seq: 4), alone: false) { older.end() }
            #expect(!older.done, "a process of the first version with leases serves renewals nobody acknowledged")
            leases.heard(book: 1, seq: 4, alone: false)
            #expect(older.done)
        }
    }

    /// The renewals' timer renews a lease only while reads ask for kept answers with another
    /// process on the database: idle, or alone, a process sends no renewals.
    @Test func aLeaseIsRenewedOnlyWhileReadsAskForIt() async throws {
        try await Self.leases { leases, cache in
            leases.startLeasing()
            leases.tick()
            leases.heard("lease me 0", alone: false)
            #expect(!cache.isLeased, "no read asked: nothing renewed")
            _ = cache.read(owner: "alice", path: "/addressbooks/alice/default/", name: "a.vcf", stampOf: "alice", server: 0)
            #expect(cache.wantsLease)
            leases.tick()
            leases.heard("lease me 0", alone: false)
            #expect(cache.isLeased)
            cache.setAlone(true, census: cache.census())
            #expect(!cache.wantsLease, "alone, a process serves without a lease")
        }
    }

    /// A process closing stops answering from memory, and renews no lease after.
    @Test func aProcessLeavingHoldsNoLease() async throws {
        try await Self.leases { leases, cache in
            leases.startLeasing()
            leases.renew()
            leases.heard("lease me 0", alone: false)
            #expect(cache.isLeased)
            await leases.leave()
            #expect(!cache.isLeased)
            leases.renew()
            leases.heard("lease me 1", alone: false)
            #expect(!cache.isLeased)
        }
    }

    /// A process leases only while every process counted on the database has been heard on
    /// the leases' channel; it stops at once when a process of a version before leases (an
    /// id without the prefix) announces itself, until a count asked after that finds every
    /// process heard again.
    @Test func aLeaseWaitsForEveryProcessToKnowLeases() async throws {
        try await Self.leases { leases, cache in
            leases.startLeasing()
            leases.counted(2, asked: .now)
            leases.renew()
            leases.heard("lease me 0", alone: false)
            #expect(!cache.isLeased, "the other process counted was never heard")
            let other = ReadLeases.newID()
            leases.heard("here \(other)", alone: false)
            leases.renew()
            leases.heard("lease me 0", alone: false)
            leases.heard("ack \(other) me@0", alone: false)
            #expect(cache.isLeased)

            let before = ContinuousClock.now
            let newcomer = ReadLeases.newID()
            leases.heardAnnouncement(of: newcomer)
            #expect(cache.isLeased, "a process that knows leases")
            leases.renew()
            leases.heardAnnouncement(of: UUID().uuidString)
            #expect(!cache.isLeased, "an older process")
            leases.heard("lease me 1", alone: false)
            #expect(!cache.isLeased, "a renewal sent before the older process announced itself, read back after")
            leases.counted(2, asked: before)
            leases.renew()
            leases.heard("lease me 2", alone: false)
            #expect(!cache.isLeased, "a count asked before the older process announced itself")
            leases.counted(3, asked: .now)
            leases.renew()
            leases.heard("lease me 2", alone: false)
            leases.heard("ack \(other) me@2 \(newcomer)@9", alone: false)
            leases.heard("ack \(newcomer) me@2", alone: false)
            #expect(cache.isLeased, "the older process gone, by a count asked since")
        }
    }
}
