import LDAPClient
import Testing

/// RFC 4515 escaping: each character that could change a filter's meaning is escaped,
/// everything else passes untouched.
@Suite struct LDAPFilterTests {
    @Test func escapesEachSpecialCharacterAsItsHexPair() {
        #expect(LDAPFilter.escape("*") == "\\2a")
        #expect(LDAPFilter.escape("(") == "\\28")
        #expect(LDAPFilter.escape(")") == "\\29")
        #expect(LDAPFilter.escape("\\") == "\\5c")
        #expect(LDAPFilter.escape("\0") == "\\00")
    }

    @Test func anInjectionAttemptBecomesOneLiteralValue() {
        #expect(LDAPFilter.escape("alice)(uid=*") == "alice\\29\\28uid=\\2a")
        #expect(LDAPFilter.escape("*)(|(objectClass=*") == "\\2a\\29\\28|\\28objectClass=\\2a")
        #expect(LDAPFilter.escape("a\\2a") == "a\\5c2a")
    }

    @Test func ordinaryNamesAddressesAndNonASCIIPassUnchanged() {
        for name in ["alice", "carol@example.org", "Zoë Ångström", "user.name-1_2", "", "日本"] {
            #expect(LDAPFilter.escape(name) == name)
        }
    }
}
