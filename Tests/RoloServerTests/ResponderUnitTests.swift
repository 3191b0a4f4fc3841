import DAV
import Foundation
import HTTPTypes
import Testing
@testable import RoloServer

/// Pieces of the responder that need no server.
@Suite struct ResponderUnitTests {
    @Test func accessLogDurationIsMillisecondsRoundedToOneDecimal() {
        #expect(AccessLog.millisecondsText(.zero) == "0.0")
        #expect(AccessLog.millisecondsText(.microseconds(40)) == "0.0")
        #expect(AccessLog.millisecondsText(.microseconds(50)) == "0.1")
        #expect(AccessLog.millisecondsText(.microseconds(12_345)) == "12.3")
        #expect(AccessLog.millisecondsText(.microseconds(12_360)) == "12.4")
        #expect(AccessLog.millisecondsText(.seconds(2) + .microseconds(999_960)) == "3000.0")
    }

    @Test func everyHeaderTheEngineSetsReachesTheAnswerUnderItsName() {
        let dav = DAVResponse(status: 200, headers: [
            ("ETag", "\"abc\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Content-Type", "text/vcard"),
            ("Content-Length", "4"), ("DAV", "1, 2, 3, addressbook"), ("X-Custom", "yes"),
        ], body: Data("BODY".utf8))
        let response = RoloResponder.response(from: dav, forHead: false)
        #expect(response.headers[.eTag] == "\"abc\"")
        #expect(response.headers[.lastModified] == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(response.headers[.contentType] == "text/vcard")
        #expect(response.headers[.contentLength] == "4")
        #expect(response.headers[HTTPField.Name("dav")!] == "1, 2, 3, addressbook")
        #expect(response.headers[HTTPField.Name("x-custom")!] == "yes")
        #expect(response.headers.count == 6)
    }
}
