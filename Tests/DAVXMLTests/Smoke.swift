import Testing
@testable import DAVXML

@Test func moduleLinks() { #expect(Bool(true)) }
