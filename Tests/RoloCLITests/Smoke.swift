import Testing
@testable import rolo

@Test func moduleLinks() { #expect(Bool(true)) }
