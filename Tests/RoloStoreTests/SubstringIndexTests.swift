import Foundation
import GRDB
import PostgresTestSupport
import Synchronization
import Testing
@testable import RoloPostgres
@testable import RoloSQLite
@testable import RoloStore

/// contains and ends-with of three or more characters go through `card_trigrams` (schema v7)
/// and an exact check of each candidate; shorter needles scan. Both must give the answers
/// the collations define, wherever the entries are (pending, merged, replaced, deleted).
/// On PostgreSQL the same answers come through the pg_trgm index (`PostgresStore+Query`).
@Suite(.closesStores) struct SubstringIndexTests {
    static func contains(_ text: String, _ collation: IndexPredicate.Collation = .unicodeCasemap,
                         match: IndexPredicate.MatchType = .contains, negate: Bool = false,
                         property: String = "NICKNAME") -> IndexPredicate {
        .textMatch(property: property, text: text, collation: collation, match: match, negate: negate)
    }

    @Test func aTrigramQueryQuotesEachDistinctTrigramOfTheScalars() {
        #expect(SQLiteStore.trigramQuery("") == nil)
        #expect(SQLiteStore.trigramQuery("ab") == nil)
        #expect(SQLiteStore.trigramQuery("é") == nil)
        #expect(SQLiteStore.trigramQuery("abc") == "\"abc\"")
        #expect(SQLiteStore.trigramQuery("anna") == "\"ann\" AND \"nna\"")
        #expect(SQLiteStore.trigramQuery("aaaaa") == "\"aaa\"")
        #expect(SQLiteStore.trigramQuery("a\"b") == "\"a\"\"b\"")
        #expect(SQLiteStore.trigramQuery("ab\0cd") == nil)
        // Three scalars, one character: the tokenizer counts scalars too.
        #expect(SQLiteStore.trigramQuery("e\u{301}x") == "\"e\u{301}x\"")
        // Canonically equivalent, different scalars: both kept.
        #expect(SQLiteStore.trigramQuery("e\u{301}\u{323}e\u{323}\u{301}")?.components(separatedBy: " AND ").count == 4)
    }

