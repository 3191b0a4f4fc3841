import CardIndexing
import Foundation
import Testing
@testable import RoloSQLite
@testable import RoloStore
import VCard
@testable import DAV

/// The index (SQLite) and the scanner (`matches`) must give the same answer for every
/// filter the index is allowed to answer.
@Suite struct FilterIndexAgreementTests {
    static let cards: [String: VCard] = [
        "cyrus.vcf": fixtureCyrus, "eric.vcf": fixtureEric, "elodie.vcf": fixtureElodie,
        "bare.vcf": filterCard([("VERSION", [:], "3.0"), ("FN", [:], "X"), ("UID", [:], "bare")]),
        "many.vcf": filterCard([("VERSION", [:], "3.0"), ("FN", [:], "Émile Zola"), ("UID", [:], "many"),
                          ("EMAIL", [:], "EMILE@Example.COM"), ("EMAIL", [:], "zola@other.net"), ("NICKNAME", [:], "Me")]),
    ]
    static let indexed: Set<String> = ["VERSION", "FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "UID"]

    static let filters: [AddressbookFilter] = {
        var filters: [AddressbookFilter] = [AddressbookFilter()]
        // One and two characters (scanned), three and more (the trigram index once merged).
        let texts = ["", "e", "E", "é", "@", "example.com", "émile", "ÉMILE", "me", "x", "ol", "ÉL", "zola@other.net", "Cyrus Daboo",
                     "DIE", "aße", "STRASSE", "ola", ".COM", "yrus D"]
        for collation in [TextMatch.Collation.octet, .asciiCasemap, .unicodeCasemap] {
            for type in [TextMatch.MatchType.equals, .contains, .startsWith, .endsWith] {
                for negate in [false, true] {
                    for property in ["FN", "EMAIL", "NICKNAME"] {
                        for text in texts {
                            filters.append(AddressbookFilter(propFilters: [
                                PropFilter(name: property, textMatches: [TextMatch(text, collation: collation, matchType: type, negate: negate)]),
                            ]))
                        }
                    }
                }
            }
        }
        filters.append(AddressbookFilter(test: .allOf, propFilters: [PropFilter(name: "EMAIL"), PropFilter(name: "ORG", isNotDefined: true)]))
        filters.append(AddressbookFilter(test: .anyOf, propFilters: [PropFilter(name: "TEL"), PropFilter(name: "NICKNAME", textMatches: [TextMatch("me", matchType: .equals)])]))
        return filters
    }()

    /// With every entry still pending (scanned), and after the merge (value indexes, and
    /// substrings through the trigram index or, as a small book in a big database does, by
    /// scanning the book's rows: `SubstringIndexChoice`).
    @Test(arguments: [false, true], [false, true])
    func indexAndScanAgree(merged: Bool, trigramIndex: Bool) async throws {
        let store = try SQLiteStore.temporary(tuning: SQLiteStore.Tuning(substringIndexMinimumCards: trigramIndex ? 0 : SubstringIndexChoice.defaultMinimumBookCards))
        defer { try? store.close() }
        try await store.createUser(name: "alice", password: "secret")
        let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
        for (name, card) in Self.cards {
            let entries = card.properties.filter { Self.indexed.contains($0.name) }.map { IndexEntry(property: $0.name, value: $0.text) }
            let metadata = CardMetadata(uid: card.first("UID")!.text, kind: "person", indexEntries: entries, members: [])
            _ = try await store.putResource(collectionID: book.id, name: name, data: Data(name.utf8), contentType: "text/vcard",
                                            card: metadata, precondition: .none)
        }
        if merged { try await store.mergePendingIndex() }
        #expect(try await store.pendingIndexEntryCount() == 0 || !merged)
        for filter in Self.filters {
            let predicate = try #require(filter.indexPredicate(indexedProperties: Self.indexed))
            let fromIndex = try await store.query(collectionID: book.id, predicate: predicate, limit: nil).sorted()
            let fromScan = Self.cards.filter { filter.matches($0.value) }.keys.sorted()
            #expect(fromIndex == fromScan, "\(filter)")
        }
    }
}
