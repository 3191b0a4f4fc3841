import Foundation
import Logging
import PostgresNIO
import PostgresTestSupport
@testable import RoloPostgres
import RoloStore
import Testing

/// PostgreSQL's card cache (`CardCache`): a card read once by a GET or a named read is
/// answered from memory, and never after a change this process made, nor once a change's
/// notice came; with another process on the database, GETs only after a fence; without its
/// notices, the cache is off.
@Suite(.closesStores) struct CardCacheTests {
    /// A fence's patience no loaded machine runs out of, for tests asserting that a GET was
    /// answered from memory after a fence: the 250 ms of a server ran out once on a loaded CI
    /// machine, and the GET rightly read the database.
    static let unhurried = TimeAmount.seconds(60)

    /// Lease timing for tests that need a lease held: a renewal's round trip through the
    /// database took longer than the standard 500 ms lease on a loaded two-core machine, and
    /// in 30 s no lease was ever held; at a load average of 35, longer than 2 s too. Writes
    /// that wait out a lease then wait 5 s. (The standard's ratio of lease to presence lapse.)
    static func leasesForALoadedMachine(_ configuration: inout PostgresStore.Configuration) {
        configuration.leaseTiming = ReadLeases.Timing(length: .seconds(5), presenceLapse: .seconds(20))
    }

    /// `readInline` awaited.
    private static func read(_ store: PostgresStore, _ name: String = "a.vcf", owner: String = "alice",
                             as user: String = "alice") async -> InlineRead? {
        await withCheckedContinuation { continuation in
            store.readInline(owner: owner, collectionPath: ["default"], name: name, stampOf: user) { continuation.resume(returning: $0) }
        }
    }

    private static func body(_ read: InlineRead?) -> String? {
        read?.found.map { String(decoding: $0.resource.data, as: UTF8.self) }
    }

