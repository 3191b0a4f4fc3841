import CardIndexing
import Testing
import RoloStore
@testable import DAV

private let indexed: Set<String> = ["FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "UID", "CATEGORIES"]

@Suite struct FilterIndexTests {
    @Test func translatesTextMatchesDefinedAndNotDefined() {
        let filter = AddressbookFilter(test: .allOf, propFilters: [
            PropFilter(name: "FN", textMatches: [TextMatch("Cy", collation: .asciiCasemap, matchType: .startsWith, negate: true)]),
            PropFilter(name: "ORG"),
            PropFilter(name: "TEL", isNotDefined: true),
        ])
        #expect(filter.indexPredicate(indexedProperties: indexed) == .all([
            .textMatch(property: "FN", text: "Cy", collation: .asciiCasemap, match: .startsWith, negate: true),
            .defined(property: "ORG"),
            .notDefined(property: "TEL"),
        ]))
    }

    @Test func anyofBecomesAny() {
        let filter = AddressbookFilter(propFilters: [
            PropFilter(name: "FN", textMatches: [TextMatch("a"), TextMatch("b", matchType: .equals)]),
            PropFilter(name: "EMAIL"),
        ])
        #expect(indexPredicate(for: filter, indexedProperties: indexed) == .any([
            .any([.textMatch(property: "FN", text: "a", collation: .unicodeCasemap, match: .contains, negate: false),
                  .textMatch(property: "FN", text: "b", collation: .unicodeCasemap, match: .equals, negate: false)]),
            .defined(property: "EMAIL"),
        ]))
    }

    @Test func singlePropFilterIsNotWrapped() {
        let filter = AddressbookFilter(propFilters: [PropFilter(name: "UID", textMatches: [TextMatch("x", matchType: .equals)])])
        #expect(filter.indexPredicate(indexedProperties: indexed)
                == .textMatch(property: "UID", text: "x", collation: .unicodeCasemap, match: .equals, negate: false))
    }

    @Test func emptyFilterSelectsEverything() {
        #expect(AddressbookFilter().indexPredicate(indexedProperties: indexed) == .all([]))
    }

    @Test func paramFiltersFallBackToScanning() {
        let filter = AddressbookFilter(propFilters: [
            PropFilter(name: "FN"),
            PropFilter(name: "EMAIL", paramFilters: [ParamFilter(name: "TYPE")]),
        ])
        #expect(filter.indexPredicate(indexedProperties: indexed) == nil)
    }

    @Test func unindexedPropertiesFallBackToScanning() {
        let filter = AddressbookFilter(propFilters: [PropFilter(name: "X-SOCIAL", isNotDefined: true)])
        #expect(filter.indexPredicate(indexedProperties: indexed) == nil)
    }

    @Test func allofWithSeveralTextMatchesFallsBackToScanning() {
        let filter = AddressbookFilter(propFilters: [
            PropFilter(name: "EMAIL", test: .allOf, textMatches: [TextMatch("a"), TextMatch("b")]),
        ])
        #expect(filter.indexPredicate(indexedProperties: indexed) == nil)
        let single = AddressbookFilter(propFilters: [PropFilter(name: "EMAIL", test: .allOf, textMatches: [TextMatch("a")])])
        #expect(single.indexPredicate(indexedProperties: indexed) != nil)
    }
}
