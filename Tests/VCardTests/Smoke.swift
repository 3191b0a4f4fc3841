import Testing
@testable import VCard

@Test func moduleLinks() { #expect(Bool(true)) }
