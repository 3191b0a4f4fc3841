import Foundation
import Testing
@testable import RoloStore

@Suite(.closesStores) struct QueryTests {
    /// élodie.vcf (FN "ÉLODIE Durand", EMAIL elodie@example.com), bob.vcf (FN "bob smith",
    /// NICKNAME "Bobby"), zoe.vcf (FN "Zoë 100%_done", no EMAIL).
    static func populated(_ backend: StoreBackend) async throws -> StoreFixture {
        let fixture = try await StoreFixture.make(backend)
        try await fixture.put("elodie.vcf", fn: "ÉLODIE Durand", extra: [IndexEntry(property: "EMAIL", value: "Elodie@Example.com")])
        try await fixture.put("bob.vcf", fn: "bob smith", extra: [IndexEntry(property: "NICKNAME", value: "Bobby"),
                                                                  IndexEntry(property: "EMAIL", value: "bob@work.example"),
                                                                  IndexEntry(property: "EMAIL", value: "bob@home.example")])
        try await fixture.put("zoe.vcf", fn: "Zoë 100%_done")
        return fixture
    }

    func names(_ fixture: StoreFixture, _ predicate: IndexPredicate, limit: Int? = nil) async throws -> [String] {
        try await fixture.cards.query(collectionID: fixture.book.id, predicate: predicate, limit: limit)
    }

    func fn(_ text: String, _ collation: IndexPredicate.Collation, _ match: IndexPredicate.MatchType,
            negate: Bool = false) -> IndexPredicate {
        .textMatch(property: "FN", text: text, collation: collation, match: match, negate: negate)
    }

    /// A query answered with its cards reads its hits, the book's count and its first page
    /// in one go (`queryHits`; PostgreSQL: one statement): the names are `query`'s, the
    /// count `resourceCount`'s up to one more than them (nil when not asked), the cards
    /// those of the first names as a named read gives them, with bodies (up to the limit) or
    /// without; for no hits, some and every card, with and without a limit.
    @Test(arguments: StoreBackend.cardBackends)
    func queryHitsAreQuerysNamesTheBoundedCountAndTheFirstPagesCards(_ backend: StoreBackend) async throws {
        let fixture = try await Self.populated(backend)
        defer { fixture.close() }
        let book = fixture.book.id
        let predicates: [IndexPredicate] = [fn("nobody", .unicodeCasemap, .contains), fn("o", .unicodeCasemap, .contains),
                                            fn("b", .asciiCasemap, .startsWith), .defined(property: "FN"),
                                            .textMatch(property: "EMAIL", text: "example", collation: .asciiCasemap,
                                                       match: .contains, negate: false)]
        let bodyLimit = try #require(try await fixture.cards.resource(collectionID: book, name: "bob.vcf")).data.count - 1
        for predicate in predicates {
            for limit in [nil, 1, 2] as [Int?] {
                let names = try await names(fixture, predicate, limit: limit)
                for (firstPage, withBodies, counting) in [(0, true, true), (1, true, false), (2, false, true), (10, true, true),
                                                          (10, false, false)] {
                    let context = "\(predicate) limit \(String(describing: limit)) page \(firstPage) bodies \(withBodies)"
                    let hits = try await fixture.cards.queryHits(collectionID: book, predicate: predicate, limit: limit,
                                                                 countingBook: counting, firstPage: firstPage,
                                                                 withBodies: withBodies, bodyLimit: bodyLimit)
                    #expect(hits.names == names, "\(context)")
                    #expect(hits.bookCards == (counting ? min(3, names.count + 1) : nil), "\(context)")
                    let first = Array(names.prefix(firstPage))
                    let expected = withBodies
                        ? try await fixture.cards.resources(collectionID: book, names: first, bodyLimit: bodyLimit)
                        : try await fixture.cards.resourceInfos(collectionID: book, names: first).map { StoredResource(info: $0, data: Data()) }
                    #expect(hits.firstCards == expected, "\(context)")
                    #expect(!withBodies || hits.firstCards.allSatisfy { $0.bodyLeftOut == ($0.info.size > bodyLimit) }, "\(context)")
                }
            }
        }
        let every = try await fixture.cards.queryHits(collectionID: book, predicate: .defined(property: "FN"), limit: nil,
                                                      countingBook: true, firstPage: 2, withBodies: true, bodyLimit: .max)
        #expect(every.names == ["bob.vcf", "elodie.vcf", "zoe.vcf"] && every.bookCards == 3)
        #expect(every.firstCards.map(\.info.name) == ["bob.vcf", "elodie.vcf"])
        #expect(every.firstCards.allSatisfy { String(decoding: $0.data, as: UTF8.self).contains("BEGIN:VCARD") && !$0.bodyLeftOut })
    }