    /// Waits (at most `limit`) until `condition` holds. Only a failing run waits it all out,
    /// so the default is long enough for a loaded machine (10 s was not, once).
    private static func eventually(_ what: Comment, within limit: Duration = .seconds(30),
                                   _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("never: \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Returns once the cache serves (its notices heard, and the store alone on the database),
    /// with a heartbeat patient enough (`patient`) that it goes on serving.
    private static func serving(_ store: PostgresStore) async throws {
        patient(store)
        try await eventually("the cache serves") { store.cardCache.isServing }
    }

    /// Makes the notices heartbeat wait 2 minutes for a count, not 5 s, in a test that is
    /// not about the heartbeat: a CI run saw 50 s of heartbeat timeouts across the whole
    /// cluster, and each turned a store's cache off (and so its answers from memory, which
    /// such tests assert) until it listened again.
    static func patient(_ stores: PostgresStore...) {
        for store in stores { store.noticesPatience = .seconds(120) }
    }

    /// Changes a card's body behind every process's back (no seq moved, no notice): a read
    /// that still answers the old body was answered from memory.
    private static func rewriteSilently(_ store: PostgresStore, book: Int64, _ name: String, to body: String) async throws {
        try await store.autocommit { connection in
            try await connection.execute("UPDATE resources SET data = \(Data(body.utf8)) WHERE collection_id = \(book) AND name = \(name)")
        }
    }

    /// Holds up both processes' notices connections in `proxy`, which the stores connect
    /// through (until the test ends): no notice arrives and no fence comes back, while they
    /// still count as listening (for as long as their heartbeat's patience: 2 minutes with
    /// `patient`, as `twoStores` makes them). Quieted first (`quiet`).
    private static func holdUpNotices(_ proxy: PausableProxy, _ stores: PostgresStore...) async throws {
        await quiet(stores)
        let connections = try await noticesConnections(stores[0])
        #expect(connections.count == 2)
        for port in connections { #expect(proxy.pause(clientPort: port)) }
    }

    /// Makes `stores` send no more notices of their own (`ReadLeases.quiet`: no renewals,
    /// acknowledgements or markers), and waits until what they sent has been answered: a
    /// connection held up after that holds up only what others send.
    private static func quiet(_ stores: [PostgresStore]) async {
        for store in stores {
            store.readLeases.quiet()
            let patience = store.noticesFence.patience
            store.noticesFence.patience = unhurried
            _ = await withCheckedContinuation { continuation in store.noticesFence.after { continuation.resume(returning: $0) } }
            store.noticesFence.patience = patience
        }
    }

    /// Every process's notices connection on `store`'s database, by its client port (what
    /// `PausableProxy.pause` takes).
    private static func noticesConnections(_ store: PostgresStore) async throws -> [Int] {
        try await store.autocommit { connection in
            try await connection.rows("""
                SELECT client_port FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = \(PostgresStore.noticesApplicationName)
                """).map { Int(try $0.decode(Int32.self)) }
        }
    }

    /// Runs `sql` on one of `store`'s connections, as another writer the store does not know
    /// of would (its triggers' notices are all the store hears of it).
    private static func behindItsBack(_ store: PostgresStore, _ sql: String) async throws {
        try await store.autocommit { try await $0.execute(PostgresQuery(unsafeSQL: sql)) }
    }

    @Test func aCardReadOnceIsAnsweredFromMemoryAndAnOwnWriteIsSeenAtOnce() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        try await fixture.put("a.vcf", fn: "First")
        try await Self.serving(store)
        let first = try #require(Self.body(await Self.read(store)))
        #expect(first.contains("FN:First"))
        #expect(store.cardCache.counts.cards == 1)

        try await Self.rewriteSilently(store, book: fixture.book.id, "a.vcf", to: "changed behind its back")
        #expect(Self.body(await Self.read(store)) == first)

        // This process's own write: the next read, with no wait, is the new card.
        let written = try await fixture.put("a.vcf", fn: "Second")
        let after = try #require(await Self.read(store)?.found)
        #expect(after.resource.info.etag == written.etag)
        #expect(String(decoding: after.resource.data, as: UTF8.self).contains("FN:Second"))
        // That read was kept in turn.
        try await Self.rewriteSilently(store, book: fixture.book.id, "a.vcf", to: "changed behind its back again")
        #expect(Self.body(await Self.read(store)) == String(decoding: after.resource.data, as: UTF8.self))
    }

    @Test func aChangesNoticeMakesTheCardBeReadAgain() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        try await fixture.put("a.vcf", fn: "First")
        try await Self.serving(store)
        _ = await Self.read(store)
        #expect(store.cardCache.counts.cards == 1)

        // Another writer's change of the card moves the book's seq: its notice is heard.
        try await Self.behindItsBack(store, """
            WITH card AS (UPDATE resources SET data = 'written elsewhere' WHERE collection_id = \(book) AND name = 'a.vcf')
            UPDATE collections SET sync_seq = sync_seq + 1 WHERE id = \(book)
            """)
        try await Self.eventually("the card is read again") { Self.body(await Self.read(store)) == "written elsewhere" }

        let stamp = try #require(await Self.read(store)?.stamp)
        try await Self.behindItsBack(store, "UPDATE users SET password_hash = 'elsewhere' WHERE name = 'alice'")
        try await Self.eventually("the new password's stamp is read") { await Self.read(store)?.stamp != stamp }
        try await Self.behindItsBack(store, "UPDATE users SET disabled = true WHERE name = 'alice'")
        try await Self.eventually("a disabled user has no stamp") { await Self.read(store).map { $0.stamp == nil } == true }

        _ = await Self.read(store)
        #expect(store.cardCache.counts.cards == 1)
        try await Self.behindItsBack(store, "UPDATE collections SET display_name = 'Renamed' WHERE id = \(book)")
        try await Self.eventually("a renamed book forgets everything") { store.cardCache.counts == (0, 0, 0) }
        _ = await Self.read(store)
        try await Self.behindItsBack(store, "DELETE FROM collections WHERE id = \(book)")
        try await Self.eventually("a removed book's card is gone") { await Self.read(store).map { $0.found == nil } == true }
    }

    /// Another process on the database (whether or not it keeps a cache itself): what was
    /// kept is forgotten when it arrives, and, without a read lease, GETs are answered from
    /// memory again, each once a fence sent after it asked has come back (`NoticesFence`);
    /// its end serves them at once again.
    @Test func anotherProcessMakesGETsWaitForAFence() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        store.noticesFence.patience = Self.unhurried
        store.readLeases.stopLeasing()
        try await fixture.put("a.vcf", fn: "First")
        try await Self.serving(store)
        let first = Self.body(await Self.read(store))
        #expect(store.cardCache.counts.cards == 1)

        var configuration = store.configuration
        configuration.cardCacheBytes = 0
        // The acknowledgement is what is asserted, not the bound (on a loaded machine this
        // process may take longer than 2 s to read the announcement).
        configuration.announcementPatience = .seconds(60)
        let other = try await PostgresStore.open(configuration)
        #expect(!store.cardCache.isServing, "the other process opened only once this one acknowledged its start")
        #expect(store.cardCache.counts.cards == 0)
        try await Self.rewriteSilently(store, book: fixture.book.id, "a.vcf", to: "read from the database")
        #expect(Self.body(await Self.read(store)) == "read from the database")
        #expect(store.cardCache.counts.cards == 1)
        try await Self.rewriteSilently(store, book: fixture.book.id, "a.vcf", to: "behind its back")
        let fences = store.noticesFence.sent
        #expect(Self.body(await Self.read(store)) == "read from the database", "after a fence, from memory")
        #expect(store.noticesFence.sent == fences + 1)
        #expect(first != nil)

        await other.close()
        try await Self.serving(store)
        #expect(Self.body(await Self.read(store)) == "behind its back")
        try await Self.rewriteSilently(store, book: fixture.book.id, "a.vcf", to: "alone again")
        #expect(Self.body(await Self.read(store)) == "behind its back")
    }

