import Foundation
import RoloStore
import Testing
@testable import RoloWeb

/// `/web/feeds` (issue 33): feeds listed, added over the books the user can read (shared ones
/// included, others neither offered nor taken), shown once with a webcal link and a QR code,
/// and revoked.
@Suite struct FeedsPageTests {
    @Test func aBirthdayFeedIsShownOnceWithAWebcalLinkAndAQRCodeThenListedAndRevoked() async throws {
        let web = try await WebHarness(configuration: WebConfiguration(publicURL: URL(string: "https://example.org/carddav/")))
        try await web.signIn()
        let empty = await web.get("/web/feeds")
        #expect(empty.status == 200 && empty.text.contains("data-testid=\"no-feeds\""))
        let created = await web.post("/web/feeds", [("kind", "birthdays"), ("books", "all")])
        #expect(created.status == 201)
        let match = try #require(created.text.firstMatch(of: /value="(https:\/\/example\.org\/carddav\/feeds\/([A-Za-z0-9_-]{43}))"/))
        let secret = String(match.output.2)
        #expect(created.text.contains("href=\"webcal://example.org/carddav/feeds/\(secret)\""))
        #expect(created.text.contains("data-testid=\"feed-qr\"") && created.text.contains("alt=\"QR code: subscribes a phone"))
        let feeds = try #require(web.store as? any FeedStore)
        let feed = try #require(try await feeds.feed(secret: secret))
        #expect(feed.user == "alice" && feed.kind == .birthdays && feed.bookIDs.isEmpty)

        let list = await web.get("/web/feeds")
        #expect(list.text.components(separatedBy: "data-testid=\"feed-row\"").count == 2 && !list.text.contains(secret))
        #expect(await web.post("/web/feeds/revoke", [("id", String(feed.id))]).status == 303)
        #expect(try await feeds.feed(secret: secret) == nil)
        #expect(await web.post("/web/feeds/revoke", [("id", String(feed.id))]).status == 404)
    }

    @Test func onlyBooksTheUserCanReadAreOfferedAndTaken() async throws {
        let web = try await WebHarness()
        _ = try await web.store.shareBook(owner: "bob", book: "default", with: "alice", access: .readOnly, accepted: true)
        _ = try await web.store.createCollection(owner: "bob", path: ["private"], kind: .addressBook, displayName: "Private", description: nil)
        try await web.signIn()
        let page = await web.get("/web/feeds").text
        #expect(page.contains("value=\"default~bob\"") && page.contains("value=\"default\""))
        #expect(!page.contains("value=\"private"))
        let phoneBook = await web.post("/web/feeds", [("kind", "yealink"), ("books", "some"), ("book", "default~bob")])
        #expect(phoneBook.status == 201 && !phoneBook.text.contains("webcal:"))
        let refused = await web.post("/web/feeds", [("kind", "snom"), ("books", "some"), ("book", "private~bob")])
        #expect(refused.status == 400 && refused.text.contains("data-testid=\"feeds-error\""))
        #expect(await web.post("/web/feeds", [("kind", "calendar"), ("books", "all")]).status == 400)
        #expect(await web.post("/web/feeds", [("kind", "snom"), ("books", "some")]).status == 400)
        let feeds = try #require(web.store as? any FeedStore)
        #expect(try await feeds.feeds(user: "alice").map(\.kind) == [.yealink])
    }
}
