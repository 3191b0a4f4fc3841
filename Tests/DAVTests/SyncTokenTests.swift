import Testing
@testable import DAV

@Suite struct SyncTokenTests {
    @Test func roundTrips() {
        let token = SyncToken(collectionID: 42, seq: 1_234_567)
        #expect(token.description == "http://rolo.invalid/sync/42/1234567")
        #expect(SyncToken(token.description) == token)
        #expect(SyncToken(token.description, collectionID: 42) == token)
        #expect(SyncToken("http://rolo.invalid/sync/7/0")?.seq == 0)
    }

    @Test func rejectsATokenOfAnotherCollection() {
        #expect(SyncToken("http://rolo.invalid/sync/42/10", collectionID: 43) == nil)
    }

    @Test(arguments: [
        "", "http://rolo.invalid/sync/", "http://rolo.invalid/sync/42", "http://rolo.invalid/sync/42/",
        "http://rolo.invalid/sync//5", "http://rolo.invalid/sync/42/5/6", "http://rolo.invalid/sync/42/-5",
        "http://rolo.invalid/sync/-1/5", "http://rolo.invalid/sync/42/+5", "http://rolo.invalid/sync/42/05",
        "http://rolo.invalid/sync/42/ 5", "http://rolo.invalid/sync/42/5x", "http://rolo.invalid/sync/42/99999999999999999999",
        "https://rolo.invalid/sync/42/5", "http://example.com/sync/42/5", "data:,42/5", "HTTP://ROLO.INVALID/SYNC/42/5",
        "http://rolo.invalid/sync/42/٥",
    ])
    func rejectsMalformedTokens(_ token: String) {
        #expect(SyncToken(token) == nil)
    }
}