    /// A process starting waits until the process already running has acknowledged it, at
    /// most its bound (2 s): held up (its notices connection paused), the running one cannot,
    /// and the newcomer opens only once the bound passed; resumed, the running one reads the
    /// announcement and stops serving unfenced. Before acknowledgements, a newcomer opened as
    /// soon as its announcement was sent, whether or not anyone had read it. The running
    /// one's heartbeat is made patient: at 5 s, on a loaded machine, it took the held-up
    /// connection for lost before the newcomer counted, listened again, and the newcomer found
    /// two processes where one runs. (Whether the held-up one still serves meanwhile is left
    /// unasserted.)
    @Test func aProcessStartsOnceTheRunningOneAcknowledgedIt() async throws {
        let proxy = try PausableProxy.forThisTest()
        let fixture = try await StoreFixture.postgres { proxy.route(&$0) }
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        try await Self.serving(store)
        // Every count in flight when the connection is paused is one asked after that (one a second).
        try await Task.sleep(for: .seconds(1.5))
        await Self.quiet([store])
        let connection = try await Self.noticesConnections(store)
        try #require(connection.count == 1)
        #expect(proxy.pause(clientPort: connection[0]))

        var configuration = store.configuration
        configuration.cardCacheBytes = 0
        configuration.announcementPatience = .seconds(2)
        let started = ContinuousClock.now
        let other = try await PostgresStore.open(configuration)
        StoreCleanups.schedule { await other.close() }
        let waited = ContinuousClock.now - started
        #expect(waited >= .seconds(1.9), "opened after \(waited), without the running process's acknowledgement")
        #expect(other.announcement.acknowledgements.heard == 0)

        proxy.resumeAll()
        try await Self.eventually("resumed, it reads the announcement") { !store.cardCache.isServing }

        // A third process waits for both, and both acknowledge it (how soon is the machine's
        // business: on a loaded one, opening alone can take longer than the bound).
        let last = try await PostgresStore.open(configuration)
        StoreCleanups.schedule { await last.close() }
        try await Self.eventually("both running processes acknowledged it") {
            last.announcement.acknowledgements.expected == 2 && last.announcement.acknowledgements.heard == 2
        }
        #expect(other.announcement.acknowledgements.expected == 1, "the second waited for the first")
    }

    /// A count of the processes asked before another one's announcement was heard counts
    /// without the newcomer: its answer, read after the announcement, leaves the process not
    /// alone, and a count asked after decides.
    @Test func aCountAskedBeforeAnAnnouncementNeverMakesTheProcessAloneAgain() {
        let cache = CardCache(capacity: 1 << 20)
        cache.startedListening(to: 0)
        cache.setAlone(true, census: cache.census())
        #expect(cache.isServing)
        let census = cache.census()
        cache.heardAnotherProcess()
        #expect(!cache.isServing)
        cache.setAlone(true, census: census)
        #expect(!cache.isServing, "a count asked before the announcement was heard")
        cache.setAlone(true, census: cache.census())
        #expect(cache.isServing, "a count asked after it (the newcomer gone since)")
    }

    /// With two processes on the database, a GET through one right after a write through the
    /// other (a card, a password) answers the write, never the card or stamp kept before it.
    /// Without a read lease, its fence comes back after the write's notice; with one
    /// (`ReadLeases`), no fence is sent, and the write was answered only once this process
    /// had heard it. While the notices are held up (their connections paused) a fence does not
    /// come back and the lease runs out: GETs read the database, and writes wait out the lease.
    @Test(arguments: [false, true])
    func withAnotherProcessAGETAnswersEveryWriteAcknowledgedBeforeIt(leasing: Bool) async throws {
        let proxy = try PausableProxy.forThisTest()
        let (fixture, other) = try await CoordinationTests.twoStores { configuration in
            Self.leasesForALoadedMachine(&configuration)
            proxy.route(&configuration)
        }
        defer { fixture.close() }
        let writer = try #require(fixture.store as? PostgresStore)
        other.noticesFence.patience = Self.unhurried
        if !leasing { other.readLeases.stopLeasing() }
        try await fixture.put("a.vcf", fn: "Anna 0")
        try await Self.eventually("the other process listens, not alone") {
            other.cardCache.isListening && !other.cardCache.isServing && !writer.cardCache.isServing
        }
        if leasing {
            // A lease is renewed while GETs ask for kept answers (`CardCache.wantsLease`).
            try await Self.eventually("the other process leases, and the writer knows", within: .seconds(30)) {
                _ = await Self.read(other)
                return other.cardCache.isLeased && writer.readLeases.othersLeased == 1
            }
        }
        var withinLease = 0
        let first = try #require(Self.body(await Self.read(other)))
        try await Self.rewriteSilently(writer, book: fixture.book.id, "a.vcf", to: "changed behind its back")
        #expect(Self.body(await Self.read(other)) == first, "from memory")
        let fences = other.noticesFence.sent

        for round in 1...30 {
            if round == 21 {
                // 20 rounds so far, each with a GET of a card kept (the second): without a
                // lease each sent a fence; with one, those within it sent none (below).
                if leasing {
                    #expect(withinLease > 0, "no GET within the lease")
                } else {
                    #expect(other.noticesFence.sent - fences >= 20)
                }
                // A server's patience again, or each GET would wait out the test's.
                other.noticesFence.patience = .milliseconds(250)
                try await Self.holdUpNotices(proxy, writer, other)
            }
            let written = try await fixture.put("a.vcf", fn: "Anna \(round)")
            #expect(await Self.read(other)?.found?.resource.info.etag == written.etag)
            // Read again (as a second client would be), and still the write; from memory, and
            // within a lease read before it and not run out after it, without a fence.
            let lease = other.cardCache.leaseEnd
            let sent = other.noticesFence.sent
            #expect(await Self.read(other)?.found?.resource.info.etag == written.etag)
            if let lease, ContinuousClock.now < lease, let after = other.cardCache.leaseEnd, after >= lease {
                withinLease += 1
                #expect(other.noticesFence.sent == sent, "round \(round): a GET within the lease sent a fence")
            }
            if round % 10 == 0 {
                let stamp = await Self.read(other)?.stamp
                try await writer.setPassword(user: "alice", password: "round \(round)")
                #expect(await Self.read(other)?.stamp != stamp, "a password changed through the other process")
            }
        }
    }

