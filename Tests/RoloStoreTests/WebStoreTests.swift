import Foundation
import GRDB
import Testing
@testable import RoloSQLite
@testable import RoloStore

/// The store side of the web UI (schema v9): list pages and searches from listing rows,
/// batches with the trash, sessions and disabled accounts.
@Suite(.closesStores) struct WebStoreTests {
    /// A listing like `CardListingFields(card:)` makes, from a name, e-mail and phone.
    static func fields(_ name: String, email: String? = nil, phone: String? = nil, categories: [String] = []) -> CardListingFields {
        let searched = [name, email, phone, phone?.filter(\.isNumber)].compactMap { $0 }
            + categories.map { String(CardListingFields.categoryMark) + $0 }
        return CardListingFields(displayName: name, sortKey: CaseFolding.search(name), organization: nil, email: email,
                                 phone: phone, hasPhoto: false,
                                 searchText: searched.map(CaseFolding.search).joined(separator: "\n"))
    }

    static func metadata(uid: String, name: String, email: String? = nil, phone: String? = nil, kind: String = "individual",
                         members: [String] = [], categories: [String] = []) -> CardMetadata {
        var entries = [IndexEntry(property: "UID", value: uid), IndexEntry(property: "FN", value: name)]
        if let email { entries.append(IndexEntry(property: "EMAIL", value: email)) }
        if let phone { entries.append(IndexEntry(property: "TEL", value: phone)) }
        entries += categories.map { IndexEntry(property: "CATEGORIES", value: $0) }
        return CardMetadata(uid: uid, kind: kind, indexEntries: entries, members: members,
                            listing: fields(name, email: email, phone: phone, categories: categories))
    }

    @discardableResult
    static func put(_ fixture: StoreFixture, _ name: String, _ fn: String, email: String? = nil, phone: String? = nil,
                    kind: String = "individual", members: [String] = [], categories: [String] = [],
                    precondition: WritePrecondition = .none) async throws -> PutResult {
        try await fixture.store.putResource(
            collectionID: fixture.book.id, name: name, data: Data(vcard(uid: name, fn: fn).utf8),
            contentType: "text/vcard", card: metadata(uid: name, name: fn, email: email, phone: phone, kind: kind,
                                                      members: members, categories: categories),
            precondition: precondition)
    }

