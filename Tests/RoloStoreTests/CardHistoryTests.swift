import CardIndexing
import Foundation
import Synchronization
import Testing
@testable import RoloStore

/// Card versions (issue 31) on both back ends: every write and deletion keeps a version with
/// its author, bodies are kept once, pruning keeps the newest by age and count, and a restore
/// or an undo is a new, ordinary change that fails whole or not at all.
@Suite(.closesStores) struct CardHistoryTests {
    /// A clock the test moves.
    final class TestClock: Sendable {
        let date = Mutex(StoreClock.deterministicEpoch)
        var clock: StoreClock { StoreClock { self.date.withLock { $0 } } }
        func advance(days: Double) { date.withLock { $0 = $0.addingTimeInterval(days * 86_400) } }
        var now: Date { date.withLock { $0 } }
    }

    static let phone = ChangeAuthor(user: "alice", credentialID: 7)
    static let laptop = ChangeAuthor(user: "alice", credentialID: 8)

    static func history(_ fixture: StoreFixture) throws -> any CardHistoryStore {
        try #require(fixture.cards as? any CardHistoryStore)
    }

    static func card(_ uid: String, _ fn: String, tel: String? = nil) -> Data {
        Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(uid)\r\nFN:\(fn)\r\n\(tel.map { "TEL;TYPE=cell:\($0)\r\n" } ?? "")END:VCARD\r\n".utf8)
    }

    @discardableResult
    static func put(_ fixture: StoreFixture, _ name: String, _ data: Data, as author: ChangeAuthor?) async throws -> PutResult {
        try await ChangeAuthor.$current.withValue(author) {
            try await fixture.cards.putResource(collectionID: fixture.book.id, name: name, data: data,
                                                contentType: "text/vcard; charset=utf-8",
                                                card: CardMetadata(uid: name, kind: "individual", indexEntries: [], members: []),
                                                precondition: .none)
        }
    }

    static func delete(_ fixture: StoreFixture, _ name: String, as author: ChangeAuthor?) async throws {
        try await ChangeAuthor.$current.withValue(author) {
            try await fixture.cards.deleteResource(collectionID: fixture.book.id, name: name, precondition: .none)
        }
    }

    @Test(arguments: StoreBackend.cardBackends)
    func everyWriteAndDeletionKeepsAVersionWithItsAuthor(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let history = try Self.history(fixture)
        let first = Self.card("a", "Anna", tel: "+49 170 1")
        let second = Self.card("a", "Anna", tel: "+49 170 2")
        try await Self.put(fixture, "a", first, as: Self.phone)
        try await Self.put(fixture, "a", second, as: Self.laptop)
        try await Self.delete(fixture, "a", as: Self.phone)
        let versions = try await history.cardVersions(collectionID: fixture.book.id, name: "a")
        #expect(versions.map(\.etag) == [ETag.of(first), ETag.of(second), nil])
        #expect(versions.map(\.data) == [first, second, nil])
        #expect(versions.map(\.credentialID) == [7, 8, 7])
        #expect(versions.map(\.user) == ["alice", "alice", "alice"])
        #expect(versions.map(\.seq) == versions.map(\.seq).sorted() && Set(versions.map(\.seq)).count == 3)
        #expect(CardHistory.describe(versions) == [["created"], ["mobile phone +49 170 2 added", "mobile phone +49 170 1 removed"], ["deleted"]])
    }

    @Test(arguments: StoreBackend.allCases)
    func aBodyIsKeptOnceHoweverManyVersionsShareIt(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let first = Self.card("a", "Anna"), second = Self.card("a", "Anne")
        for data in [first, second, first, second, first] { try await Self.put(fixture, "a", data, as: Self.phone) }
        #expect(try await Self.history(fixture).cardVersions(collectionID: fixture.book.id, name: "a").count == 5)
        #expect(try await fixture.integer("SELECT count(*) FROM card_version_bodies") == 2)
    }