    /// With another process on the database and nobody reading (no lease runs), a write is
    /// answered as soon as it commits, without reading its own notice back; while the other
    /// process reads, and so leases, writes wait for it again, and its GETs see each one.
    @Test func withAnotherProcessAndNoLeaseRunningAWriteIsAnsweredAtOnce() async throws {
        let (fixture, other) = try await CoordinationTests.twoStores(Self.leasesForALoadedMachine)
        defer { fixture.close() }
        let writer = try #require(fixture.store as? PostgresStore)
        // Once both listen, each has heard the other (a process says `here` each second), and
        // the lease each renews once as it starts has run out.
        try await Self.eventually("ten writes in a row answered at once", within: .seconds(30)) {
            let before = writer.readLeases.answeredAtOnce
            for round in 1...10 { _ = try? await fixture.put("a.vcf", fn: "Anna \(round)") }
            return writer.readLeases.answeredAtOnce == before + 10
        }

        let reading = Task {
            while !Task.isCancelled {
                _ = await Self.read(other)
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        defer { reading.cancel() }
        try await Self.eventually("the other process leases, and the writer knows", within: .seconds(30)) {
            other.cardCache.isLeased && writer.readLeases.othersLeased == 1
        }
        let before = writer.readLeases.answeredAtOnce
        for round in 1...20 {
            let written = try await fixture.put("a.vcf", fn: "Anna leased \(round)")
            #expect(await Self.read(other)?.found?.resource.info.etag == written.etag)
        }
        #expect(writer.readLeases.answeredAtOnce - before < 20, "the other process leased throughout, yet no write waited")
    }

    /// `resources(collectionID:names:bodyLimit:countingBookUpTo:)`, a multiget's read.
    private static func named(_ store: PostgresStore, _ book: Int64, _ names: [String], bodyLimit: Int = 1 << 20,
                              cap: Int = 10) async throws -> (cards: [StoredResource], bookCards: Int) {
        try await store.resources(collectionID: book, names: names, bodyLimit: bodyLimit, countingBookUpTo: cap)
    }

    private static func bodies(_ cards: [StoredResource]) -> [String] {
        cards.map { String(decoding: $0.data, as: UTF8.self) }
    }

    @Test func aMultigetsCardsAreAnsweredFromMemoryUntilTheirBookChanges() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        try await fixture.put("a.vcf", fn: "First A")
        try await fixture.put("b.vcf", fn: "First B")
        try await Self.serving(store)
        let asked = ["b.vcf", "missing.vcf", "a.vcf"]
        let first = try await Self.named(store, book, asked)
        #expect(first.cards.map(\.info.name) == ["a.vcf", "b.vcf"] && first.bookCards == 2)
        #expect(store.cardCache.counts.named == 3)

        // The same read again is the same answer, from memory: a body changed behind every
        // process's back is not seen; nor is it by a read of some of the names, or with a
        // smaller count.
        try await Self.rewriteSilently(store, book: book, "a.vcf", to: "changed behind its back")
        let again = try await Self.named(store, book, asked)
        #expect(again.cards == first.cards && again.bookCards == 2)
        let some = try await Self.named(store, book, ["missing.vcf", "a.vcf"], cap: 1)
        #expect(some.cards == [first.cards[0]] && some.bookCards == 1)
        // A body over the read's limit is left out, as the database leaves it out.
        let small = try await Self.named(store, book, ["a.vcf"], bodyLimit: 10)
        #expect(small.cards.map(\.bodyLeftOut) == [true] && small.cards[0].info == first.cards[0].info)
        // A larger count than any read so far is the database's.
        try await Self.behindItsBack(store, "UPDATE resources SET data = 'counted' WHERE collection_id = \(book) AND name = 'b.vcf'")
        #expect(try await Self.named(store, book, asked, cap: 100).bookCards == 2)

        // This process's own write: the next read, with no wait, has the new card.
        let written = try await fixture.put("b.vcf", fn: "Second B")
        let afterOwn = try await Self.named(store, book, asked)
        #expect(afterOwn.cards.map(\.info.etag) == [first.cards[0].info.etag, written.etag])
        #expect(Self.bodies(afterOwn.cards) == ["changed behind its back", Self.bodies(afterOwn.cards)[1]])
        #expect(Self.bodies(afterOwn.cards)[1].contains("FN:Second B"))

        // Another writer's change moves the book's seq: once its notice is heard, the
        // database's cards.
        try await Self.behindItsBack(store, """
            WITH card AS (UPDATE resources SET data = 'written elsewhere' WHERE collection_id = \(book) AND name = 'a.vcf')
            UPDATE collections SET sync_seq = sync_seq + 1 WHERE id = \(book)
            """)
        try await Self.eventually("the cards are read again") {
            try await Self.bodies(Self.named(store, book, asked).cards).first == "written elsewhere"
        }
        // A card added elsewhere under a name asked before, found once its notice is heard.
        try await Self.behindItsBack(store, """
            WITH card AS (INSERT INTO resources (collection_id, name, content_type, etag, size, modified, seq, data)
                          SELECT \(book), 'missing.vcf', content_type, etag || 'x', size, modified, seq, data
                          FROM resources WHERE collection_id = \(book) AND name = 'a.vcf')
            UPDATE collections SET sync_seq = sync_seq + 1 WHERE id = \(book)
            """)
        try await Self.eventually("the added card is found") {
            try await Self.named(store, book, asked).cards.map(\.info.name) == ["a.vcf", "b.vcf", "missing.vcf"]
        }
    }

    @Test func aBooksListingPagesAreAnsweredFromMemoryUntilTheBookChanges() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        try await fixture.put("a.vcf", fn: "A")
        try await fixture.put("b.vcf", fn: "B")
        try await Self.serving(store)
        let whole = try await store.listResources(collectionID: book, after: nil, limit: 10)
        let second = try await store.listResources(collectionID: book, after: "a.vcf", limit: 1)
        #expect(whole.map(\.name) == ["a.vcf", "b.vcf"] && second.map(\.name) == ["b.vcf"])
        #expect(store.cardCache.counts.named == 2)

        // Read again: from memory (an ETag changed behind every process's back is not seen).
        try await Self.behindItsBack(store, "UPDATE resources SET etag = 'behind' WHERE collection_id = \(book)")
        #expect(try await store.listResources(collectionID: book, after: nil, limit: 10) == whole)
        #expect(try await store.listResources(collectionID: book, after: "a.vcf", limit: 1) == second)
        // Another page of the same book is the database's.
        #expect(try await store.listResources(collectionID: book, after: nil, limit: 1).map(\.etag) == ["behind"])

        // This process's own write: the next page, with no wait, has it.
        let written = try await fixture.put("c.vcf", fn: "C")
        let afterOwn = try await store.listResources(collectionID: book, after: nil, limit: 10)
        #expect(afterOwn.map(\.name) == ["a.vcf", "b.vcf", "c.vcf"] && afterOwn.last?.etag == written.etag)

        // Another writer's removal, once its notice is heard.
        try await Self.behindItsBack(store, """
            WITH card AS (DELETE FROM resources WHERE collection_id = \(book) AND name = 'b.vcf')
            UPDATE collections SET sync_seq = sync_seq + 1 WHERE id = \(book)
            """)
        try await Self.eventually("the page is read again") {
            try await store.listResources(collectionID: book, after: nil, limit: 10).map(\.name) == ["a.vcf", "c.vcf"]
        }
    }