    @Test func onlyContainsAndEndsWithOfThreeScalarsOrMoreUseTheTrigramIndex() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        for collation in [IndexPredicate.Collation.unicodeCasemap, .asciiCasemap, .octet] {
            for (text, match, negate, indexed) in [("ann", IndexPredicate.MatchType.contains, false, true), ("ann", .endsWith, false, true),
                                                   ("an", .contains, false, false), ("ann", .contains, true, false),
                                                   ("ann", .startsWith, false, false), ("ann", .equals, false, false)] {
                var arguments = StatementArguments()
                let sql = SQLiteStore.sql(for: Self.contains(text, collation, match: match, negate: negate),
                                          collectionID: fixture.book.id, trigrams: true, arguments: &arguments)
                #expect(sql.contains("card_trigrams MATCH") == indexed, "\(collation) \(match) \(text) negate \(negate)")
            }
        }
        // SQLite drives the search from the trigram index and looks each candidate's rows up
        // by resource, rather than scanning the property's rows and probing the index.
        var arguments = StatementArguments([fixture.book.id])
        let condition = SQLiteStore.sql(for: Self.contains("anna"), collectionID: fixture.book.id, trigrams: true, arguments: &arguments)
        let bound = arguments
        let plan = try await fixture.sqlite.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT r.name FROM resources r WHERE +r.collection_id = ? AND \(condition)",
                             arguments: bound).map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("VIRTUAL TABLE") }, "\(plan)")
        #expect(plan.contains { $0.contains("USING PRIMARY KEY (resource_id=?)") }, "\(plan)")
    }

    /// The trigram index covers every book: only a big book that is a good share of the
    /// database uses it; a small one, or one among many, scans its own rows. Counts are
    /// taken once a minute; 0 sends every book to the index.
    @Test func onlyBigBooksThatAreAGoodShareOfTheDatabaseUseTheTrigramIndex() async throws {
        let counted = Mutex(0)
        func choose(_ choice: SubstringIndexChoice, book: Int, total: Int, id: Int64 = 1) async throws -> Bool {
            try await choice.usesIndex(collectionID: id, bookCards: { counted.withLock { $0 += 1 }; return book },
                                       totalCards: { total })
        }
        #expect(try await choose(SubstringIndexChoice(), book: 4_999, total: 4_999) == false)
        #expect(try await choose(SubstringIndexChoice(), book: 100_000, total: 120_000) == true)
        #expect(try await choose(SubstringIndexChoice(), book: 10_000, total: 1_000_000) == false)
        #expect(try await choose(SubstringIndexChoice(), book: 10_000, total: 0) == true, "an estimate of 0: the book is all")
        #expect(try await choose(SubstringIndexChoice(minimumBookCards: 0), book: 3, total: 1_000_000) == true)
        let cached = SubstringIndexChoice()
        counted.withLock { $0 = 0 }
        _ = try await choose(cached, book: 100_000, total: 100_000)
        #expect(try await choose(cached, book: 1, total: 1) == true, "the count of a minute ago")
        #expect(counted.withLock { $0 } == 1)
        #expect(try await choose(cached, book: 1, total: 1, id: 2) == false)
    }

    /// The choice follows a growing book: PUTs that create cards add to its cached count,
    /// and an import has the next query count again (issue 34: a count kept from before a
    /// large import had the book scanned for the minute after it).
    @Test func theChoiceFollowsABookAsItGrows() async throws {
        let counted = Mutex(0)
        func choose(_ choice: SubstringIndexChoice, book: Int, id: Int64 = 1) async throws -> Bool {
            try await choice.usesIndex(collectionID: id, bookCards: { counted.withLock { $0 += 1 }; return book },
                                       totalCards: { book })
        }
        let minimum = SubstringIndexChoice.defaultMinimumBookCards
        let afterImport = SubstringIndexChoice()
        #expect(try await choose(afterImport, book: 10) == false)
        afterImport.bookChangedInBulk(1)
        #expect(try await choose(afterImport, book: 100_000) == true, "counted again after the import")
        #expect(counted.withLock { $0 } == 2)

        let afterPuts = SubstringIndexChoice()
        #expect(try await choose(afterPuts, book: minimum - 2) == false)
        afterPuts.cardCreated(in: 1)
        #expect(try await choose(afterPuts, book: 0) == false, "one short")
        afterPuts.cardCreated(in: 1)
        afterPuts.cardCreated(in: 2)
        #expect(try await choose(afterPuts, book: 0) == true, "the cached count grew to the minimum")
        #expect(counted.withLock { $0 } == 3, "no count taken again")
    }

    /// On a real store: a contains query right after an import is steered by the imported
    /// book, not by the count cached while the book was small (issue 34: that count had the
    /// book scanned for the minute after the import), and a PUT that brings a counted book to
    /// the minimum moves it onto the index at once. No waiting: the cached counts would last
    /// a minute.
    @Test(arguments: StoreBackend.allCases)
    func theIndexChoiceFollowsAnImportAndAPutAtOnce(_ backend: StoreBackend) async throws {
        let minimum = 50
        let fixture: StoreFixture
        if backend == .postgres {
            let database = try await TestDatabase.create()
            var configuration = try database.configuration()
            configuration.substringIndexMinimumCards = minimum
            let opened = try await PostgresStore.open(configuration)
            try await opened.createUser(name: "alice", password: "secret")
            fixture = StoreFixture(backend: .postgres, store: opened,
                                   book: try #require(try await opened.collection(owner: "alice", path: ["default"])),
                                   cleanup: { await opened.close(); await database.drop() })
            #expect(opened.usesTrigramIndex, "pg_trgm ships with Debian's server: the test server has the index")
        } else {
            fixture = try await StoreFixture.make(backend, tuning: SQLiteStore.Tuning(substringIndexMinimumCards: minimum))
        }
        defer { fixture.close() }
        func usesIndex(_ book: Int64) async throws -> Bool {
            switch fixture.cards {
            case let store as SQLiteStore: try await store.usesTrigramIndex(collectionID: book)
            case let store as PostgresStore: try await store.substringQueryUsesTrigramIndex(collectionID: book)
            default: throw StoreError.notFound
            }
        }
        func card(_ index: Int, prefix: String) -> CardImport {
            let fn = "Anna Lindqvist \(index)"
            return CardImport(name: "\(prefix)\(index).vcf", data: Data(vcard(uid: "\(prefix)\(index)", fn: fn).utf8),
                              card: CardMetadata(uid: "\(prefix)\(index)", kind: "individual",
                                                 indexEntries: [IndexEntry(property: "FN", value: fn)], members: []))
        }
        // The shape of carddav-bench's query: a family name, a space, a number's first digit.
        let needle = Self.contains("Lindqvist 1", property: "FN")
        let book = fixture.book.id
        for index in 0..<5 { try await fixture.put("small\(index).vcf", fn: "Small \(index)") }
        #expect(try await fixture.cards.query(collectionID: book, predicate: needle, limit: nil) == [])
        #expect(try await usesIndex(book) == false, "5 cards: the book's own rows")

        try await fixture.cards.importCards(collectionID: book, cards: (0..<200).map { card($0, prefix: "i") },
                                            batchSize: 500, progress: nil)
        #expect(try await usesIndex(book) == true, "right after the import, the imported book's size")
        let found = try await fixture.cards.query(collectionID: book, predicate: needle, limit: nil)
        let expected = (0..<200).filter { String($0).hasPrefix("1") }.map { "i\($0).vcf" }
        #expect(found == expected.sorted())

        // Another book, counted one short of the minimum, then one PUT: on the index at once.
        try await fixture.addUser("bob")
        let other = try #require(try await fixture.store.collection(owner: "bob", path: ["default"])).id
        try await fixture.cards.importCards(collectionID: other, cards: (0..<minimum - 1).map { card($0, prefix: "b") },
                                            batchSize: 500, progress: nil)
        #expect(try await usesIndex(other) == false, "one card short of the minimum")
        let data = Data(vcard(uid: "b-last", fn: "Anna Lindqvist 1000").utf8)
        let put = try await fixture.cards.putResource(
            collectionID: other, name: "b-last.vcf", data: data, contentType: "text/vcard; charset=utf-8",
            card: CardMetadata(uid: "b-last", kind: "individual", indexEntries: [IndexEntry(property: "FN", value: "Anna Lindqvist 1000")],
                               members: []),
            precondition: .none)
        #expect(put.created)
        #expect(try await usesIndex(other) == true, "the PUT brought the cached count to the minimum")
    }

    /// Words mixing the characters where folds differ; needles are their substrings of one
    /// to five scalars in three casings, and a few that match nothing.
    static let words = ["Joanne", "JOANNE", "Anna-Lena", "Élodie", "E\u{301}LODIE", "straße", "STRASSE", "ΣΟΦΊΑ", "σοφία",
                        "İstanbul", "ﬁnance", "Ⅻ Club", "+46 70 123 45 67", "anna@example.com", "Ann\"Quote", "a%b_c", ""]

    static let needles: [String] = {
        var needles: Set<String> = ["zzz", "nn@", "qqqq", "\"qu", "%b_", "ΟΦΊ", "ss", "ß", "fi", "xii", "123 4"]
        for word in words {
            let scalars = Array(word.unicodeScalars)
            for length in 1...5 where length <= scalars.count {
                for start in stride(from: 0, through: scalars.count - length, by: 2) {
                    var view = String.UnicodeScalarView()
                    view.append(contentsOf: scalars[start..<start + length])
                    let text = String(view)
                    needles.formUnion([text, text.uppercased(), text.lowercased()])
                }
            }
        }
        return needles.sorted()
    }()

    enum State: CaseIterable { case pending, merged, replacedAndDeleted }

    /// PostgreSQL has no pending entries: its states are "just written" and "rewritten".
    static let cases: [(StoreBackend, State)] = State.allCases.map { (.sqlite, $0) } + [(.postgres, .pending), (.postgres, .replacedAndDeleted)]

    @Test(arguments: cases)
    func answersAgreeWithTheCollationsForShortAndLongNeedles(_ backend: StoreBackend, state: State) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        var values: [String: [String]] = [:]
        for card in 0..<24 {
            let mine = (0..<(card % 3 + 1)).map { Self.words[(card * 5 + $0 * 7) % Self.words.count] }
            values["c\(card).vcf"] = mine
            try await fixture.put("c\(card).vcf", extra: mine.map { IndexEntry(property: "NICKNAME", value: $0) }
                                  + [IndexEntry(property: "EMAIL", value: "joanne@example.com")])
        }
        // PUTs leave SQLite's trigram index alone; the merge writes a row per card.
        let trigramRows = { try await fixture.sqlite.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM card_trigrams") } }
        if backend == .sqlite { #expect(try await trigramRows() == 0) }
        if backend == .sqlite && state != .pending {
            try await fixture.mergePendingIndex()
            #expect(try await trigramRows() == 24)
        }
        if state == .replacedAndDeleted {
            // Merged cards replaced (their trigram rows go stale), one with a card that has no
            // nickname left, and deleted ones; the last card's id is reused by a new card.
            for card in [1, 4, 7] {
                let mine = [Self.words[(card * 3) % Self.words.count].uppercased()]
                values["c\(card).vcf"] = mine
                try await fixture.put("c\(card).vcf", extra: mine.map { IndexEntry(property: "NICKNAME", value: $0) })
            }
            values["c10.vcf"] = []
            try await fixture.put("c10.vcf")
            for card in [2, 23] {
                values["c\(card).vcf"] = nil
                try await fixture.store.deleteResource(collectionID: fixture.book.id, name: "c\(card).vcf", precondition: .none)
            }
            values["new.vcf"] = ["Joanna"]
            try await fixture.put("new.vcf", extra: [IndexEntry(property: "NICKNAME", value: "Joanna")])
            #expect(try await fixture.integrityCheck() == [])
        }
        var checked = 0
        for text in Self.needles {
            for collation in [IndexPredicate.Collation.asciiCasemap, .unicodeCasemap, .octet] {
                for match in [IndexPredicate.MatchType.contains, .endsWith] {
                    for negate in [false, true] {
                        let predicate = Self.contains(text, collation, match: match, negate: negate)
                        let found = try await fixture.store.query(collectionID: fixture.book.id, predicate: predicate, limit: nil)
                        let expected = values.filter { _, values in
                            values.contains { QueryAgreementTests.matches($0, text, collation, match) != negate }
                        }.keys.sorted()
                        #expect(found == expected, "\(predicate)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == Self.needles.count * 12 && checked > 2000)
        if backend == .sqlite && state == .replacedAndDeleted {
            // The merge drops the stale rows and the answers stay the same.
            try await fixture.mergePendingIndex()
            let stale = try await fixture.sqlite.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM card_trigram_stale") }
            #expect(stale == 0)
            #expect(try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: Self.contains("joann"), limit: nil)
                == values.filter { $0.value.contains { $0.lowercased().contains("joann") } }.keys.sorted())
            #expect(try await fixture.integrityCheck() == [])
        }
    }

    /// A reused resource id: the deleted card's trigram row must not find the new card's
    /// old text, and the new card's row must survive the merge that drops the stale one.
    @Test func aDeletedCardsIdReusedByANewCardFindsOnlyTheNewText() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("a.vcf", fn: "Annabelle")
        try await fixture.put("b.vcf", fn: "Bartholomew")
        try await fixture.mergePendingIndex()
        let oldID = try await fixture.sqlite.pool.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM resources WHERE name = 'b.vcf'") }
        try await fixture.sqlite.deleteResource(collectionID: fixture.book.id, name: "b.vcf", precondition: .none)
        try await fixture.put("c.vcf", fn: "Cordelia")
        let newID = try await fixture.sqlite.pool.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM resources WHERE name = 'c.vcf'") }
        #expect(oldID == newID, "SQLite reuses the largest rowid once it is free")
        let fn = { (text: String) in Self.contains(text, property: "FN") }
        #expect(try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: fn("tholo"), limit: nil).isEmpty)
        #expect(try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: fn("rdeli"), limit: nil) == ["c.vcf"])
        try await fixture.mergePendingIndex()
        #expect(try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: fn("tholo"), limit: nil).isEmpty)
        #expect(try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: fn("rdeli"), limit: nil) == ["c.vcf"])
        #expect(try await fixture.integrityCheck() == [])
    }

    /// A card replaced by one with no index entries leaves no trigram row after the merge.
    @Test func aCardReplacedByOneWithoutEntriesLosesItsTrigramRowAtTheMerge() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("a.vcf", fn: "Annabelle")
        try await fixture.mergePendingIndex()
        _ = try await fixture.sqlite.putResource(collectionID: fixture.book.id, name: "a.vcf", data: Data("BEGIN:VCARD\r\nEND:VCARD\r\n".utf8),
                                                contentType: "text/vcard", card: nil, precondition: .none)
        #expect(try await fixture.integrityCheck() == [])
        #expect(try await fixture.sqlite.query(collectionID: fixture.book.id, predicate: Self.contains("belle", property: "FN"), limit: nil).isEmpty)
        try await fixture.mergePendingIndex()
        let rows = try await fixture.sqlite.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM card_trigrams") }
        #expect(rows == 0)
        #expect(try await fixture.integrityCheck() == [])
    }

    @Test func theIntegrityCheckFindsAMissingRowATextThatLacksAValueAndALeakedRow() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("a.vcf", fn: "Élodie Durand")
        try await fixture.put("b.vcf", fn: "Bob")
        try await fixture.mergePendingIndex()
        #expect(try await fixture.integrityCheck() == [])
        let ids: [Int64] = try await fixture.sqlite.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM resources ORDER BY name") }

        try await fixture.sqlite.pool.write { db in try db.execute(sql: "DELETE FROM card_trigrams WHERE rowid = ?", arguments: [ids[0]]) }
        #expect(try await fixture.integrityCheck() == ["merged index row missing from the trigram index: \(ids[0])"])

        // The ASCII fold ("Élodie durand") is what i;ascii-casemap needles are looked up by.
        try await fixture.sqlite.pool.write { db in
            try db.execute(sql: "INSERT INTO card_trigrams (rowid, text) VALUES (?, ?)",
                           arguments: [ids[0], "\(ids[0])\n\(CaseFolding.unicode("Élodie Durand"))"])
        }
        #expect(try await fixture.integrityCheck() == ["merged index row missing from the trigram index: \(ids[0])"])

        try await fixture.sqlite.pool.write { db in
            try db.execute(sql: "DELETE FROM card_trigrams WHERE rowid = ?", arguments: [ids[0]])
            try db.execute(sql: "INSERT INTO card_trigrams (rowid, text) SELECT resource_id, \(SQLiteStore.trigramText) FROM card_index WHERE resource_id = ?",
                           arguments: [ids[0]])
            try db.execute(sql: "INSERT INTO card_trigrams (rowid, text) VALUES (999, 'left behind')")
        }
        #expect(try await fixture.integrityCheck() == ["trigram row of a card without merged entries, not marked stale: 999"])
    }

    /// FTS5's own check: an index that no longer agrees with the text it stores.
    @Test func theIntegrityCheckRunsTheTrigramIndexsOwnCheck() async throws {
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        try await fixture.put("a.vcf", fn: "Annabelle")
        try await fixture.mergePendingIndex()
        try await fixture.sqlite.pool.write { db in
            try db.execute(sql: "UPDATE card_trigrams_content SET c0 = c0 || ' and more'")
        }
        let problems = try await fixture.integrityCheck()
        #expect(problems.count == 1 && problems[0].hasPrefix("trigram index: "), "\(problems)")
    }
}
