import CardIndexing
import Foundation
@testable import RoloPostgres
@testable import RoloSQLite
@testable import RoloStore
import Testing
import VCard

/// `rolo migrate` (issue 20): a store copied SQLite → PostgreSQL → SQLite holds the same
/// records, and answers clients as the original did: same ETags and bytes, same sync
/// positions and deltas for old tokens, passwords and app passwords still valid.
@Suite(.closesStores) struct StoreMigrationTests {
    /// The metadata `rolo migrate` computes for each card.
    @Sendable static func metadata(_ data: Data) -> CardMetadata? {
        guard let card = try? VCardParser.parse(Array(data), mode: .lenient).first else { return nil }
        return CardMetadata(card: card)
    }

    /// What a filled store looks like to the checks: ids, tokens and secrets to compare.
    struct Filled {
        var book: CollectionInfo
        /// A token from before the last changes (its delta holds puts and a tombstone).
        var oldSeq: Int64
        /// A token older than the compacted log.
        var compactedSeq: Int64
        var appPasswordSecret: String
        var appPasswordID: Int64
        var feedSecret: String
    }

    /// A PHOTO line longer than `VersionBody.partSize`.
    static let photo = "PHOTO;ENCODING=b;TYPE=JPEG:" + String(repeating: "QUJD", count: 400) + "\r\n"

    func card(uid: String, fn: String, extra: String = "") -> Data {
        Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(uid)\r\nFN:\(fn)\r\n\(extra)END:VCARD\r\n".utf8)
    }

    func put(_ store: any RoloStore, _ book: Int64, _ name: String, _ data: Data) async throws {
        _ = try await store.putResource(collectionID: book, name: name, data: data, contentType: "text/vcard; charset=utf-8",
                                        card: Self.metadata(data), precondition: .none)
    }

