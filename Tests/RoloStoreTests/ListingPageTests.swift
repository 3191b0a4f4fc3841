import Foundation
import GRDB
@testable import RoloSQLite
@testable import RoloStore
import Testing

/// Keyset pages of a book, on each backend: every resource exactly once, in byte order,
/// whatever the page size, and the named lookups with and without bodies agreeing.
@Suite(.closesStores) struct ListingPageTests {
    /// Names whose byte order differs from Swift's String order ("e\u{301}" and "é" are
    /// equal Strings but different bytes).
    static let names = ["b", "a", "Z", "é", "e\u{301}", "日本", "a b", "a%b", "ab", "0"]

    static func fixture(_ backend: StoreBackend) async throws -> StoreFixture {
        let fixture = try await StoreFixture.make(backend)
        for (index, name) in names.enumerated() { try await fixture.put(name, uid: "uid-\(index)") }
        return fixture
    }

    /// The count that tells a whole-book read (the access history's full-download flag):
    /// exact below its cap, the cap above it, and only this book's cards; on SQLite a cap up
    /// to `countOnCallingThreadCap` and `.max` take different connections, both tested.
    @Test(arguments: StoreBackend.cardBackends)
    func aBookIsCountedUpToTheCap(_ backend: StoreBackend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { fixture.close() }
        let book = fixture.book.id
        #expect(try await fixture.cards.resourceCount(collectionID: book, cap: .max) == Self.names.count)
        #expect(try await fixture.cards.resourceCount(collectionID: book, cap: Self.names.count + 1) == Self.names.count)
        #expect(try await fixture.cards.resourceCount(collectionID: book, cap: 4) == 4)
        #expect(try await fixture.cards.resourceCount(collectionID: book, cap: 0) == 0)
        try await fixture.cards.deleteResource(collectionID: book, name: "a", precondition: .none)
        // Both ways of counting see the delete: a bounded count reads on the calling thread
        // (SQLite's row readers), an unbounded one through the pool.
        #expect(try await fixture.cards.resourceCount(collectionID: book, cap: .max) == Self.names.count - 1)
        #expect(try await fixture.cards.resourceCount(collectionID: book, cap: Self.names.count + 1) == Self.names.count - 1)
        let other = try await fixture.cards.createCollection(owner: "alice", path: ["other"], kind: .addressBook,
                                                             displayName: nil, description: nil)
        #expect(try await fixture.cards.resourceCount(collectionID: other.id, cap: .max) == 0)
    }

    @Test(arguments: StoreBackend.cardBackends, [1, 3, 10, 50])
    func pagesCoverEveryResourceOnceInByteOrder(_ backend: StoreBackend, pageSize: Int) async throws {
        let fixture = try await Self.fixture(backend)
        defer { fixture.close() }
        var listed: [String] = []
        var withBodies: [StoredResource] = []
        var cursor: String?
        var reads = 0
        repeat {
            let page = try await fixture.cards.listResources(collectionID: fixture.book.id, after: cursor, limit: pageSize)
            #expect(page.count <= pageSize)
            withBodies += try await fixture.cards.allResources(collectionID: fixture.book.id, after: cursor, limit: pageSize)
            listed += page.map(\.name)
            cursor = page.last?.name
            reads += 1
            if page.count < pageSize { break }
        } while reads <= Self.names.count + 1
        let byteOrder = Self.names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(listed == byteOrder)
        #expect(withBodies.map(\.info.name) == byteOrder)
        #expect(withBodies.allSatisfy { String(decoding: $0.data, as: UTF8.self).contains("BEGIN:VCARD") })
    }

