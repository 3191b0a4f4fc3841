import Foundation
import Testing
@testable import RoloSQLite
@testable import RoloStore

/// The index stores a fold only where it differs from another (v2 schema) and answers ASCII
/// queries in two halves; this checks it against the collations' definitions, evaluated
/// directly, on values and query texts mixed from the characters where folds disagree.
@Suite(.closesStores) struct QueryAgreementTests {
    /// Letters whose ASCII and Unicode folds differ, decomposed and precomposed forms,
    /// final sigma, characters that NFKD expands, and LIKE wildcards.
    static let alphabet = ["a", "A", "z", "Z", "é", "É", "e\u{301}", "E\u{301}", "ß", "Σ", "σ", "ς", "İ", "ﬁ", "Ⅻ",
                           " ", "%", "_", "1"]

    /// 0 to 3 values of 0 to 4 characters for card `card`, spread over the alphabet.
    static func values(ofCard card: Int) -> [String] {
        (0..<card % 4).map { value in
            (0..<(card + value) % 5).map { position in
                alphabet[(card * 7 + value * 3 + position * 5 + card * position) % alphabet.count]
            }.joined()
        }
    }

    /// The empty text, every character, and a third of the pairs.
    static let texts: [String] = [""] + alphabet + alphabet.indices.flatMap { first in
        alphabet.indices.filter { (first * 5 + $0) % 3 == 0 }.map { alphabet[first] + alphabet[$0] }
    }

    /// The collation's test as its definition states it, on Unicode scalars (what SQLite
    /// compares once both sides are UTF-8).
    static func matches(_ value: String, _ text: String, _ collation: IndexPredicate.Collation, _ match: IndexPredicate.MatchType) -> Bool {
        let fold: (String) -> String = switch collation {
        case .asciiCasemap: CaseFolding.ascii
        case .unicodeCasemap: CaseFolding.unicode
        case .octet: { $0 }
        }
        let value = Array(fold(value).unicodeScalars), text = Array(fold(text).unicodeScalars)
        switch match {
        case .equals: return value == text
        case .startsWith: return value.starts(with: text)
        case .endsWith: return value.reversed().starts(with: text.reversed())
        case .contains:
            guard value.count >= text.count else { return false }
            return (0...(value.count - text.count)).contains { Array(value[$0..<$0 + text.count]) == text }
        }
    }

    /// Where the cards' index entries are when the queries run: all still pending (as
    /// right after PUTs), all merged into the value indexes, or half in each. SQLite's
    /// distinction; PostgreSQL writes every entry into its value indexes with its card, and
    /// the in-memory double tests each card's entries as they are.
    enum Entries: CaseIterable { case pending, merged, mixed }

    static let cases: [(StoreBackend, Entries)] = Entries.allCases.map { (.sqlite, $0) } + [(.postgres, .merged), (.memory, .merged)]

    @Test(arguments: cases)
    func everyCollationAndMatchTypeAgreesWithItsDefinition(_ backend: StoreBackend, entries: Entries) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        var nicknames: [String: [String]] = [:]
        for card in 0..<60 {
            nicknames["c\(card).vcf"] = Self.values(ofCard: card)
            try await fixture.put("c\(card).vcf", extra: Self.values(ofCard: card).map { IndexEntry(property: "NICKNAME", value: $0) })
            if entries == .mixed && card == 29 { try await fixture.mergePendingIndex() }
        }
        if entries == .merged { try await fixture.mergePendingIndex() }
        if let sqlite = fixture.sqliteStore {
            let pending = try await sqlite.pendingIndexEntryCount()
            switch entries {
            case .pending: #expect(pending > 100)
            case .merged: #expect(pending == 0)
            case .mixed: #expect(pending > 50 && pending < 150)
            }
        }
        var checked = 0
        for text in Self.texts {
            for collation in [IndexPredicate.Collation.asciiCasemap, .unicodeCasemap, .octet] {
                for match in [IndexPredicate.MatchType.equals, .contains, .startsWith, .endsWith] {
                    for negate in [false, true] {
                        let predicate = IndexPredicate.textMatch(property: "NICKNAME", text: text, collation: collation,
                                                                 match: match, negate: negate)
                        let found = try await fixture.cards.query(collectionID: fixture.book.id, predicate: predicate, limit: nil)
                        let expected = nicknames.filter { _, values in
                            values.contains { Self.matches($0, text, collation, match) != negate }
                        }.keys.sorted()
                        #expect(found == expected, "\(predicate)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == Self.texts.count * 24 && checked > 3000)
    }
}
