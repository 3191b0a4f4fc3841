import Testing
import VCard
@testable import DAV

@Suite struct FilterMatchingTests {
    // RFC 6352 §8.6.4: NICKNAME equals "me".
    @Test func rfcExampleNicknameEquals() throws {
        let nickname = try filter("""
            <C:filter><C:prop-filter name="NICKNAME">
              <C:text-match collation="i;unicode-casemap" match-type="equals">me</C:text-match>
            </C:prop-filter></C:filter>
            """)
        #expect(nickname.matches(cyrus))
        #expect(!nickname.matches(eric))
    }

    // RFC 6352 §8.6.5: FN or EMAIL contains "daboo".
    @Test func rfcExampleFullNameOrEmailContains() throws {
        let either = try filter("""
            <C:filter test="anyof">
              <C:prop-filter name="FN"><C:text-match collation="i;unicode-casemap" match-type="contains">daboo</C:text-match></C:prop-filter>
              <C:prop-filter name="EMAIL"><C:text-match collation="i;unicode-casemap" match-type="contains">daboo</C:text-match></C:prop-filter>
            </C:filter>
            """)
        #expect(either.matches(cyrus))
        #expect(!either.matches(eric))
        #expect(matches(either, card: cyrus))
    }

    @Test func emptyFilterMatchesEveryCard() {
        #expect(AddressbookFilter().matches(cyrus))
        #expect(AddressbookFilter(test: .allOf).matches(eric))
    }

    @Test func filterTestCombinesPropFilters() {
        let fn = PropFilter(name: "FN", textMatches: [TextMatch("cyrus")])
        let org = PropFilter(name: "ORG")
        #expect(AddressbookFilter(test: .allOf, propFilters: [fn, org]).matches(cyrus))
        #expect(!AddressbookFilter(test: .allOf, propFilters: [PropFilter(name: "FN", textMatches: [TextMatch("eric")]), org]).matches(eric))
        #expect(AddressbookFilter(test: .anyOf, propFilters: [PropFilter(name: "FN", textMatches: [TextMatch("eric")]), org]).matches(eric))
    }

    @Test func definedAndNotDefined() {
        #expect(PropFilter(name: "ORG").matches(cyrus))
        #expect(!PropFilter(name: "ORG").matches(eric))
        #expect(PropFilter(name: "ORG", isNotDefined: true).matches(eric))
        #expect(!PropFilter(name: "org", isNotDefined: true).matches(cyrus))
        // is-not-defined wins over other tests.
        #expect(PropFilter(name: "ORG", isNotDefined: true, textMatches: [TextMatch("nothing")]).matches(eric))
    }

    @Test func groupPrefixIsNotPartOfTheName() {
        let work = PropFilter(name: "EMAIL", textMatches: [TextMatch("cyrus@", matchType: .startsWith)])
        #expect(work.matches(cyrus))
        #expect(!PropFilter(name: "ITEM1.EMAIL").matches(cyrus))
    }

    @Test func everyMatchType() {
        func fn(_ text: String, _ type: TextMatch.MatchType) -> Bool {
            PropFilter(name: "FN", textMatches: [TextMatch(text, matchType: type)]).matches(cyrus)
        }
        #expect(fn("cyrus daboo", .equals) && !fn("cyrus", .equals))
        #expect(fn("rus da", .contains) && !fn("xyz", .contains))
        #expect(fn("cyr", .startsWith) && !fn("dab", .startsWith))
        #expect(fn("BOO", .endsWith) && !fn("cyrus", .endsWith))
        #expect(fn("", .contains) && fn("", .startsWith) && fn("", .endsWith) && !fn("", .equals))
        #expect(!fn("a much longer text than the value", .endsWith))
    }