    /// Users (one disabled admin), books, cards, a group, tombstones before and after a
    /// compaction, dead properties, a share, an app password, history, a push
    /// registration, trash and a plain collection with a file.
    func fill(_ store: any RoloStore) async throws -> Filled {
        try await store.createUser(name: "alice", password: "secret")
        try await store.createUser(name: "bob", password: "hunter2")
        try await store.updateAccount(name: "bob", UserAccountUpdate(displayName: "Bob B", email: "bob@example.com", admin: true,
                                                                     disabled: true))
        let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
        try await put(store, book.id, "gone.vcf", card(uid: "gone", fn: "Gone Early"))
        try await store.deleteResource(collectionID: book.id, name: "gone.vcf", precondition: .none)
        try await store.compactChanges(olderThan: Date().addingTimeInterval(1))
        let compactedSeq = Int64(1)
        try await put(store, book.id, "ann.vcf", card(uid: "ann", fn: "Ann Archer", extra: "EMAIL:ann@example.com\r\nTEL:+1 555 0100\r\n"))
        try await put(store, book.id, "ben.vcf", card(uid: "ben", fn: "Ben Baker", extra: "ORG:Bakery\r\n"))
        try await put(store, book.id, "cid.vcf", card(uid: "cid", fn: "Cid Cooper"))
        // A card whose versions share a photo (kept once, as a part), then deleted: its
        // history outlives it.
        try await put(store, book.id, "pia.vcf", card(uid: "pia", fn: "Pia Photo", extra: Self.photo))
        try await put(store, book.id, "pia.vcf", card(uid: "pia", fn: "Pia Photo", extra: "TEL:+1 555 0102\r\n" + Self.photo))
        try await store.deleteResource(collectionID: book.id, name: "pia.vcf", precondition: .none)
        let oldSeq = try #require(try await store.collection(id: book.id)).syncSeq
        try await put(store, book.id, "team.vcf", card(uid: "team", fn: "Team", extra: "KIND:group\r\nMEMBER:urn:uuid:ann\r\nMEMBER:urn:uuid:ben\r\n"))
        try await put(store, book.id, "ben.vcf", card(uid: "ben", fn: "Ben Baker", extra: "ORG:Bakery & Sons\r\n"))
        try await store.deleteResource(collectionID: book.id, name: "cid.vcf", precondition: .none)
        try await store.applyCardBatch(collectionID: book.id, writes: [.trash(name: "ann.vcf", precondition: .none, reason: .deleted)])
        try await put(store, book.id, "ann.vcf", card(uid: "ann", fn: "Ann Archer", extra: "EMAIL:ann@example.com\r\n"))
        try await store.updateDeadProperties(collectionID: book.id, resource: nil, set: [
            DeadProperty(name: PropertyName(namespace: "http://apple.com/ns/ical/", name: "calendar-color"), xmlValue: "#FF0000"),
        ], remove: [])
        try await store.updateDeadProperties(collectionID: book.id, resource: "ben.vcf", set: [
            DeadProperty(name: PropertyName(namespace: "urn:example", name: "note"), xmlValue: "<x:b xmlns:x=\"urn:example\">1</x:b>",
                         language: "en-GB"),
        ], remove: [])
        try await store.createCollection(owner: "alice", path: ["work"], kind: .addressBook, displayName: "Work", description: "Colleagues")
        try await store.createCollection(owner: "alice", path: ["files"], kind: .plain, displayName: nil, description: nil)
        let files = try #require(try await store.collection(owner: "alice", path: ["files"]))
        _ = try await store.putResource(collectionID: files.id, name: "notes.txt", data: Data("hello\n".utf8),
                                        contentType: "text/plain", card: nil, precondition: .none)
        try await store.shareBook(owner: "alice", book: "default", with: "bob", access: .readWrite, accepted: true)
        try await store.shareBook(owner: "alice", book: "work", with: "bob", access: .readOnly, accepted: false)
        let token = try await store.createAppPassword(user: "alice", name: "Phone", readOnly: false, books: ["default"])
        _ = try await store.createAppPassword(user: "alice", name: "Laptop", readOnly: true, books: nil)
        try await store.revokeAppPassword(user: "alice", name: "Laptop")
        let hour = Int64(Date().timeIntervalSince1970) / 3600 * 3600
        try await store.recordAccess([
            AccessTally(user: "alice", credentialID: token.appPassword.id, bookID: book.id, hour: hour, requests: 3, cardsRead: 5,
                        fullDownload: true),
            AccessTally(user: "bob", credentialID: 0, bookID: book.id, hour: hour - 86400 * 40, requests: 1, cardsWritten: 1),
        ], uses: [CredentialUse(credentialID: token.appPassword.id, at: Date(), address: "192.0.2.1", userAgent: "DAVx5")])
        try await store.pruneAccessHistory(now: Date(), retention: AccessRetention())
        try await store.registerPush(PushRegistrationRequest(
            user: "alice", collectionID: book.id, credentialID: token.appPassword.id, pushResource: "https://push.example/abc",
            publicKey: Data(repeating: 4, count: 65), authSecret: Data(repeating: 7, count: 16),
            expires: Date().addingTimeInterval(86400)), limit: 10)
        _ = try await store.pushKey(creatingWith: { Data(repeating: 9, count: 32) })
        let feeds = try #require(store as? any FeedStore)
        let bobs = try await feeds.createFeed(user: "bob", kind: .birthdays, books: [])
        try await feeds.noteFeedRead(id: bobs.feed.id, at: Date(timeIntervalSince1970: 1_800_000_000))
        let feed = try await feeds.createFeed(user: "alice", kind: .fritzbox, books: ["work", "default"])
        // A pruning that drops nothing but records the time from which history is complete.
        try await #require(store as? any CardHistoryStore).pruneCardVersions(now: Date(), retention: HistoryRetention(days: 1))
        return Filled(book: book, oldSeq: oldSeq, compactedSeq: compactedSeq, appPasswordSecret: token.secret,
                      appPasswordID: token.appPassword.id, feedSecret: feed.secret)
    }

    /// Every record of every table, read in pages of 2 (so the keyset paging is exercised).
    func dump(_ store: any StoreSnapshotting) async throws -> [SnapshotTable: [SnapshotRecord]] {
        let reader = try await store.snapshotReader()
        var tables: [SnapshotTable: [SnapshotRecord]] = [:]
        for table in SnapshotTable.allCases {
            var records: [SnapshotRecord] = []
            while true {
                let page = try await reader.snapshotPage(table, after: records.last, limit: 2)
                if page.isEmpty { break }
                records += page
            }
            tables[table] = records
        }
        await reader.close()
        return tables
    }