    private static func hits(_ store: PostgresStore, _ book: Int64, fn text: String,
                             collation: IndexPredicate.Collation = .unicodeCasemap) async throws -> QueryHits {
        try await store.queryHits(collectionID: book,
                                  predicate: .textMatch(property: "FN", text: text, collation: collation, match: .contains, negate: false),
                                  limit: nil, countingBook: true, firstPage: 10, withBodies: true, bodyLimit: 1 << 20)
    }

    @Test func aQuerysAnswerIsFromMemoryUntilTheBookChanges() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        try await fixture.put("a.vcf", fn: "Anna")
        try await fixture.put("b.vcf", fn: "Bob")
        try await Self.serving(store)
        let first = try await Self.hits(store, book, fn: "ann")
        #expect(first.names == ["a.vcf"] && first.bookCards == 2 && first.firstCards.map(\.info.name) == ["a.vcf"])

        try await Self.rewriteSilently(store, book: book, "a.vcf", to: "changed behind its back")
        #expect(try await Self.hits(store, book, fn: "ann") == first)
        // Another query is its own.
        #expect(try await Self.hits(store, book, fn: "bo").names == ["b.vcf"])

        // This process's own write: the next answer, with no wait, has it.
        try await fixture.put("c.vcf", fn: "Annabel")
        let afterOwn = try await Self.hits(store, book, fn: "ann")
        #expect(afterOwn.names == ["a.vcf", "c.vcf"] && afterOwn.bookCards == 3)
        #expect(Self.bodies(afterOwn.firstCards).first == "changed behind its back")