    @Test func negateConditionInvertsEachValue() {
        let notExample = PropFilter(name: "EMAIL", textMatches: [TextMatch("example.com", negate: true)])
        // Cyrus has one address outside example.com, Eric has none.
        #expect(notExample.matches(cyrus))
        #expect(!notExample.matches(eric))
        // A card without the property does not match a negated text-match either.
        #expect(!PropFilter(name: "NOTE", textMatches: [TextMatch("x", negate: true)]).matches(cyrus))
    }

    @Test func collationsFoldAsDocumented() {
        func fn(_ text: String, _ collation: TextMatch.Collation, _ card: VCard = cyrus) -> Bool {
            PropFilter(name: "FN", textMatches: [TextMatch(text, collation: collation, matchType: .contains)]).matches(card)
        }
        #expect(fn("Cyrus", .octet) && !fn("cyrus", .octet))
        #expect(fn("CYRUS", .asciiCasemap) && fn("cyrus", .unicodeCasemap))
        // ASCII casemap leaves non-ASCII letters alone; Unicode casemap folds them.
        #expect(!fn("élodie", .asciiCasemap, elodie) && fn("ÉLODIE", .asciiCasemap, elodie))
        #expect(fn("élodie", .unicodeCasemap, elodie))
        #expect(fn("STRAßE", .unicodeCasemap, elodie))
        // Like the store's index (CaseFolding.unicode: lower-casing + NFKD), ß is not expanded to ss.
        #expect(!fn("STRASSE", .unicodeCasemap, elodie))
        // Decomposed input (e + combining acute) matches the precomposed value.
        #expect(fn("e\u{301}lodie", .unicodeCasemap, elodie))
    }

    @Test func paramFilterDefinedNotDefinedAndTextMatch() {
        func email(_ param: ParamFilter) -> PropFilter { PropFilter(name: "EMAIL", paramFilters: [param]) }
        #expect(email(ParamFilter(name: "TYPE")).matches(cyrus))
        #expect(!email(ParamFilter(name: "TYPE")).matches(eric))
        #expect(email(ParamFilter(name: "TYPE", isNotDefined: true)).matches(eric))
        #expect(email(ParamFilter(name: "type", textMatch: TextMatch("work", matchType: .equals))).matches(cyrus))
        #expect(!email(ParamFilter(name: "TYPE", textMatch: TextMatch("pager", matchType: .equals))).matches(cyrus))
    }

    @Test func propFilterTestsApplyToOneAndTheSameProperty() {
        // "An EMAIL of TYPE=HOME containing example.com": Cyrus has a HOME address and an
        // example.com address, but not one address that is both.
        let homeAtExample = PropFilter(name: "EMAIL", test: .allOf, textMatches: [TextMatch("example.com")],
                                       paramFilters: [ParamFilter(name: "TYPE", textMatch: TextMatch("home", matchType: .equals))])
        #expect(!homeAtExample.matches(cyrus))
        let homeAtOrg = PropFilter(name: "EMAIL", test: .allOf, textMatches: [TextMatch(".org", matchType: .endsWith)],
                                   paramFilters: [ParamFilter(name: "TYPE", textMatch: TextMatch("home", matchType: .equals))])
        #expect(homeAtOrg.matches(cyrus))
        var either = homeAtExample
        either.test = .anyOf
        #expect(either.matches(cyrus))
    }

    @Test func structuredValuesMatchTheWholeValue() {
        #expect(PropFilter(name: "N", textMatches: [TextMatch("Daboo;Cyrus", matchType: .startsWith)]).matches(cyrus))
    }

    @Test(.enabled(if: VCardProperty(name: "ORG", rawValue: #"A\, B"#).text == "A, B", "needs VCard unescaping"))
    func textMatchSeesUnescapedValues() {
        let org = card([("ORG", [:], #"Smith\, Jones \; Partners;Sales"#)])
        #expect(PropFilter(name: "ORG", textMatches: [TextMatch("Smith, Jones ; Partners;Sales", matchType: .equals)]).matches(org))
    }
}