    /// What clients and users see of the copy, compared with the original.
    func expectSameAnswers(_ copy: any RoloStore, as original: any RoloStore, _ filled: Filled) async throws {
        let book = filled.book.id
        #expect(try await copy.collection(id: book) == original.collection(id: book))
        #expect(try await copy.listUsers() == original.listUsers())
        #expect(try await copy.verifyPassword(user: "alice", password: "secret"))
        #expect(try await copy.account(name: "bob") == original.account(name: "bob"))
        #expect(try await copy.allResources(collectionID: book) == original.allResources(collectionID: book))
        #expect(try await copy.changes(collectionID: book, since: filled.oldSeq, limit: nil)
                == original.changes(collectionID: book, since: filled.oldSeq, limit: nil))
        #expect(try await copy.changes(collectionID: book, since: 0, limit: nil) == original.changes(collectionID: book, since: 0, limit: nil))
        await #expect(throws: StoreError.syncTokenTooOld) {
            try await copy.changes(collectionID: book, since: filled.compactedSeq, limit: nil)
        }
        let check = try #require(try await copy.checkAppPassword(user: "alice", secret: filled.appPasswordSecret))
        #expect(check.id == filled.appPasswordID && !check.revoked)
        #expect(try await copy.appPasswords(user: "alice") == original.appPasswords(user: "alice"))
        #expect(try await copy.shares(of: "bob") == original.shares(of: "bob"))
        #expect(try await copy.mounts(sharee: "bob") == original.mounts(sharee: "bob"))
        #expect(try await copy.deadProperties(collectionID: book, resource: "ben.vcf")
                == original.deadProperties(collectionID: book, resource: "ben.vcf"))
        #expect(try await copy.pushRegistrations(user: "alice") == original.pushRegistrations(user: "alice"))
        let copiedFeeds = try #require(copy as? any FeedStore), originalFeeds = try #require(original as? any FeedStore)
        #expect(try await copiedFeeds.feeds(user: "alice") == originalFeeds.feeds(user: "alice"))
        #expect(try await copiedFeeds.feeds(user: "alice").first?.bookNames == ["default", "work"])
        #expect(try await copiedFeeds.feeds(user: "bob") == originalFeeds.feeds(user: "bob"))
        let opened = try #require(await copiedFeeds.feed(secret: filled.feedSecret))
        #expect(try await originalFeeds.feed(secret: filled.feedSecret) == opened && opened.kind == .fritzbox)
        #expect(try await copy.pushTopic(collectionID: book) == original.pushTopic(collectionID: book))
        #expect(try await copy.trash(collectionID: book, limit: 10) == original.trash(collectionID: book, limit: 10))
        #expect(try await copy.accessHistory(user: "alice", since: Date(timeIntervalSince1970: 0))
                == original.accessHistory(user: "alice", since: Date(timeIntervalSince1970: 0)))
        // Every card's history, photos put back from their shared parts.
        let copiedHistory = try #require(copy as? any CardHistoryStore)
        let originalHistory = try #require(original as? any CardHistoryStore)
        for name in ["gone.vcf", "ann.vcf", "ben.vcf", "cid.vcf", "pia.vcf", "team.vcf"] {
            #expect(try await copiedHistory.cardVersions(collectionID: book, name: name)
                    == originalHistory.cardVersions(collectionID: book, name: name), "\(name)")
        }
        let pia = try await copiedHistory.cardVersions(collectionID: book, name: "pia.vcf")
        #expect(pia.map(\.isDeletion) == [false, false, true])
        #expect(pia.first?.data == card(uid: "pia", fn: "Pia Photo", extra: Self.photo))
        #expect(try await copiedHistory.bookVersions(collectionID: book, since: Date(timeIntervalSince1970: 0))
                == originalHistory.bookVersions(collectionID: book, since: Date(timeIntervalSince1970: 0)))
        #expect(try await copiedHistory.historyCompleteSince() != nil)
        #expect(try await copiedHistory.historyCompleteSince() == originalHistory.historyCompleteSince())
        // The derived rows, rebuilt from the cards.
        let baker = IndexPredicate.textMatch(property: "ORG", text: "bakery", collation: .unicodeCasemap, match: .contains, negate: false)
        #expect(try await copy.query(collectionID: book, predicate: baker, limit: nil) == ["ben.vcf"])
        #expect(try await copy.groupMembers(collectionID: book, groupName: "team.vcf") == ["ann", "ben"])
        #expect(try await copy.cardCount(collectionID: book, filter: .contacts, search: [], cap: 100) == 2)
        #expect(try await copy.cardCount(collectionID: book, filter: .contacts, search: ["archer"], cap: 100) == 1)
    }

    /// The copy keeps working: new writes continue the seq, new rows get fresh ids.
    func expectWritable(_ copy: any RoloStore, _ filled: Filled) async throws {
        let before = try #require(try await copy.collection(id: filled.book.id)).syncSeq
        try await put(copy, filled.book.id, "dee.vcf", card(uid: "dee", fn: "Dee Dunn"))
        #expect(try await copy.collection(id: filled.book.id)?.syncSeq == before + 1)
        let delta = try await copy.changes(collectionID: filled.book.id, since: before, limit: nil)
        #expect(delta.changes.map(\.name) == ["dee.vcf"])
        try await copy.createUser(name: "carol", password: "pw")
        let carolsBook = try #require(try await copy.collection(owner: "carol", path: ["default"]))
        #expect(carolsBook.id > filled.book.id)
        _ = try await copy.createAppPassword(user: "carol", name: "Phone", readOnly: false, books: nil)
    }

    @Test func sqliteToPostgresAndBack() async throws {
        let source = try SQLiteStore.temporary()
        defer { try? source.close() }
        let filled = try await fill(source)
        let (postgres, closePostgres) = try await StoreFixture.openStore(.postgres)
        StoreCleanups.schedule(closePostgres)
        let middle = try #require(postgres as? PostgresStore)
        let copied = try await StoreMigration.run(from: source, to: middle, batchSize: 2, metadata: Self.metadata)
        #expect(copied.copied[.resources] == 4)
        #expect(copied.unindexed == 0)
        let back = try SQLiteStore.temporary()
        defer { try? back.close() }
        _ = try await StoreMigration.run(from: middle, to: back, batchSize: 3, metadata: Self.metadata)

        let original = try await dump(source)
        #expect(original[.resources]?.count == 4)
        // Versions of six cards and a file (pia's two share their photo: one part, two references).
        #expect(original[.cardVersions]?.count == 14)
        #expect(original[.cardVersionParts]?.count == 1 && original[.cardVersionPartRefs]?.count == 2)
        #expect(try await dump(middle) == original)
        #expect(try await dump(back) == original)
        try await expectSameAnswers(middle, as: source, filled)
        try await expectSameAnswers(back, as: source, filled)
        #expect(try await back.integrityCheck() == [])
        #expect(try await middle.integrityCheck() == [])
        try await expectWritable(middle, filled)
        try await expectWritable(back, filled)
    }

    /// The copy is of what the store held when it began, whatever is written meanwhile.
    @Test(arguments: StoreBackend.allCases)
    func theSourceIsReadAsOfTheStart(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let source = try #require(fixture.store as? any StoreSnapshotting)
        try await put(source, fixture.book.id, "early.vcf", card(uid: "early", fn: "Early Bird"))
        let reader = try await source.snapshotReader()
        let before = try await reader.snapshotPage(.resources, after: nil, limit: 100)
        #expect(before.count == 1)
        try await put(source, fixture.book.id, "late.vcf", card(uid: "late", fn: "Late Comer"))
        #expect(try await reader.snapshotPage(.resources, after: nil, limit: 100) == before)
        #expect(try await reader.snapshotCounts()[.resources] == 1)
        await reader.close()
        let now = try await source.snapshotReader()
        #expect(try await now.snapshotCounts()[.resources] == 2)
        await now.close()
    }

    @Test(arguments: StoreBackend.allCases)
    func refusesATargetThatIsNotEmpty(_ backend: StoreBackend) async throws {
        let source = try SQLiteStore.temporary()
        defer { try? source.close() }
        _ = try await fill(source)
        let target = try await StoreFixture.make(backend)
        defer { target.close() }
        let writer = try #require(target.store as? any StoreSnapshotting)
        let before = try await dump(writer)
        await #expect(throws: MigrationError.targetNotEmpty) {
            try await StoreMigration.run(from: source, to: writer, metadata: Self.metadata)
        }
        #expect(try await dump(writer) == before)
        #expect(try await target.store.listUsers() == ["alice"])
    }
}