    /// A listing's body limit: bodies over it come back empty and marked, the rest whole,
    /// in named reads and in pages alike (the SQL's CASE, which never loads a big body).
    @Test(arguments: StoreBackend.cardBackends)
    func bodiesOverTheLimitStayInTheStore(_ backend: StoreBackend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { fixture.close() }
        let big = Data(("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:big\r\nFN:Big\r\nNOTE:" + String(repeating: "x", count: 5000)
            + "\r\nEND:VCARD\r\n").utf8)
        _ = try await fixture.cards.putResource(collectionID: fixture.book.id, name: "big", data: big, contentType: "text/vcard",
                                                card: CardMetadata(uid: "big", kind: "individual", indexEntries: [], members: []),
                                                precondition: .none)
        let limit = big.count - 1
        let named = try await fixture.cards.resources(collectionID: fixture.book.id, names: ["big", "a", "日本"], bodyLimit: limit)
        let paged = try await fixture.cards.allResources(collectionID: fixture.book.id, after: nil, limit: 100, bodyLimit: limit)
        #expect(named.count == 3 && paged.count == Self.names.count + 1)
        for card in named + paged {
            let isBig = card.info.name == "big"
            #expect(card.bodyLeftOut == isBig && card.data.isEmpty == isBig, "\(card.info.name)")
            if isBig { #expect(card.info.size == big.count) }
        }
        // At the limit the body is still read; the full read always has it.
        let atLimit = try await fixture.cards.resources(collectionID: fixture.book.id, names: ["big"], bodyLimit: big.count)
        #expect(atLimit.first?.data == big && atLimit.first?.bodyLeftOut == false)
        #expect(try await fixture.cards.resource(collectionID: fixture.book.id, name: "big")?.data == big)
    }

    /// A named read with a body limit finds what the full read finds, whatever its form on
    /// PostgreSQL (a row of arrays for a few names and for many, a row per card when names ×
    /// limit would make too big a row): absent names skipped, each name once, in byte order,
    /// a body over the limit left out and the others whole.
    @Test(arguments: StoreBackend.cardBackends)
    func namedReadsWithABodyLimitAgreeWithTheFullRead(_ backend: StoreBackend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { fixture.close() }
        let big = Data(("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:big\r\nFN:Big\r\nNOTE:" + String(repeating: "x", count: 300_000)
            + "\r\nEND:VCARD\r\n").utf8)
        _ = try await fixture.cards.putResource(collectionID: fixture.book.id, name: "big", data: big, contentType: "text/vcard",
                                                card: CardMetadata(uid: "big", kind: "individual", indexEntries: [], members: []),
                                                precondition: .none)
        let present = Self.names + ["big"]
        for asked in [["missing"] + present + ["also missing", "a"], (0..<290).map { "missing-\($0)" } + present + present] {
            let full = try await fixture.cards.resources(collectionID: fixture.book.id, names: asked)
            #expect(full.map(\.info.name) == present.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            for limit in [0, 1000, big.count - 1, big.count, .max] {
                let read = try await fixture.cards.resources(collectionID: fixture.book.id, names: asked, bodyLimit: limit)
                #expect(read.map(\.info) == full.map(\.info), "\(asked.count) names, limit \(limit)")
                for (card, whole) in zip(read, full) {
                    let leftOut = whole.data.count > limit
                    #expect(card.bodyLeftOut == leftOut && card.data == (leftOut ? Data() : whole.data),
                            "\(card.info.name), \(asked.count) names, limit \(limit)")
                }
            }
        }
    }

    /// A multiget's first page counts the book with its cards (PostgreSQL: in the same
    /// statement): the cards are the named read's, whatever its form (few names, many, a row
    /// per card for a big limit), and the count `resourceCount`'s for the same cap; only this
    /// book's cards count, and no names still counts.
    @Test(arguments: StoreBackend.cardBackends)
    func aNamedReadCountingTheBookGivesTheNamedReadsCardsAndTheBoundedCount(_ backend: StoreBackend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { fixture.close() }
        let book = fixture.book.id
        let other = try await fixture.cards.createCollection(owner: "alice", path: ["other"], kind: .addressBook,
                                                             displayName: nil, description: nil)
        _ = try await fixture.cards.putResource(collectionID: other.id, name: "a", data: Data("BEGIN:VCARD\r\nEND:VCARD\r\n".utf8),
                                                contentType: "text/vcard", card: nil, precondition: .none)
        let few = ["missing", "a", "日本", "e\u{301}", "a"]
        let many = (0..<290).map { "missing-\($0)" } + Self.names
        for asked in [few, many, ["missing"], []] {
            for limit in [0, 1000, .max] {
                let cards = try await fixture.cards.resources(collectionID: book, names: asked, bodyLimit: limit)
                for cap in [0, 1, 4, Self.names.count, Self.names.count + 1, .max] {
                    let counted = try await fixture.cards.resources(collectionID: book, names: asked, bodyLimit: limit,
                                                                    countingBookUpTo: cap)
                    let context = "\(asked.count) names, limit \(limit), cap \(cap)"
                    #expect(counted.cards.map(\.info) == cards.map(\.info), "\(context)")
                    #expect(counted.cards.map(\.data) == cards.map(\.data) && counted.cards.map(\.bodyLeftOut) == cards.map(\.bodyLeftOut),
                            "\(context)")
                    #expect(counted.bookCards == min(Self.names.count, cap), "\(context)")
                }
            }
        }
        #expect(try await fixture.cards.resources(collectionID: book, names: few, bodyLimit: 1000, countingBookUpTo: 3)
            .cards.map(\.info.name) == ["a", "e\u{301}", "日本"])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func infosByNameAreTheResourcesWithoutBodies(_ backend: StoreBackend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { fixture.close() }
        let asked = ["é", "missing", "a%b", "日本"]
        let infos = try await fixture.cards.resourceInfos(collectionID: fixture.book.id, names: asked)
        let resources = try await fixture.cards.resources(collectionID: fixture.book.id, names: asked)
        #expect(Set(infos) == Set(resources.map(\.info)))
        #expect(Set(infos.map(\.name)) == ["é", "a%b", "日本"])
        #expect(try await fixture.cards.resourceInfos(collectionID: fixture.book.id, names: []).isEmpty)
    }

    /// A long list of names (PostgreSQL then scans rather than probes each: `probedNames`)
    /// finds the same as a short one: each present name once, in byte order.
    @Test(arguments: StoreBackend.cardBackends)
    func aLongListOfNamesFindsEachPresentNameOnce(_ backend: StoreBackend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { fixture.close() }
        let asked = (0..<290).map { "missing-\($0)" } + Self.names + Self.names
        let infos = try await fixture.cards.resourceInfos(collectionID: fixture.book.id, names: asked)
        let resources = try await fixture.cards.resources(collectionID: fixture.book.id, names: asked)
        let inByteOrder = Self.names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(infos.map(\.name) == inByteOrder)
        #expect(resources.map(\.info.name) == inByteOrder)
    }

    /// Named reads share statements padded to a power of two: a read of fewer names after
    /// one of more (8 then 5 share the statement for 8) must not find the names the earlier
    /// one left bound.
    @Test(arguments: StoreBackend.cardBackends)
    func aSmallerNamedReadFindsOnlyItsOwnNames(_ backend: StoreBackend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { fixture.close() }
        let eight = Array(Self.names.prefix(8))
        for asked in [["b", "missing", "a", "0", "also missing"], ["missing", "nope", "none", "no", "never"]] {
            #expect(try await fixture.cards.resources(collectionID: fixture.book.id, names: eight).count == 8)
            #expect(try await fixture.cards.resourceInfos(collectionID: fixture.book.id, names: eight).count == 8)
            let found = try await fixture.cards.resources(collectionID: fixture.book.id, names: asked)
            let infos = try await fixture.cards.resourceInfos(collectionID: fixture.book.id, names: asked)
            let present = Set(asked).intersection(Self.names)
            #expect(Set(found.map(\.info.name)) == present, "\(asked)")
            #expect(Set(infos.map(\.name)) == present, "\(asked)")
        }
    }

    /// The listing statements read the covering index alone: no table lookup per row (the
    /// reason for `resources_listing`), and the bodies joined by the rowid it carries.
    @Test func listingsAndNamedLookupsReadTheCoveringIndexWithoutTheTable() async throws {
        let fixture = try await Self.fixture(.sqlite)
        defer { fixture.close() }
        let page: StatementArguments = [1, "a", 10]
        let named: StatementArguments = [1, "a", "b", "c"]
        let statements = [
            (SQLiteStore.pageSQL(columns: SQLiteStore.infoColumns, from: "resources"), page),
            (SQLiteStore.pageSQL(columns: "\(SQLiteStore.infoColumns), data", from: SQLiteStore.withBodies), page),
            (SQLiteStore.namedSQL(columns: SQLiteStore.infoColumns, from: "resources", count: 3), named),
            (SQLiteStore.namedSQL(columns: "\(SQLiteStore.infoColumns), data", from: SQLiteStore.withBodies, count: 3), named),
        ]
        for (sql, arguments) in statements {
            let plan = try await fixture.sqlite.pool.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
            }
            let resources = plan.filter { $0.contains(" resources ") || $0.hasSuffix(" resources") }
            #expect(resources.count == 1 && resources[0].contains("USING COVERING INDEX resources_listing"), "\(sql): \(plan)")
            #expect(plan.allSatisfy { !$0.hasPrefix("SCAN") && !$0.contains("TEMP B-TREE") }, "\(sql): \(plan)")
        }
    }
}
