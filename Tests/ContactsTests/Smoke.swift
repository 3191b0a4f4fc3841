import Testing
@testable import Contacts

@Test func moduleLinks() { #expect(Bool(true)) }
