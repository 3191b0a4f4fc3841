import Testing
@testable import RoloServer

/// Pieces of the responder that need no server.
@Suite struct ResponderUnitTests {
    @Test func accessLogDurationIsMillisecondsRoundedToOneDecimal() {
        #expect(RoloResponder.millisecondsText(.zero) == "0.0")
        #expect(RoloResponder.millisecondsText(.microseconds(40)) == "0.0")
        #expect(RoloResponder.millisecondsText(.microseconds(50)) == "0.1")
        #expect(RoloResponder.millisecondsText(.microseconds(12_345)) == "12.3")
        #expect(RoloResponder.millisecondsText(.microseconds(12_360)) == "12.4")
        #expect(RoloResponder.millisecondsText(.seconds(2) + .microseconds(999_960)) == "3000.0")
    }
}