        // Another writer's removal, once its notice is heard.
        try await Self.behindItsBack(store, """
            WITH card AS (DELETE FROM resources WHERE collection_id = \(book) AND name = 'c.vcf')
            UPDATE collections SET sync_seq = sync_seq + 1 WHERE id = \(book)
            """)
        try await Self.eventually("the query is answered again") { try await Self.hits(store, book, fn: "ann").names == ["a.vcf"] }

        // Texts Swift's `==` takes for one are two queries, as they are to the database.
        try await fixture.put("composed.vcf", fn: "Caf\u{E9}")
        try await fixture.put("decomposed.vcf", fn: "Cafe\u{301}")
        for _ in 0..<2 {
            #expect(try await Self.hits(store, book, fn: "\u{E9}", collation: .octet).names == ["composed.vcf"])
            #expect(try await Self.hits(store, book, fn: "e\u{301}", collation: .octet).names == ["decomposed.vcf"])
        }
    }

    /// Readers filling the cache while this process writes never make a read after a write
    /// answer older than the write: each write, then at once a multiget, a page and a query.
    @Test func readsRacingOwnWritesNeverAnswerOlderThanTheWrite() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        try await fixture.put("a.vcf", fn: "Anna 0")
        try await Self.serving(store)
        let readers = Task {
            while !Task.isCancelled {
                _ = try? await Self.named(store, book, ["a.vcf"])
                _ = try? await store.listResources(collectionID: book, after: nil, limit: 10)
                _ = try? await Self.hits(store, book, fn: "ann")
            }
        }
        defer { readers.cancel() }
        for round in 1...60 {
            let written = try await fixture.put("a.vcf", fn: "Anna \(round)")
            #expect(try await Self.named(store, book, ["a.vcf"]).cards.map(\.info.etag) == [written.etag])
            #expect(try await store.listResources(collectionID: book, after: nil, limit: 10).map(\.etag) == [written.etag])
            #expect(try await Self.hits(store, book, fn: "ann").firstCards.map(\.info.etag) == [written.etag])
        }
        #expect(store.cardCache.isServing)
    }

    /// As a request does on `store`: its look-up of alice's book first (noted in the
    /// request's `LookupAhead`), then `reads`.
    private static func request<T>(on store: PostgresStore, _ reads: () async throws -> T) async throws -> T {
        try await LookupAhead.$current.withValue(LookupAhead(owner: "alice", path: ["default"], name: nil)) {
            _ = try await store.collection(owner: "alice", path: ["default"])
            return try await reads()
        }
    }

    /// With two processes on the database, a book's reads are answered from memory only for
    /// a request whose own look-up read the book at the seq they were read at: a write
    /// through the other process, acknowledged before the request, is never missed.
    @Test func withAnotherProcessABooksReadsAreServedAtTheSeqTheRequestLookedUp() async throws {
        let proxy = try PausableProxy.forThisTest()
        let (fixture, other) = try await CoordinationTests.twoStores { proxy.route(&$0) }
        defer { fixture.close() }
        // Without a read lease: held, it serves them without the look-up's seq.
        other.readLeases.stopLeasing()
        let writer = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        try await fixture.put("a.vcf", fn: "Anna 0")
        try await Self.eventually("the other process listens, not alone") {
            other.cardCache.isListening && !other.cardCache.isServing && !writer.cardCache.isServing
        }
        let first = try await Self.request(on: other) { try await Self.named(other, book, ["a.vcf"]) }
        try await Self.rewriteSilently(writer, book: book, "a.vcf", to: "changed behind its back")
        // The same seq looked up: from memory.
        #expect(try await Self.request(on: other) { try await Self.named(other, book, ["a.vcf"]) }.cards == first.cards)
        // No look-up of the book in this request: the database.
        #expect(try await Self.bodies(Self.named(other, book, ["a.vcf"]).cards) == ["changed behind its back"])

        // Writes through the other process, each read at once through this one, first as
        // they come, then with every notice held up (the notices connections paused), so
        // that only the request's own look-up can tell the card changed (they still count as
        // listening, their heartbeat patient; each write then waits out a read lease, 0.5 s,
        // so four rounds).
        for round in 1...24 {
            if round == 21 {
                // A server's patience again, or each GET would wait out the test's.
                other.noticesFence.patience = .milliseconds(250)
                try await Self.holdUpNotices(proxy, writer, other)
            }
            let written = try await fixture.put("a.vcf", fn: "Anna \(round)")
            let (cards, page, hits) = try await Self.request(on: other) {
                (try await Self.named(other, book, ["a.vcf"]).cards,
                 try await other.listResources(collectionID: book, after: nil, limit: 10),
                 try await Self.hits(other, book, fn: "ann"))
            }
            #expect(cards.map(\.info.etag) == [written.etag])
            #expect(page.map(\.etag) == [written.etag])
            #expect(hits.firstCards.map(\.info.etag) == [written.etag])
            // Read again at that seq (as a second client would be), and still the write.
            let again = try await Self.request(on: other) { try await Self.named(other, book, ["a.vcf"]).cards }
            #expect(again.map(\.info.etag) == [written.etag])
        }
        // The last rounds ran while the notices were held up, and still served from memory.
        #expect(other.cardCache.isListening && other.cardCache.counts.named > 0)
    }

    /// The same through a share: the sharee's request looks the book up as its mount.
    @Test func withAnotherProcessAMountedBooksReadsAreServedAtTheSeqTheRequestLookedUp() async throws {
        let (fixture, other) = try await CoordinationTests.twoStores()
        defer { fixture.close() }
        other.readLeases.stopLeasing()
        let writer = try #require(fixture.store as? PostgresStore)
        let book = fixture.book.id
        try await writer.createUser(name: "bob", password: "pw")
        _ = try await writer.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: true)
        try await fixture.put("a.vcf", fn: "Anna 0")
        try await Self.eventually("the other process listens") { other.cardCache.isListening }
        func asBob<T>(_ reads: () async throws -> T) async throws -> T {
            try await LookupAhead.$current.withValue(LookupAhead(owner: "bob", path: ["default~alice"], name: nil)) {
                #expect(try await other.mount(sharee: "bob", name: "default~alice")?.id == book)
                return try await reads()
            }
        }
        let first = try await asBob { try await Self.named(other, book, ["a.vcf"]) }
        try await Self.rewriteSilently(writer, book: book, "a.vcf", to: "changed behind its back")
        #expect(try await asBob { try await Self.named(other, book, ["a.vcf"]) }.cards == first.cards)
        for round in 1...5 {
            let written = try await fixture.put("a.vcf", fn: "Anna \(round)")
            #expect(try await asBob { try await Self.named(other, book, ["a.vcf"]) }.cards.map(\.info.etag) == [written.etag])
        }
    }

    /// Two card names that differ in their bytes but that Swift's `==` takes for one (NFC and
    /// NFD of "é") are two cards to the database, and to the cache; so are two such users.
    @Test func namesEqualOnlyAsUnicodeAreTwoCardsAndTwoUsersInTheCache() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let composed = "caf\u{E9}.vcf", decomposed = "cafe\u{301}.vcf"
        try await fixture.put(composed, fn: "Composed")
        try await fixture.put(decomposed, fn: "Decomposed")
        try await Self.serving(store)
        for _ in 0..<2 {
            #expect(Self.body(await Self.read(store, composed))?.contains("FN:Composed") == true)
            #expect(Self.body(await Self.read(store, decomposed))?.contains("FN:Decomposed") == true)
            let one = try await Self.named(store, fixture.book.id, [decomposed])
            #expect(one.cards.map(\.info.name.utf8.count) == [decomposed.utf8.count])
            #expect(Self.bodies(one.cards).first?.contains("FN:Decomposed") == true)
        }
        #expect(store.cardCache.counts.cards == 2)

        // Two users whose names are equal only as Unicode: each GET is signed in with its
        // own user's password stamp.
        let composedUser = "jos\u{E9}", decomposedUser = "jose\u{301}"
        for (user, password) in [(composedUser, "composed secret"), (decomposedUser, "decomposed secret")] {
            try await store.createUser(name: user, password: password)
            let book = try #require(try await store.collection(owner: user, path: ["default"]))
            try await StoreFixture(backend: .postgres, store: store, book: book, cleanup: {}).put("a.vcf", fn: user)
        }
        let stamps = try #require(await Self.read(store, owner: composedUser, as: composedUser)?.stamp)
            != (await Self.read(store, owner: decomposedUser, as: decomposedUser)?.stamp)
        #expect(stamps)
        for _ in 0..<2 {
            let composedStamp = await Self.read(store, owner: composedUser, as: composedUser)?.stamp
            let decomposedStamp = await Self.read(store, owner: decomposedUser, as: decomposedUser)?.stamp
            #expect(composedStamp != nil && decomposedStamp != nil && composedStamp != decomposedStamp)
        }
    }

    @Test func withoutItsNoticesTheCacheIsOffUntilTheyAreHeardAgain() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        try await fixture.put("a.vcf", fn: "First")
        try await Self.serving(store)
        _ = await Self.read(store)
        #expect(store.cardCache.counts.cards == 1)

        // The listening connection lost (as in a restart or a network cut).
        let ended = try await store.autocommit { connection in
            try await connection.first("""
                SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = 'rolo notices'
                """)?.decode(Int64.self)
        }
        #expect(ended == 1)
        try await Self.eventually("the cache stops", within: .seconds(20)) { !store.cardCache.isListening }
        #expect(store.cardCache.counts.cards == 0)
        try await Self.rewriteSilently(store, book: fixture.book.id, "a.vcf", to: "read from the database")
        #expect(Self.body(await Self.read(store)) == "read from the database")

        try await Self.serving(store)
        _ = await Self.read(store)
        try await Self.rewriteSilently(store, book: fixture.book.id, "a.vcf", to: "behind its back again")
        #expect(Self.body(await Self.read(store)) == "read from the database")
    }

    /// A notices connection that stops answering, without closing (a network cut, a stalled
    /// server): the cache stops all the same, within its heartbeat.
    @Test func aNoticesConnectionThatStopsAnsweringTurnsTheCacheOff() async throws {
        let proxy = try PausableProxy.forThisTest()
        let fixture = try await StoreFixture.postgres { proxy.route(&$0) }
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        try await fixture.put("a.vcf", fn: "First")
        try await Self.serving(store)
        // The heartbeat is what this test is about.
        store.noticesPatience = NoticesHeartbeat.patience
        await Self.quiet([store])
        let connection = try #require(try await Self.noticesConnections(store).first)
        #expect(proxy.pause(clientPort: connection))
        try await Self.eventually("the cache stops", within: .seconds(20)) { !store.cardCache.isServing }
        #expect(store.cardCache.counts == (0, 0, 0))
    }

    @Test func aCacheOfNoBytesKeepsNothing() async throws {
        let fixture = try await StoreFixture.postgres { $0.cardCacheBytes = 0 }
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let book = fixture.book
        try await fixture.put("a.vcf", fn: "First")
        _ = await Self.read(store)
        try await Self.rewriteSilently(store, book: book.id, "a.vcf", to: "read from the database")
        #expect(Self.body(await Self.read(store)) == "read from the database")
        #expect(!store.cardCache.isListening && store.cardCache.counts == (0, 0, 0))
    }

    /// A database from before v14 gets the triggers, keeping every card, ETag and sync token.
    @Test func aV13DatabaseUpgradesInPlaceAndItsSignInChangesAreHeard() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        let written = try await fixture.put("a.vcf", fn: "First")
        try await store.autocommit { connection in
            for statement in [
                "DROP TRIGGER users_notify_sign_in_change ON users",
                "DROP TRIGGER collections_notify_sign_in_change ON collections",
                "DROP FUNCTION rolo_notify_sign_in_change()",
                "DELETE FROM schema_migrations WHERE version = 'v14-card-cache-notices'",
            ] { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
        }
        let upgraded = try await PostgresStore.open(store.configuration)
        StoreCleanups.schedule { await upgraded.close() }
        #expect(try await upgraded.appliedMigrations() == PostgresStore.migrations.map(\.version))
        let stored = try #require(try await upgraded.resource(collectionID: fixture.book.id, name: "a.vcf"))
        #expect(stored.info.etag == written.etag)
        let changes = try await upgraded.changes(collectionID: fixture.book.id, since: 0, limit: nil)
        #expect(changes.newSeq == written.seq && changes.changes.map(\.name) == ["a.vcf"])

        // The triggers announce a changed password to a listener.
        let connection = try await PostgresConnection.connect(configuration: try upgraded.connectionConfiguration(), id: 9,
                                                              logger: Logger(label: "test"))
        defer { Task { try? await connection.close() } }
        try await connection.listen(on: PostgresStore.signInChangesChannel) { notices in
            try await upgraded.setPassword(user: "alice", password: "another secret")
            let heard = try await CoordinationTests().withTimeout {
                var iterator = notices.makeAsyncIterator()
                return try? await iterator.next() != nil
            }
            #expect(heard == true)
        }
    }
}

