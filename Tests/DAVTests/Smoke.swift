import Testing
@testable import DAV

@Test func moduleLinks() { #expect(Bool(true)) }