    @Test(arguments: StoreBackend.allCases)
    func pagesWalkTheBookInNameOrderBothWaysWithoutSkippingOrRepeating(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let names = (0..<23).map { String(format: "Person %02d", $0) }
        for (index, name) in names.shuffled().enumerated() { try await Self.put(fixture, "c\(index).vcf", name) }
        try await Self.put(fixture, "g.vcf", "Friends", kind: "group")
        var seen: [String] = []
        var page = try await fixture.store.cardListings(collectionID: fixture.book.id, filter: .contacts, search: [],
                                                        from: .first, limit: 10)
        #expect(page.previous == nil)
        seen += page.rows.map(\.fields.displayName)
        while let next = page.next {
            page = try await fixture.store.cardListings(collectionID: fixture.book.id, filter: .contacts, search: [],
                                                        from: .after(next), limit: 10)
            seen += page.rows.map(\.fields.displayName)
        }
        #expect(seen == names)
        // Back from the last page: the rows before it, and a cursor further back.
        let back = try await fixture.store.cardListings(collectionID: fixture.book.id, filter: .contacts, search: [],
                                                        from: .before(try #require(page.previous)), limit: 10)
        #expect(back.rows.map(\.fields.displayName) == Array(names[10..<20]))
        #expect(back.previous != nil && back.next != nil)
        // A letter jump; the groups are a list of their own.
        let jump = try await fixture.store.cardListings(collectionID: fixture.book.id, filter: .contacts, search: [],
                                                        from: .after(ListingCursor(sortKey: "person 2", name: "")), limit: 10)
        #expect(jump.rows.map(\.fields.displayName) == Array(names[20...]))
        let groups = try await fixture.store.cardListings(collectionID: fixture.book.id, filter: .groups, search: [],
                                                          from: .first, limit: 10)
        #expect(groups.rows.map(\.name) == ["g.vcf"] && groups.rows[0].kind == "group")
        #expect(try await fixture.store.cardCount(collectionID: fixture.book.id, filter: .contacts, search: [], cap: 1000) == 23)
        #expect(try await fixture.store.cardCount(collectionID: fixture.book.id, filter: .contacts, search: [], cap: 5) == 5)
    }

    /// An update whose list row stays the same keeps the row (SQLite leaves it unwritten); one
    /// that changes any column of it, a search's or not, or the card's kind, is listed as the
    /// card is now. Every write here keeps the card's index entries, as an edit of a photo or
    /// an organisation does.
    @Test(arguments: StoreBackend.allCases)
    func anUpdateListsTheCardAsItIsNowWhicheverColumnOfItsRowChanged(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let entries = Self.metadata(uid: "a.vcf", name: "Anna", email: "anna@example.com").indexEntries
        var written = 0
        func write(_ fields: CardListingFields, kind: String = "individual") async throws {
            written += 1
            let data = Data(vcard(uid: "a.vcf", fn: "Anna").replacingOccurrences(of: "END:VCARD", with: "NOTE:edit \(written)\r\nEND:VCARD").utf8)
            _ = try await fixture.store.putResource(collectionID: fixture.book.id, name: "a.vcf", data: data, contentType: "text/vcard",
                                                    card: CardMetadata(uid: "a.vcf", kind: kind, indexEntries: entries, members: [],
                                                                       listing: fields),
                                                    precondition: .none)
        }
        func listed(_ filter: ListingFilter) async throws -> [CardListingFields] {
            try await fixture.store.cardListings(collectionID: fixture.book.id, filter: filter, search: [], from: .first, limit: 10)
                .rows.map(\.fields)
        }
        var fields = Self.fields("Anna", email: "anna@example.com")
        let edits: [(inout CardListingFields) -> Void] = [
            { _ in }, { $0.hasPhoto = true }, { $0.organization = "Acme" }, { $0.sortKey = "zz anna" }, { $0.phone = "+1 555" },
            { $0.email = nil }, { $0.displayName = "Anna B." }, { $0.searchText += "\nanna b." }, { _ in },
        ]
        for edit in edits {
            edit(&fields)
            try await write(fields)
            #expect(try await listed(.contacts) == [fields])
        }
        try await write(fields, kind: "group")
        #expect(try await listed(.contacts).isEmpty)
        #expect(try await listed(.groups) == [fields])
    }

    @Test(arguments: StoreBackend.allCases)
    func searchFindsSubstringsDigitsAndAccentsAndEveryWord(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await Self.put(fixture, "joanne.vcf", "Joanne Müller", email: "jo@example.com", phone: "+1 (555) 010-9999")
        try await Self.put(fixture, "ann.vcf", "Ann Smith", email: "ann@other.org")
        try await Self.put(fixture, "bob.vcf", "Bob", phone: "555 0100")
        func find(_ text: String) async throws -> [String] {
            try await fixture.store.cardListings(collectionID: fixture.book.id, filter: .contacts,
                                                 search: CardListingFields.searchWords(text), from: .first, limit: 50)
                .rows.map(\.name)
        }
        #expect(try await find("ann") == ["ann.vcf", "joanne.vcf"])
        #expect(try await find("ANN smi") == ["ann.vcf"])
        #expect(try await find("muller") == ["joanne.vcf"])
        #expect(try await find("5550109") == ["joanne.vcf"])
        #expect(try await find("(555) 010") == ["bob.vcf", "joanne.vcf"])
        #expect(try await find("other.org") == ["ann.vcf"])
        #expect(try await find("%") == [])
        #expect(try await fixture.store.cardCount(collectionID: fixture.book.id, filter: .contacts,
                                                  search: CardListingFields.searchWords("ann"), cap: 1000) == 2)
    }

