import Foundation
import Testing
@testable import RoloTestControl

/// The test-control pieces that need no server: path patterns, the request-log ring.
@Suite struct TestControlUnitTests {
    @Test func singleStarMatchesWithinOneSegment() throws {
        let pattern = try #require(PathPattern("/dav/addressbooks/alice/default/*.vcf"))
        #expect(pattern.matches("/dav/addressbooks/alice/default/ada.vcf"))
        #expect(pattern.matches("/dav/addressbooks/alice/default/.vcf"))
        #expect(!pattern.matches("/dav/addressbooks/alice/default/sub/ada.vcf"))
        #expect(!pattern.matches("/dav/addressbooks/alice/default/ada.vcf.bak"))
        #expect(!pattern.matches("/dav/addressbooks/alice/default/"))
    }

    @Test func doubleStarMatchesAcrossSegmentsAsAPrefix() throws {
        let pattern = try #require(PathPattern("/dav/addressbooks/alice/**"))
        #expect(pattern.matches("/dav/addressbooks/alice/"))
        #expect(pattern.matches("/dav/addressbooks/alice/default/ada.vcf"))
        #expect(!pattern.matches("/dav/addressbooks/alice"))
        #expect(!pattern.matches("/dav/addressbooks/alicia/default/"))
        #expect(try #require(PathPattern("/**/ada.vcf")).matches("/dav/addressbooks/alice/default/ada.vcf"))
    }

    @Test func patternWithoutStarsMatchesExactlyAndCaseSensitively() throws {
        let pattern = try #require(PathPattern("/dav/addressbooks/alice/default/"))
        #expect(pattern.matches("/dav/addressbooks/alice/default/"))
        #expect(!pattern.matches("/dav/addressbooks/alice/default"))
        #expect(!pattern.matches("/DAV/addressbooks/alice/default/"))
        #expect(PathPattern("dav/*") == nil)
    }

    @Test func rootDoubleStarMatchesEveryPath() throws {
        let pattern = try #require(PathPattern("/**"))
        for path in ["/", "/health", "/dav/addressbooks/alice/default/a.vcf"] { #expect(pattern.matches(path)) }
        let star = try #require(PathPattern("/h*"))
        #expect(star.matches("/h") && star.matches("/health"))
        #expect(!star.matches("/") && !star.matches("/h/x"))
    }

    @Test func manyStarsStayLinear() throws {
        let pattern = try #require(PathPattern("/" + String(repeating: "*a", count: 200) + "b"))
        #expect(!pattern.matches("/" + String(repeating: "a", count: 5000)))
    }

    static func entry(_ seq: Int) -> RecordedRequest {
        RecordedRequest(seq: seq, method: "GET", path: "/", headers: [:], status: 200, durationMilliseconds: 0)
    }

    @Test func requestLogKeepsTheNewestAndSaysWhenAListingIsIncomplete() {
        var log = RequestLog(capacity: 3)
        for seq in 1...5 { log.append(Self.entry(seq)) }
        let all = log.entries(after: 0)
        #expect(all.entries.map(\.seq) == [3, 4, 5])
        #expect(!all.complete)
        let recent = log.entries(after: 2)
        #expect(recent.entries.map(\.seq) == [3, 4, 5])
        #expect(recent.complete)
        log.removeAll()
        #expect(log.entries(after: 0).entries.isEmpty)
    }

    @Test func onlyOneResetOrFixtureLoadRunsAtATime() async {
        let state = TestControlState(logCapacity: 10)
        #expect(await state.beginStoreChange())
        #expect(await state.beginStoreChange() == false)
        await state.endStoreChange()
        #expect(await state.beginStoreChange())
    }
}