/// The fence on its own (`NoticesFence`).
@Suite(.closesStores) struct NoticesFenceTests {
    private static func fenced(_ fence: NoticesFence) async -> Bool {
        await withCheckedContinuation { continuation in fence.after { continuation.resume(returning: $0) } }
    }

    /// A fence comes back on a live connection; without one, or once the connection is
    /// dropped before the fence was sent, its waiters hear false at once; and fences work
    /// again on the next connection, however the last one ended.
    @Test func aFenceComesBackAndALostConnectionNeverLeavesOneHanging() async throws {
        let fixture = try await StoreFixture.make(.postgres)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresStore)
        // The fence's timer answers false too: this test is about which answer a waiter
        // gets, never how fast.
        let fence = NoticesFence(patience: CardCacheTests.unhurried, logger: store.logger)
        #expect(await Self.fenced(fence) == false, "no connection")
        for round in 0..<20 {
            let connection = try await PostgresConnection.connect(configuration: store.connectionConfiguration(), id: 9,
                                                                  logger: store.logger)
            fence.use(connection)
            #expect(await Self.fenced(fence), "round \(round): a fence on a live connection")
            // Asked, and the connection dropped at once, usually before the fence goes out (at
            // the end of the connection loop's turn): the waiter is answered either way (false
            // then, as the fence never went), and nothing is left out for the next connection.
            _ = await withCheckedContinuation { continuation in
                fence.after { continuation.resume(returning: $0) }
                fence.use(nil)
            }
            fence.use(connection)
            #expect(await Self.fenced(fence), "round \(round): fences again after a dropped one")
            fence.use(nil)
            try await connection.close()
        }
    }
}