    /// Past the search window: a common word is paged in list order, a rare one from the
    /// trigram index, merged or still pending, with the same answers either way; and the
    /// same answers again where the book is too small for the index (the default: under
    /// 5,000 cards, `SubstringIndexChoice`) and its own rows are read.
    @Test(arguments: zip([StoreBackend.sqlite, .sqlite, .postgres, .postgres], [true, false, true, false]))
    func searchesOfBigBooksPageTheSameFromTheWindowAndFromTheTrigramIndex(_ backend: StoreBackend, trigramIndex: Bool) async throws {
        let fixture = try await StoreFixture.make(backend, tuning: SQLiteStore.Tuning(
            substringIndexMinimumCards: trigramIndex ? 0 : SubstringIndexChoice.defaultMinimumBookCards))
        defer { fixture.close() }
        if let sqlite = fixture.sqliteStore {
            let query = try await sqlite.listingTrigramQuery(collectionID: fixture.book.id, search: ["xylo"], filter: .contacts)
            #expect((query != nil) == trigramIndex)
        }
        let count = SQLiteStore.searchWindow + 600
        // Every 40th card is a rare "Xylo"; all are "Common".
        let cards = (0..<count).map { index in
            let name = String(format: "Common %05d", index) + (index % 40 == 7 ? " Xylo" : "")
            return CardImport(name: "c\(index).vcf", data: Data(vcard(uid: "c\(index)", fn: name).utf8),
                              card: Self.metadata(uid: "c\(index)", name: name))
        }
        try await fixture.store.importCards(collectionID: fixture.book.id, cards: cards, batchSize: 1000, progress: nil)
        // One more after the merge the import did: found while still pending.
        try await Self.put(fixture, "late.vcf", "Zz Xylo Late")
        func walk(_ text: String) async throws -> [String] {
            var names: [String] = []
            var position = ListingPosition.first
            while true {
                let page = try await fixture.store.cardListings(collectionID: fixture.book.id, filter: .contacts,
                                                                search: CardListingFields.searchWords(text), from: position, limit: 50)
                names += page.rows.map(\.fields.displayName)
                guard let next = page.next else { return names }
                position = .after(next)
            }
        }
        let rare = try await walk("xylo")
        let expected = cards.map { $0.card.listing!.displayName }.filter { $0.hasSuffix("Xylo") } + ["Zz Xylo Late"]
        #expect(rare == expected)
        let common = try await walk("common 0")
        #expect(common.count == count && common == common.sorted())
        #expect(try await fixture.store.cardCount(collectionID: fixture.book.id, filter: .contacts,
                                                  search: ["xylo"], cap: 1000) == expected.count)
        #expect(try await fixture.store.cardCount(collectionID: fixture.book.id, filter: .contacts,
                                                  search: ["common"], cap: 1000) == 1000)
        if let sqlite = fixture.sqliteStore { try await sqlite.mergePendingIndex() }
        #expect(try await walk("xylo") == expected)
        // A deleted card leaves a stale trigram row: never a row of the list.
        try await fixture.store.deleteResource(collectionID: fixture.book.id, name: "late.vcf", precondition: .none)
        #expect(try await walk("xylo") == expected.dropLast())
    }

    @Test(arguments: StoreBackend.allCases)
    func groupAndCategoryFiltersListTheirMembers(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await Self.put(fixture, "a.vcf", "Alice", categories: ["Family"])
        // A name is not a category, nor a category's prefix one.
        try await Self.put(fixture, "b.vcf", "Family")
        try await Self.put(fixture, "c.vcf", "Carol", categories: ["Work", "family"])
        try await Self.put(fixture, "d.vcf", "Dave", categories: ["Family business"])
        try await Self.put(fixture, "g.vcf", "Friends", kind: "group", members: ["b.vcf", "c.vcf"])
        let members = try await fixture.store.cardListings(collectionID: fixture.book.id, filter: .groupMembers(name: "g.vcf"),
                                                           search: [], from: .first, limit: 10)
        #expect(members.rows.map(\.name) == ["c.vcf", "b.vcf"])
        let family = try await fixture.store.cardListings(collectionID: fixture.book.id, filter: .category("FAMILY"),
                                                          search: [], from: .first, limit: 10)
        #expect(family.rows.map(\.name) == ["a.vcf", "c.vcf"])
        #expect(try await fixture.store.cardCount(collectionID: fixture.book.id, filter: .category("family"), search: [],
                                                  cap: 10) == 2)
        #expect(try await fixture.store.categories(collectionID: fixture.book.id, limit: 10)
                == ["Family", "Family business", "Work"])
    }

    @Test(arguments: StoreBackend.allCases)
    func aReplacedOrDeletedCardLeavesNoStaleRow(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await Self.put(fixture, "a.vcf", "Zed")
        try await Self.put(fixture, "a.vcf", "Abe")
        try await Self.put(fixture, "b.vcf", "Bea")
        try await fixture.store.deleteResource(collectionID: fixture.book.id, name: "b.vcf", precondition: .none)
        let page = try await fixture.store.cardListings(collectionID: fixture.book.id, filter: .contacts, search: [],
                                                        from: .first, limit: 10)
        #expect(page.rows.map(\.fields.displayName) == ["Abe"])
        #expect(try await fixture.store.cardListings(collectionID: fixture.book.id, names: ["a.vcf", "b.vcf"]).map(\.name) == ["a.vcf"])
    }

    @Test(arguments: StoreBackend.allCases)
    func duplicateCandidatesShareAnEmailAPhoneOrAName(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await Self.put(fixture, "a.vcf", "Ann Smith", email: "Ann@Example.com")
        try await Self.put(fixture, "b.vcf", "A. Smith", email: "ann@example.com")
        try await Self.put(fixture, "c.vcf", "Carl", phone: "+44 20 7946 0958")
        try await Self.put(fixture, "d.vcf", "Carl Jones", phone: "020 7946 0958")
        try await Self.put(fixture, "e.vcf", "Dora  Lee")
        try await Self.put(fixture, "f.vcf", "dora lee")
        try await Self.put(fixture, "g.vcf", "Unique Person", email: "unique@example.com")
        let groups = try await fixture.store.duplicateCandidates(collectionID: fixture.book.id, limit: 10)
        #expect(groups == [["a.vcf", "b.vcf"], ["c.vcf", "d.vcf"], ["e.vcf", "f.vcf"]])
    }

    @Test(arguments: StoreBackend.allCases)
    func aTrashedCardIsADeleteToSyncAndComesBackWhole(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let put = try await Self.put(fixture, "a.vcf", "Ann")
        let before = try #require(try await fixture.store.resource(collectionID: fixture.book.id, name: "a.vcf"))
        // A stale ETag changes nothing.
        await #expect(throws: StoreError.preconditionFailed) {
            try await fixture.store.applyCardBatch(collectionID: fixture.book.id,
                                                   writes: [.trash(name: "a.vcf", precondition: .ifMatch(["\"old\""]), reason: .deleted)])
        }
        #expect(try await fixture.store.trash(collectionID: fixture.book.id, limit: 10).isEmpty)
        let deleted = try await fixture.store.applyCardBatch(
            collectionID: fixture.book.id, writes: [.trash(name: "a.vcf", precondition: .ifMatch([put.etag]), reason: .deleted)])
        let changes = try await fixture.store.changes(collectionID: fixture.book.id, since: put.seq, limit: nil)
        #expect(changes.changes == [ChangeSet.Change(name: "a.vcf", deleted: true, seq: deleted.seq)])
        let trashed = try #require(try await fixture.store.trash(collectionID: fixture.book.id, limit: 10).first)
        #expect(trashed.name == "a.vcf" && trashed.displayName == "Ann" && trashed.reason == .deleted && trashed.etag == put.etag)
        let kept = try #require(try await fixture.store.trashedCard(id: trashed.id))
        #expect(kept.data == before.data)

        let restored = try await fixture.store.applyCardBatch(collectionID: fixture.book.id, writes: [
            .put(name: trashed.name, data: kept.data, contentType: kept.contentType,
                 card: Self.metadata(uid: "a.vcf", name: "Ann"), precondition: .ifNoneMatchAny, keepPrevious: false),
            .dropTrashed(id: trashed.id),
        ])
        #expect(restored.etags["a.vcf"] == put.etag)
        #expect(try await fixture.store.resource(collectionID: fixture.book.id, name: "a.vcf")?.data == before.data)
        #expect(try await fixture.store.trash(collectionID: fixture.book.id, limit: 10).isEmpty)
        #expect(try await fixture.store.purgeTrash(olderThan: Date().addingTimeInterval(60)) == 0)
    }

    @Test(arguments: StoreBackend.allCases)
    func aMergeIsOneBatchThatUndoesAsOne(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let a = try await Self.put(fixture, "a.vcf", "Ann", email: "ann@example.com")
        let b = try await Self.put(fixture, "b.vcf", "Ann S", phone: "555 0100")
        let aBefore = try #require(try await fixture.store.resource(collectionID: fixture.book.id, name: "a.vcf")).data
        let merged = Data(vcard(uid: "a.vcf", fn: "Ann Merged").utf8)
        // A failing write anywhere in the batch leaves everything as it was.
        await #expect(throws: StoreError.notFound) {
            try await fixture.store.applyCardBatch(collectionID: fixture.book.id, writes: [
                .put(name: "a.vcf", data: merged, contentType: "text/vcard", card: Self.metadata(uid: "a.vcf", name: "Ann Merged"),
                     precondition: .ifMatch([a.etag]), keepPrevious: true),
                .trash(name: "missing.vcf", precondition: .none, reason: .merged),
            ])
        }
        #expect(try await fixture.store.resource(collectionID: fixture.book.id, name: "a.vcf")?.data == aBefore)
        #expect(try await fixture.store.trash(collectionID: fixture.book.id, limit: 10).isEmpty)

        let merge = try await fixture.store.applyCardBatch(collectionID: fixture.book.id, writes: [
            .put(name: "a.vcf", data: merged, contentType: "text/vcard", card: Self.metadata(uid: "a.vcf", name: "Ann Merged"),
                 precondition: .ifMatch([a.etag]), keepPrevious: true),
            .trash(name: "b.vcf", precondition: .ifMatch([b.etag]), reason: .merged),
        ])
        #expect(merge.seq == b.seq + 2)
        let entries = try await fixture.store.trash(batch: merge.batch)
        #expect(entries.map(\.reason) == [.replaced, .merged])
        #expect(entries[0].replacedBy == merge.etags["a.vcf"])

        // Undo: each entry back, the survivor only if no phone changed it since.
        var undo: [CardBatchWrite] = []
        for entry in entries {
            let kept = try #require(try await fixture.store.trashedCard(id: entry.id))
            let precondition: WritePrecondition = entry.reason == .replaced ? .ifMatch([entry.replacedBy!]) : .ifNoneMatchAny
            undo.append(.put(name: entry.name, data: kept.data, contentType: kept.contentType,
                             card: Self.metadata(uid: entry.uid, name: entry.displayName), precondition: precondition,
                             keepPrevious: false))
            undo.append(.dropTrashed(id: entry.id))
        }
        try await fixture.store.applyCardBatch(collectionID: fixture.book.id, writes: undo)
        #expect(try await fixture.store.resource(collectionID: fixture.book.id, name: "a.vcf")?.data == aBefore)
        #expect(try await fixture.store.resource(collectionID: fixture.book.id, name: "b.vcf") != nil)
        #expect(try await fixture.store.trash(collectionID: fixture.book.id, limit: 10).isEmpty)
    }

    @Test(arguments: StoreBackend.allCases)
    func sessionsEndWithAPasswordChangeADisableAndTheirUser(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createWebSession(tokenHash: "h1", user: "alice", csrfToken: "c1")
        let session = try #require(try await store.webSession(tokenHash: "h1"))
        #expect(session.user == "alice" && session.csrfToken == "c1")
        try await store.setPassword(user: "alice", password: "new")
        #expect(try await store.webSession(tokenHash: "h1") == nil)

        try await store.createWebSession(tokenHash: "h2", user: "alice", csrfToken: "c2")
        try await store.updateAccount(name: "alice", UserAccountUpdate(disabled: true))
        #expect(try await store.webSession(tokenHash: "h2") == nil)
        #expect(try await store.account(name: "alice")?.disabled == true)
        #expect(try await store.verifyPassword(user: "alice", password: "new") == false)
        let token = try await store.createAppPassword(user: "alice", name: "phone", readOnly: false, books: nil)
        #expect(try await store.checkAppPassword(user: "alice", secret: token.secret) == nil)
        try await store.updateAccount(name: "alice", UserAccountUpdate(disabled: false))
        #expect(try await store.verifyPassword(user: "alice", password: "new"))
        #expect(try await store.checkAppPassword(user: "alice", secret: token.secret) != nil)

        try await store.createWebSession(tokenHash: "h3", user: "alice", csrfToken: "c3")
        #expect(try await store.pruneWebSessions(idleSince: Date().addingTimeInterval(-60),
                                                 createdBefore: Date().addingTimeInterval(-60)) == 0)
        #expect(try await store.pruneWebSessions(idleSince: Date().addingTimeInterval(60), createdBefore: .distantPast) == 1)
        try await store.createWebSession(tokenHash: "h4", user: "alice", csrfToken: "c4")
        try await store.deleteUser(name: "alice")
        #expect(try await store.webSession(tokenHash: "h4") == nil)
    }

    /// Cards written without listing fields (a caller that had none) get a row from the
    /// backfill, once; a card replaced without fields loses its row.
    @Test(arguments: StoreBackend.allCases)
    func theBackfillGivesCardsWrittenWithoutFieldsTheirRows(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        for (name, fn) in [("z.vcf", "Zoë"), ("a.vcf", "Anna")] {
            try await fixture.store.putResource(
                collectionID: fixture.book.id, name: name, data: Data(vcard(uid: name, fn: fn).utf8), contentType: "text/vcard",
                card: CardMetadata(uid: name, kind: "individual", indexEntries: [], members: []), precondition: .none)
        }
        try await Self.put(fixture, "b.vcf", "Bert")
        func names() async throws -> [String] {
            try await fixture.store.cardListings(collectionID: fixture.book.id, filter: .contacts, search: [], from: .first,
                                                 limit: 10).rows.map(\.fields.displayName)
        }
        #expect(try await names() == ["Bert"])
        let given = try await fixture.store.backfillCardListings { data in
            let text = String(decoding: data, as: UTF8.self)
            guard let line = text.split(separator: "\r\n").first(where: { $0.hasPrefix("FN:") }) else { return nil }
            return Self.fields(String(line.dropFirst(3)))
        }
        #expect(given == 2)
        #expect(try await fixture.store.backfillCardListings { _ in nil } == 0)
        #expect(try await names() == ["Anna", "Bert", "Zoë"])
        try await fixture.store.putResource(
            collectionID: fixture.book.id, name: "b.vcf", data: Data(vcard(uid: "b.vcf", fn: "Bert 2").utf8),
            contentType: "text/vcard", card: CardMetadata(uid: "b.vcf", kind: "individual", indexEntries: [], members: []),
            precondition: .none)
        #expect(try await names() == ["Anna", "Zoë"])
    }

    /// A folder (the caller removes it) holding `rolo.sqlite` at `migration`: alice, her book 1
    /// at sync seq 2, and two cards, Zoë (id 1, seq 1) and Anna (id 2, seq 2), each resource
    /// and body written here and the rows of that schema's other tables by `write`.
    static func olderDatabase(upTo migration: String,
                              _ write: @escaping @Sendable (Database, Int64, String, Data) throws -> Void) async throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-\(migration)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("rolo.sqlite").path)
        try SQLiteStore.migrator.migrate(queue, upTo: migration)
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO users (id, name, password_hash, created) VALUES (1, 'alice', 'x', 0);
                INSERT INTO collections (id, owner_id, parent_id, path, kind, sync_seq, created, modified)
                    VALUES (1, 1, NULL, 'default', 'addressbook', 2, 0, 0);
                """)
            for (id, fn) in [(Int64(1), "Zoë"), (2, "Anna")] {
                let body = Data(vcard(uid: "u\(id)", fn: fn).utf8)
                try db.execute(sql: """
                    INSERT INTO resources (id, collection_id, name, content_type, etag, size, modified, seq, uid, kind)
                    VALUES (?, 1, ?, 'text/vcard', ?, ?, 0, ?, ?, 'individual')
                    """, arguments: [id, "c\(id).vcf", ETag.of(body), body.count, id, "u\(id)"])
                try db.execute(sql: "INSERT INTO resource_bodies (resource_id, data) VALUES (?, ?)", arguments: [id, body])
                try write(db, id, fn, body)
            }
        }
        try queue.close()
        return folder
    }

    /// A v8 database (the schema before the web UI) upgrades in place: cards, ETags and
    /// sync tokens as they were, and lists once the backfill gave the cards their rows.
    @Test func aVersion8DatabaseUpgradesAndBackfillsItsListings() async throws {
        let folder = try await Self.olderDatabase(upTo: "v8-push") { db, id, fn, body in
            try db.execute(sql: "INSERT INTO changes (collection_id, seq, name, deleted, at) VALUES (1, ?, ?, 0, 0)",
                           arguments: [id, "c\(id).vcf"])
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("rolo.sqlite").path

        let store = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? store.close() }
        let stored = try #require(try await store.resource(collectionID: 1, name: "c1.vcf"))
        #expect(stored.info.etag == ETag.of(Data(vcard(uid: "u1", fn: "Zoë").utf8)))
        #expect(try await store.changes(collectionID: 1, since: 1, limit: nil).changes.map(\.name) == ["c2.vcf"])
        #expect(try await store.account(name: "alice")?.disabled == false)
        #expect(try await store.cardListings(collectionID: 1, filter: .contacts, search: [], from: .first, limit: 10).rows.isEmpty)
        let given = try await store.backfillCardListings { data in
            let text = String(decoding: data, as: UTF8.self)
            guard let line = text.split(separator: "\r\n").first(where: { $0.hasPrefix("FN:") }) else { return nil }
            return Self.fields(String(line.dropFirst(3)))
        }
        #expect(given == 2)
        #expect(try await store.backfillCardListings { _ in nil } == 0)
        let page = try await store.cardListings(collectionID: 1, filter: .contacts, search: [], from: .first, limit: 10)
        #expect(page.rows.map(\.fields.displayName) == ["Anna", "Zoë"])
        #expect(page.rows.map(\.etag) == [ETag.of(Data(vcard(uid: "u2", fn: "Anna").utf8)), stored.info.etag])
    }

    /// A v18 database, its list rows clustered by sort key and its pending index entries by
    /// (resource, position), upgrades in place (v19): list rows kept by resource id with the
    /// list order in a unique index, pending entries keyed by `pendingEntryID`; every card,
    /// ETag, list row, index entry and sync token as it was, and a card's rows still going
    /// with the card.
    @Test func aVersion18DatabaseKeepsItsListingsAndPendingEntriesInWriteOrder() async throws {
        let folder = try await Self.olderDatabase(upTo: "v18-current-version-in-changes") { db, id, fn, body in
            let fields = Self.fields(fn, email: "\(fn.lowercased())@example.com")
            try db.execute(sql: """
                INSERT INTO changes (collection_id, seq, name, deleted, at, etag, content_type)
                VALUES (1, ?, ?, 0, 0, ?, 'text/vcard')
                """, arguments: [id, "c\(id).vcf", ETag.of(body)])
            try db.execute(sql: """
                INSERT INTO card_listings (collection_id, is_group, sort_key, name, resource_id, display_name,
                    organization, email, phone, has_photo, search_text)
                VALUES (1, 0, ?, ?, ?, ?, NULL, ?, NULL, 0, ?)
                """, arguments: [fields.sortKey, "c\(id).vcf", id, fields.displayName, fields.email, fields.searchText])
            for (position, (property, value)) in [("UID", "u\(id)"), ("FN", fn)].enumerated() {
                let entry = FoldedIndexEntry(IndexEntry(property: property, value: value))
                try db.execute(sql: """
                    INSERT INTO card_index_pending (resource_id, position, collection_id, property, value_unicode, value_ascii, value)
                    VALUES (?, ?, 1, ?, ?, ?, ?)
                    """, arguments: [id, position, property, entry.unicode, entry.ascii, entry.verbatim])
            }
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("rolo.sqlite").path

        let store = try SQLiteStore(path: path, bcryptCost: 4)
        defer { try? store.close() }
        let layout = try await store.pool.read { db in
            (try Row.fetchAll(db, sql: "SELECT name FROM pragma_table_info('card_listings') WHERE pk > 0").map { $0[0] as String },
             try Row.fetchAll(db, sql: "SELECT name, \"unique\" FROM pragma_index_list('card_listings')").map { "\($0[0] as String) \($0[1] as Int)" })
        }
        #expect(layout.0 == ["resource_id"])
        #expect(layout.1 == ["card_listings_order 1"])
        // Opening the store merged the entries the upgrade kept, read through the generated columns.
        let merged = try await store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT resource_id, position, property FROM card_index ORDER BY resource_id, position")
                .map { "\($0[0] as Int64) \($0[1] as Int) \($0[2] as String)" }
        }
        #expect(merged == ["1 0 UID", "1 1 FN", "2 0 UID", "2 1 FN"])
        let byName = IndexPredicate.textMatch(property: "FN", text: "zoë", collation: .unicodeCasemap, match: .equals, negate: false)
        #expect(try await store.query(collectionID: 1, predicate: byName, limit: nil) == ["c1.vcf"])
        let anna = ETag.of(Data(vcard(uid: "u2", fn: "Anna").utf8)), zoe = ETag.of(Data(vcard(uid: "u1", fn: "Zoë").utf8))
        let page = try await store.cardListings(collectionID: 1, filter: .contacts, search: [], from: .first, limit: 10)
        #expect(page.rows.map(\.fields.displayName) == ["Anna", "Zoë"])
        #expect(page.rows.map(\.etag) == [anna, zoe])
        #expect(page.rows.map(\.fields.email) == ["anna@example.com", "zoë@example.com"])
        let found = try await store.cardListings(collectionID: 1, filter: .contacts, search: ["zoe"], from: .first, limit: 10)
        #expect(found.rows.map(\.name) == ["c1.vcf"])
        #expect(try await store.changes(collectionID: 1, since: 1, limit: nil).changes.map(\.name) == ["c2.vcf"])
        // A new card's entries wait under its key, and are found.
        let written = try await store.putResource(collectionID: 1, name: "c3.vcf", data: Data(vcard(uid: "u3", fn: "Maja").utf8),
                                                  contentType: "text/vcard", card: Self.metadata(uid: "u3", name: "Maja"),
                                                  precondition: .none)
        let pending = try await store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, resource_id, position, property FROM card_index_pending ORDER BY id")
                .map { "\($0[1] as Int64) \($0[2] as Int) \($0[3] as String)" + (($0[0] as Int64) == (($0[1] as Int64) << 24) + ($0[2] as Int64) ? "" : " (key?)") }
        }
        #expect(pending == ["3 0 UID", "3 1 FN"])
        let maja = IndexPredicate.textMatch(property: "FN", text: "MAJA", collation: .asciiCasemap, match: .equals, negate: false)
        #expect(try await store.query(collectionID: 1, predicate: maja, limit: nil) == ["c3.vcf"])
        #expect(written.created)
        // The trigger remade after the rebuild still takes a deleted card's rows with it,
        // pending entries included.
        try await store.deleteResource(collectionID: 1, name: "c2.vcf", precondition: .none)
        try await store.deleteResource(collectionID: 1, name: "c3.vcf", precondition: .none)
        #expect(try await store.pendingIndexEntryCount() == 0)
        let after = try await store.cardListings(collectionID: 1, filter: .contacts, search: [], from: .first, limit: 10)
        #expect(after.rows.map(\.fields.displayName) == ["Zoë"])
        #expect(try await store.query(collectionID: 1, predicate: maja, limit: nil).isEmpty)
        #expect(try await store.integrityCheck() == [])
    }
}
