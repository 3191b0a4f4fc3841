import Testing
@testable import RoloServer

@Test func moduleLinks() { #expect(Bool(true)) }
