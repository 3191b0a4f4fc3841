import Testing
@testable import RoloStore

@Test func moduleLinks() { #expect(Bool(true)) }
