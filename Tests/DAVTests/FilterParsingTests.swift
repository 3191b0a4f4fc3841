import Testing
import DAVXML
import RoloStore
@testable import DAV

@Suite struct FilterParsingTests {
    @Test func readsEveryElementAndAttribute() throws {
        let parsed = try filter("""
            <C:filter test="allof">
              <C:prop-filter name="email" test="allof">
                <C:text-match collation="i;octet" match-type="ends-with" negate-condition="yes">.org</C:text-match>
                <C:param-filter name="type"><C:text-match match-type="equals">work</C:text-match></C:param-filter>
                <C:param-filter name="X-FOO"><C:is-not-defined/></C:param-filter>
              </C:prop-filter>
              <C:prop-filter name="NOTE"><C:is-not-defined/></C:prop-filter>
            </C:filter>
            """)
        #expect(parsed == AddressbookFilter(test: .allOf, propFilters: [
            PropFilter(name: "EMAIL", test: .allOf, textMatches: [TextMatch(".org", collation: .octet, matchType: .endsWith, negate: true)],
                       paramFilters: [ParamFilter(name: "TYPE", textMatch: TextMatch("work", matchType: .equals)),
                                      ParamFilter(name: "X-FOO", isNotDefined: true)]),
            PropFilter(name: "NOTE", isNotDefined: true),
        ]))
    }

    @Test func appliesRFCDefaults() throws {
        let parsed = try filter(#"<C:filter><C:prop-filter name="FN"><C:text-match>x</C:text-match></C:prop-filter></C:filter>"#)
        #expect(parsed.test == .anyOf)
        #expect(parsed.propFilters[0].test == .anyOf)
        let match = try #require(parsed.propFilters[0].textMatches.first)
        #expect(match.collation == .unicodeCasemap && match.matchType == .contains && !match.negate)
    }

    @Test func emptyFilterHasNoPropFilters() throws {
        #expect(try filter("<C:filter/>") == AddressbookFilter())
    }

    @Test func refusesUnknownCollationAsSupportedCollation() {
        #expect(throws: FilterError.unsupportedCollation("i;basic")) {
            try filter(#"<C:filter><C:prop-filter name="FN"><C:text-match collation="i;basic">x</C:text-match></C:prop-filter></C:filter>"#)
        }
        #expect(FilterError.unsupportedCollation("i;basic").precondition == "supported-collation")
    }

    @Test func refusesUnknownMatchTypeAsSupportedFilter() throws {
        let error = #expect(throws: FilterError.self) {
            try filter(#"<C:filter><C:prop-filter name="FN"><C:text-match match-type="regex">x</C:text-match></C:prop-filter></C:filter>"#)
        }
        #expect(error?.precondition == "supported-filter")
    }

    @Test func refusesUnknownTestValue() {
        #expect(throws: FilterError.self) { try filter(#"<C:filter test="oneof"/>"#) }
    }

    @Test func refusesPropFilterWithoutName() throws {
        let error = #expect(throws: FilterError.self) { try filter("<C:filter><C:prop-filter/></C:filter>") }
        #expect(error?.precondition == nil)
    }

    @Test func refusesBadNegateCondition() {
        #expect(throws: FilterError.self) {
            try filter(#"<C:filter><C:prop-filter name="FN"><C:text-match negate-condition="maybe">x</C:text-match></C:prop-filter></C:filter>"#)
        }
    }

    @Test func refusesAnElementThatIsNotAFilter() throws {
        let element = try XMLDocumentParser.parse(Array(#"<filter xmlns="DAV:"/>"#.utf8))
        #expect(throws: FilterError.self) { try AddressbookFilter(xml: element) }
    }
}