    @Test(arguments: StoreBackend.cardBackends)
    func pruningDropsOldVersionsButKeepsEachCardsNewest(_ backend: StoreBackend) async throws {
        let clock = TestClock()
        let fixture = try await StoreFixture.make(backend, clock: clock.clock)
        defer { fixture.close() }
        let history = try Self.history(fixture)
        for index in 0..<15 { try await Self.put(fixture, "a", Self.card("a", "Anna \(index)"), as: Self.phone) }
        try await Self.put(fixture, "b", Self.card("b", "Bert"), as: Self.phone)
        // At the edge of what is kept: eleven versions lose one, ten none.
        for index in 0..<11 { try await Self.put(fixture, "c", Self.card("c", "Cleo \(index)"), as: Self.phone) }
        for index in 0..<10 { try await Self.put(fixture, "d", Self.card("d", "Dirk \(index)"), as: Self.phone) }
        clock.advance(days: 60)
        // Younger than history_days: all kept, whatever their number.
        #expect(try await history.pruneCardVersions(now: clock.now, retention: .default) == 0)
        #expect(try await history.cardVersions(collectionID: fixture.book.id, name: "a").count == 15)
        clock.advance(days: 40)
        try await Self.put(fixture, "a", Self.card("a", "Anna new"), as: Self.phone)
        // Older: each card keeps its last 10 (the new one among them), the rest go with their bodies.
        #expect(try await history.pruneCardVersions(now: clock.now, retention: .default) == 7)
        let kept = try await history.cardVersions(collectionID: fixture.book.id, name: "a")
        #expect(kept.count == 10)
        #expect(kept.last?.data == Self.card("a", "Anna new"))
        #expect(kept.first?.data == Self.card("a", "Anna 6"))
        #expect(try await history.cardVersions(collectionID: fixture.book.id, name: "b").count == 1)
        #expect(try await history.cardVersions(collectionID: fixture.book.id, name: "c").map(\.data)
                == (1..<11).map { Self.card("c", "Cleo \($0)") })
        #expect(try await history.cardVersions(collectionID: fixture.book.id, name: "d").count == 10)
        if backend != .memory {
            // Anna 6 to 14, Cleo 1 to 9, Dirk 0 to 8; SQLite keeps the cards' current text in
            // the cards alone (schema v17).
            #expect(try await fixture.integer("SELECT count(*) FROM card_version_bodies") == (backend == .sqlite ? 27 : 31))
        }
    }

    /// SQLite's history holds a version's text only once a write lets it go (schema v17): a
    /// new card writes its text once, and a replacement, deletion or move copies the old text
    /// into the history first, so every version still reads back byte for byte.
    @Test func sqliteKeepsACardsCurrentTextInTheCardUntilAWriteReplacesIt() async throws {
        let fixture = try await StoreFixture.make(.sqlite)
        defer { fixture.close() }
        let history = try Self.history(fixture)
        func bodies() async throws -> Int64? { try await fixture.integer("SELECT count(*) FROM card_version_bodies") }
        func versions(_ name: String) async throws -> [Data?] {
            try await history.cardVersions(collectionID: fixture.book.id, name: name).map(\.data)
        }
        let first = Self.card("a", "Anna"), second = Self.card("a", "Anna", tel: "+49 170 2")
        try await Self.put(fixture, "a", first, as: Self.phone)
        #expect(try await bodies() == 0)
        #expect(try await versions("a") == [first])
        // The same bytes again: still the card's.
        try await Self.put(fixture, "a", first, as: Self.phone)
        #expect(try await bodies() == 0)
        try await Self.put(fixture, "a", second, as: Self.phone)
        #expect(try await bodies() == 1)
        #expect(try await versions("a") == [first, first, second])
        try await Self.delete(fixture, "a", as: Self.phone)
        #expect(try await bodies() == 2)
        #expect(try await versions("a") == [first, first, second, nil])
        let all = try await history.bookVersions(collectionID: fixture.book.id, since: Date(timeIntervalSince1970: 0))
        #expect(all.map(\.data) == [first, first, second, nil])
        // A move: the old name's version keeps the text, the new name's reads its card.
        let bert = Self.card("b", "Bert")
        let put = try await Self.put(fixture, "b", bert, as: Self.phone)
        _ = try await fixture.cards.transferResource(collectionID: fixture.book.id, name: "b", sourceETag: put.etag,
                                                     to: fixture.book.id, name: "c", data: bert,
                                                     contentType: "text/vcard; charset=utf-8",
                                                     card: CardMetadata(uid: "b", kind: "individual", indexEntries: [], members: []),
                                                     move: true)
        #expect(try await bodies() == 3)
        #expect(try await versions("b") == [bert, nil])
        #expect(try await versions("c") == [bert])
    }

    /// A card edited often since keeps its newest version from before the cutoff, so what it
    /// was at any time after the last pruning is known: an undo to such a time reverts it
    /// rather than taking it for a card created later. Earlier times are not complete.
    @Test(arguments: StoreBackend.cardBackends)
    func pruningKeepsWhatACardWasAtTheCutoffAndSaysFromWhenHistoryIsComplete(_ backend: StoreBackend) async throws {
        let clock = TestClock()
        let fixture = try await StoreFixture.make(backend, clock: clock.clock)
        defer { fixture.close() }
        let history = try Self.history(fixture)
        #expect(try await history.historyCompleteSince() == nil)
        try await Self.put(fixture, "c", Self.card("c", "Old 1"), as: Self.phone)
        try await Self.put(fixture, "c", Self.card("c", "Old 2"), as: Self.phone)
        clock.advance(days: 100)
        let time = clock.now
        clock.advance(days: 1)
        for index in 0..<12 { try await Self.put(fixture, "c", Self.card("c", "New \(index)"), as: Self.laptop) }
        // "Old 1" goes; "Old 2", what c was at the cutoff, stays though it is not among the last 10.
        #expect(try await history.pruneCardVersions(now: clock.now, retention: .default) == 1)
        let complete = try #require(try await history.historyCompleteSince())
        #expect(abs(complete.timeIntervalSince(HistoryRetention.default.cutoff(now: clock.now))) < 1)
        #expect(UndoPlan.isComplete(since: time, completeSince: complete))
        #expect(!UndoPlan.isComplete(since: complete.addingTimeInterval(-60), completeSince: complete))
        let plan = UndoPlan(versions: try await history.bookVersions(collectionID: fixture.book.id, since: time), since: time, author: nil)
        #expect(plan.steps.count == 1)
        guard case .revert(_, let version, _) = plan.steps.first else {
            Issue.record("c is reverted, not removed: \(plan.steps)")
            return
        }
        #expect(version.data == Self.card("c", "Old 2"))
    }

    @Test(arguments: StoreBackend.allCases)
    func restoringAVersionIsANewChangeClientsSync(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let history = try Self.history(fixture)
        let first = Self.card("a", "Anna", tel: "+49 170 1"), stripped = Self.card("a", "Anna")
        try await Self.put(fixture, "a", first, as: Self.phone)
        let broken = try await Self.put(fixture, "a", stripped, as: Self.laptop)
        let versions = try await history.cardVersions(collectionID: fixture.book.id, name: "a")
        let result = try await CardHistory.restore(versions[0], current: broken.etag, collectionID: fixture.book.id,
                                                   in: fixture.store)
        #expect(result.seq > broken.seq)
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "a")?.data == first)
        let changes = try await fixture.cards.changes(collectionID: fixture.book.id, since: broken.seq, limit: nil)
        #expect(changes.changes.map(\.name) == ["a"])
        // The past stays as it was: the restore is one more version.
        let after = try await history.cardVersions(collectionID: fixture.book.id, name: "a")
        #expect(Array(after.prefix(2)) == versions)
        #expect(after.count == 3 && after[2].data == first)
    }

    @Test(arguments: StoreBackend.allCases)
    func undoingADeviceRevertsItsCardsAndLeavesAnotherDevicesEditsAsConflicts(_ backend: StoreBackend) async throws {
        let clock = TestClock()
        let fixture = try await StoreFixture.make(backend, clock: clock.clock)
        defer { fixture.close() }
        let history = try Self.history(fixture)
        for name in ["a", "b", "c", "d"] { try await Self.put(fixture, name, Self.card(name, name.uppercased(), tel: "1"), as: Self.laptop) }
        clock.advance(days: 1)
        let time = clock.now
        clock.advance(days: 1)
        // The phone goes wrong: blanks a and b, deletes c, creates e.
        try await Self.put(fixture, "a", Self.card("a", "A"), as: Self.phone)
        try await Self.put(fixture, "b", Self.card("b", "B"), as: Self.phone)
        try await Self.delete(fixture, "c", as: Self.phone)
        try await Self.put(fixture, "e", Self.card("e", "E"), as: Self.phone)
        // Meanwhile the laptop edits b: a conflict.
        try await Self.put(fixture, "b", Self.card("b", "B laptop"), as: Self.laptop)
        let author = UndoPlan.Author(user: "alice", credentialID: 7)
        let plan = UndoPlan(versions: try await history.bookVersions(collectionID: fixture.book.id, since: time), since: time,
                            author: author)
        #expect(plan.steps.map(\.name) == ["a", "c", "e"])
        #expect(plan.conflicts.map(\.name) == ["b"])
        let seqBefore = try #require(try await fixture.cards.collection(id: fixture.book.id)).syncSeq
        // A dry run is the plan alone: nothing written.
        #expect(try #require(try await fixture.cards.collection(id: fixture.book.id)).syncSeq == seqBefore)
        try await CardHistory.apply(plan, collectionID: fixture.book.id, in: fixture.store)
        for name in ["a", "c"] {
            #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: name)?.data
                    == Self.card(name, name.uppercased(), tel: "1"))
        }
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "e") == nil)
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "b")?.data == Self.card("b", "B laptop"))
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "d")?.data == Self.card("d", "D", tel: "1"))
        let changes = try await fixture.cards.changes(collectionID: fixture.book.id, since: seqBefore, limit: nil)
        #expect(Set(changes.changes.map(\.name)) == ["a", "c", "e"])
    }

    @Test(arguments: StoreBackend.allCases)
    func undoingATimePutsTheWholeBookBack(_ backend: StoreBackend) async throws {
        let clock = TestClock()
        let fixture = try await StoreFixture.make(backend, clock: clock.clock)
        defer { fixture.close() }
        let history = try Self.history(fixture)
        try await Self.put(fixture, "a", Self.card("a", "A"), as: Self.laptop)
        try await Self.put(fixture, "b", Self.card("b", "B"), as: Self.laptop)
        clock.advance(days: 1)
        let time = clock.now
        clock.advance(days: 1)
        try await Self.put(fixture, "a", Self.card("a", "A phone"), as: Self.phone)
        try await Self.put(fixture, "a", Self.card("a", "A laptop"), as: Self.laptop)
        try await Self.delete(fixture, "b", as: Self.laptop)
        try await Self.put(fixture, "c", Self.card("c", "C"), as: Self.phone)
        let plan = UndoPlan(versions: try await history.bookVersions(collectionID: fixture.book.id, since: time), since: time,
                            author: nil)
        #expect(plan.conflicts.isEmpty)
        try await CardHistory.apply(plan, collectionID: fixture.book.id, in: fixture.store)
        let names = try await fixture.cards.listResources(collectionID: fixture.book.id).map(\.name)
        #expect(names == ["a", "b"])
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "a")?.data == Self.card("a", "A"))
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "b")?.data == Self.card("b", "B"))
    }

    @Test(arguments: StoreBackend.allCases)
    func anUndoThatMeetsAWriteMadeMeanwhileChangesNothing(_ backend: StoreBackend) async throws {
        let clock = TestClock()
        let fixture = try await StoreFixture.make(backend, clock: clock.clock)
        defer { fixture.close() }
        let history = try Self.history(fixture)
        try await Self.put(fixture, "a", Self.card("a", "A"), as: Self.laptop)
        try await Self.put(fixture, "b", Self.card("b", "B"), as: Self.laptop)
        clock.advance(days: 1)
        let time = clock.now
        clock.advance(days: 1)
        try await Self.put(fixture, "a", Self.card("a", "A phone"), as: Self.phone)
        try await Self.put(fixture, "b", Self.card("b", "B phone"), as: Self.phone)
        let plan = UndoPlan(versions: try await history.bookVersions(collectionID: fixture.book.id, since: time), since: time,
                            author: nil)
        #expect(plan.steps.count == 2)
        // b changes after the plan was made: the whole undo fails, a included.
        try await Self.put(fixture, "b", Self.card("b", "B later"), as: Self.laptop)
        let seq = try #require(try await fixture.cards.collection(id: fixture.book.id)).syncSeq
        await #expect(throws: StoreError.self) {
            try await CardHistory.apply(plan, collectionID: fixture.book.id, in: fixture.store)
        }
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "a")?.data == Self.card("a", "A phone"))
        #expect(try #require(try await fixture.cards.collection(id: fixture.book.id)).syncSeq == seq)
    }

    /// A card with a folded 20 KB photo, as clients write it.
    static func photoCard(_ uid: String, _ fn: String, photo: UInt8) -> Data {
        let base64 = Data(repeating: photo, count: 15_000).base64EncodedString()
        var lines = "PHOTO;ENCODING=b;TYPE=JPEG:" + base64
        var folded = "", first = true
        while !lines.isEmpty {
            let take = first ? 75 : 74
            folded += (first ? "" : " ") + String(lines.prefix(take)) + "\r\n"
            lines = String(lines.dropFirst(take))
            first = false
        }
        return Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(fn)\r\n\(folded)END:VCARD\r\n".utf8)
    }

    @Test(arguments: StoreBackend.allCases)
    func versionsThatShareAPhotoKeepItOnce(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let edits = (0..<5).map { Self.photoCard("a", "Anna \($0)", photo: 1) }
        for data in edits { try await Self.put(fixture, "a", data, as: Self.phone) }
        try await Self.put(fixture, "a", Self.photoCard("a", "Anna new photo", photo: 2), as: Self.phone)
        let versions = try await Self.history(fixture).cardVersions(collectionID: fixture.book.id, name: "a")
        #expect(versions.map(\.data) == edits + [Self.photoCard("a", "Anna new photo", photo: 2)])
        // The first photo is kept once, for the five versions; the second only by the card.
        #expect(try await fixture.integer("SELECT count(*) FROM card_version_parts") == 1)
        let skeletons = try #require(try await fixture.integer("SELECT SUM(length(data)) FROM card_version_bodies"))
        #expect(skeletons < 6 * 200, "the six skeletons hold \(skeletons) bytes")
        #expect(CardHistory.describe(versions).last == ["name Anna 4 → Anna new photo", "photo changed"])
    }

    /// The history keeps no second copy of a photo the current card holds (schema v15 / v8):
    /// a write that replaces, deletes or moves the card first moves the photos it lets go
    /// into the history, so every version still comes back byte for byte.
    @Test(arguments: StoreBackend.allCases)
    func aPhotoTheCardStillHoldsIsNotKeptAgainUntilAWriteLetsItGo(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let history = try Self.history(fixture)
        func parts() async throws -> Int64? { try await fixture.integer("SELECT count(*) FROM card_version_parts") }
        func versions(_ name: String) async throws -> [Data?] {
            try await history.cardVersions(collectionID: fixture.book.id, name: name).map(\.data)
        }

        // Edits that keep the photo: only the card holds it.
        let edits = (0..<3).map { Self.photoCard("a", "Anna \($0)", photo: 1) }
        for data in edits { try await Self.put(fixture, "a", data, as: Self.phone) }
        #expect(try await parts() == 0)
        #expect(try await versions("a") == edits)
        // The photo is removed: it moves into the history, and the old versions keep it.
        try await Self.put(fixture, "a", Self.card("a", "Anna without photo"), as: Self.phone)
        #expect(try await parts() == 1)
        #expect(try await versions("a") == edits + [Self.card("a", "Anna without photo")])

        // A deletion lets its photo go too.
        let bert = [Self.photoCard("b", "Bert", photo: 2), Self.photoCard("b", "Bert 2", photo: 2)]
        for data in bert { try await Self.put(fixture, "b", data, as: Self.phone) }
        try await Self.delete(fixture, "b", as: Self.phone)
        #expect(try await parts() == 2)
        #expect(try await versions("b") == bert + [nil])

        // So does a move: the versions under the old name stay whole.
        let carl = Self.photoCard("c", "Carl", photo: 3)
        let put = try await Self.put(fixture, "c", carl, as: Self.phone)
        _ = try await fixture.cards.transferResource(collectionID: fixture.book.id, name: "c", sourceETag: put.etag,
                                                     to: fixture.book.id, name: "d", data: carl,
                                                     contentType: "text/vcard; charset=utf-8",
                                                     card: CardMetadata(uid: "c", kind: "individual", indexEntries: [], members: []),
                                                     move: true)
        #expect(try await versions("c") == [carl, nil])
        #expect(try await versions("d") == [carl])
        // Bert's and Carl's photos are in the history now; Carl's is also held by "d".
        #expect(try await parts() == 3)
    }

    @Test func aVersionBodySplitsOffLargePropertiesAndAssemblesExactly() throws {
        let card = Self.photoCard("a", "Anna", photo: 3)
        let body = VersionBody(card)
        #expect(body.parts.count == 1 && body.skeleton.count < 200)
        #expect(VersionBody.references(in: body.skeleton) == body.parts.map(\.hash))
        #expect(VersionBody.assemble(body.skeleton, parts: [body.parts[0].hash: body.parts[0].data]) == card)
        #expect(VersionBody.assemble(body.skeleton, parts: [:]) == nil)
        #expect(body.parts[0].start == card.range(of: Data("PHOTO".utf8))?.lowerBound)
        // A part the current card still holds is read from it.
        #expect(VersionBody.assemble(body.skeleton, stored: [:], currentBody: Self.photoCard("a", "Anna 2", photo: 3)) == card)
        #expect(VersionBody.assemble(body.skeleton, stored: [:], currentBody: Self.photoCard("a", "Anna", photo: 4)) == nil)
        // Small cards, and a card holding a NUL of its own, are kept whole.
        let small = Self.card("b", "Bert")
        #expect(VersionBody(small).skeleton == small && VersionBody(small).parts.isEmpty)
        var withNUL = card
        withNUL.insert(0, at: 20)
        #expect(VersionBody(withNUL).skeleton == withNUL && VersionBody(withNUL).parts.isEmpty)
    }
}