    @Test(arguments: StoreBackend.cardBackends)
    func asciiCasemapFoldsOnlyASCIILetters(_ backend: StoreBackend) async throws {
        let fixture = try await Self.populated(backend)
        defer { fixture.close() }
        #expect(try await names(fixture, fn("élodie durand", .asciiCasemap, .equals)).isEmpty)
        #expect(try await names(fixture, fn("Élodie durand", .asciiCasemap, .equals)) == ["elodie.vcf"])
        #expect(try await names(fixture, fn("BOB", .asciiCasemap, .startsWith)) == ["bob.vcf"])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func unicodeCasemapFoldsEveryLetter(_ backend: StoreBackend) async throws {
        let fixture = try await Self.populated(backend)
        defer { fixture.close() }
        #expect(try await names(fixture, fn("élodie durand", .unicodeCasemap, .equals)) == ["elodie.vcf"])
        #expect(try await names(fixture, fn("élodie", .unicodeCasemap, .startsWith)) == ["elodie.vcf"])
        // Decomposed input (e + combining acute) folds to the same bytes as the precomposed one.
        #expect(try await names(fixture, fn("E\u{301}LODIE", .unicodeCasemap, .startsWith)) == ["elodie.vcf"])
        #expect(try await names(fixture, fn("ZOË", .unicodeCasemap, .contains)) == ["zoe.vcf"])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func octetComparesExactBytes(_ backend: StoreBackend) async throws {
        let fixture = try await Self.populated(backend)
        defer { fixture.close() }
        #expect(try await names(fixture, fn("bob smith", .octet, .equals)) == ["bob.vcf"])
        #expect(try await names(fixture, fn("Bob smith", .octet, .equals)).isEmpty)
        #expect(try await names(fixture, fn("Durand", .octet, .endsWith)) == ["elodie.vcf"])
        #expect(try await names(fixture, fn("durand", .octet, .endsWith)).isEmpty)
        #expect(try await names(fixture, fn("100%_", .octet, .contains)) == ["zoe.vcf"])
        #expect(try await names(fixture, fn("bob", .octet, .startsWith, negate: true)) == ["elodie.vcf", "zoe.vcf"])
        #expect(try await names(fixture, fn("Bob", .octet, .startsWith, negate: true)) == ["bob.vcf", "elodie.vcf", "zoe.vcf"])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func eachMatchTypeIncludingLikeWildcardsLiterally(_ backend: StoreBackend) async throws {
        let fixture = try await Self.populated(backend)
        defer { fixture.close() }
        #expect(try await names(fixture, fn("smi", .asciiCasemap, .contains)) == ["bob.vcf"])
        #expect(try await names(fixture, fn("DURAND", .unicodeCasemap, .endsWith)) == ["elodie.vcf"])
        #expect(try await names(fixture, fn("%_", .asciiCasemap, .contains)) == ["zoe.vcf"])
        #expect(try await names(fixture, fn("_", .asciiCasemap, .endsWith)).isEmpty)
        #expect(try await names(fixture, fn("", .asciiCasemap, .contains)) == ["bob.vcf", "elodie.vcf", "zoe.vcf"])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func negateMatchesCardsHavingSomeValueThatDoesNotMatch(_ backend: StoreBackend) async throws {
        let fixture = try await Self.populated(backend)
        defer { fixture.close() }
        #expect(try await names(fixture, fn("bob", .asciiCasemap, .contains, negate: true)) == ["elodie.vcf", "zoe.vcf"])
        // bob has two emails, one of which does not contain "work": it matches negated.
        let notWork = IndexPredicate.textMatch(property: "EMAIL", text: "work", collation: .asciiCasemap, match: .contains, negate: true)
        #expect(try await names(fixture, notWork) == ["bob.vcf", "elodie.vcf"])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func definedNotDefinedAllAnyAndLimit(_ backend: StoreBackend) async throws {
        let fixture = try await Self.populated(backend)
        defer { fixture.close() }
        #expect(try await names(fixture, .defined(property: "email")) == ["bob.vcf", "elodie.vcf"])
        #expect(try await names(fixture, .notDefined(property: "EMAIL")) == ["zoe.vcf"])
        #expect(try await names(fixture, .all([.defined(property: "EMAIL"), fn("bob", .asciiCasemap, .startsWith)])) == ["bob.vcf"])
        #expect(try await names(fixture, .any([fn("zoë", .unicodeCasemap, .startsWith), .defined(property: "NICKNAME")]))
                == ["bob.vcf", "zoe.vcf"])
        #expect(try await names(fixture, .any([])).isEmpty)
        #expect(try await names(fixture, .all([]), limit: 2) == ["bob.vcf", "elodie.vcf"])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func replacedCardsAreReindexed(_ backend: StoreBackend) async throws {
        let fixture = try await Self.populated(backend)
        defer { fixture.close() }
        try await fixture.put("bob.vcf", fn: "Robert")
        #expect(try await names(fixture, fn("bob", .asciiCasemap, .contains)).isEmpty)
        #expect(try await names(fixture, .defined(property: "NICKNAME")).isEmpty)
        #expect(try await names(fixture, fn("robert", .asciiCasemap, .equals)) == ["bob.vcf"])
    }

    /// "é" precomposed folds to itself under ASCII but to "e\u{301}" under Unicode: equal as
    /// Swift strings, different as bytes, so the ASCII fold must be kept apart.
    @Test(arguments: StoreBackend.cardBackends)
    func asciiCasemapKeepsNonASCIIBytesThatUnicodeFoldingChanges(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        try await fixture.put("precomposed.vcf", fn: "Caf\u{E9} Noir")
        try await fixture.put("decomposed.vcf", fn: "Cafe\u{301} Noir")
        #expect(try await names(fixture, fn("CAF\u{E9} NOIR", .asciiCasemap, .equals)) == ["precomposed.vcf"])
        #expect(try await names(fixture, fn("cafe\u{301} noir", .asciiCasemap, .equals)) == ["decomposed.vcf"])
        #expect(try await names(fixture, fn("f\u{E9} n", .asciiCasemap, .contains)) == ["precomposed.vcf"])
        #expect(try await names(fixture, fn("caf\u{E9}", .asciiCasemap, .startsWith)) == ["precomposed.vcf"])
        #expect(try await names(fixture, fn("caf\u{E9}", .asciiCasemap, .startsWith, negate: true)) == ["decomposed.vcf"])
        #expect(try await names(fixture, fn("Caf\u{E9}", .octet, .startsWith)) == ["precomposed.vcf"])
        #expect(try await names(fixture, fn("caf\u{E9}", .unicodeCasemap, .startsWith)) == ["decomposed.vcf", "precomposed.vcf"])
    }

    @Test func prefixUpperBoundIsTheNextStringAfterAllExtensions() {
        #expect(TextBounds.prefixUpperBound("ab") == "ac")
        #expect(TextBounds.prefixUpperBound("a\u{10FFFF}") == "b")
        #expect(TextBounds.prefixUpperBound("\u{D7FF}") == "\u{E000}")
        #expect(TextBounds.prefixUpperBound("\u{10FFFF}") == nil)
    }
}
