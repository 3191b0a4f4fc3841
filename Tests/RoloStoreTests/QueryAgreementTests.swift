import Foundation
import Testing
@testable import RoloStore

/// The index stores a fold only where it differs from another (v2 schema) and answers ASCII
/// queries in two halves; this checks it against the collations' definitions, evaluated
/// directly on random values made of the characters where folds disagree.
@Suite struct QueryAgreementTests {
    /// Letters whose ASCII and Unicode folds differ, decomposed and precomposed forms,
    /// final sigma, characters that NFKD expands, and LIKE wildcards.
    static let alphabet = ["a", "A", "z", "Z", "é", "É", "e\u{301}", "E\u{301}", "ß", "Σ", "σ", "ς", "İ", "ﬁ", "Ⅻ",
                           " ", "%", "_", "1"]

    /// SplitMix64: the same random cards and queries on every run.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func randomText(_ random: inout SeededGenerator, maximumLength: Int) -> String {
        (0..<Int.random(in: 0...maximumLength, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
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

    @Test func everyCollationAndMatchTypeAgreesWithItsDefinition() async throws {
        var random = SeededGenerator(state: 6352)
        let fixture = try await StoreFixture.make()
        defer { fixture.close() }
        var nicknames: [String: [String]] = [:]
        for index in 0..<60 {
            let values = (0..<Int.random(in: 0...3, using: &random)).map { _ in Self.randomText(&random, maximumLength: 4) }
            nicknames["c\(index).vcf"] = values
            try await fixture.put("c\(index).vcf", extra: values.map { IndexEntry(property: "NICKNAME", value: $0) })
        }
        var checked = 0
        for _ in 0..<150 {
            let text = Self.randomText(&random, maximumLength: 2)
            for collation in [IndexPredicate.Collation.asciiCasemap, .unicodeCasemap, .octet] {
                for match in [IndexPredicate.MatchType.equals, .contains, .startsWith, .endsWith] {
                    for negate in [false, true] {
                        let predicate = IndexPredicate.textMatch(property: "NICKNAME", text: text, collation: collation,
                                                                 match: match, negate: negate)
                        let found = try await fixture.store.query(collectionID: fixture.book.id, predicate: predicate, limit: nil)
                        let expected = nicknames.filter { _, values in
                            values.contains { Self.matches($0, text, collation, match) != negate }
                        }.keys.sorted()
                        #expect(found == expected, "\(predicate)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 3600)
    }
}
