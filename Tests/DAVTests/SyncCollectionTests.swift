import Foundation
import DAV
import Testing

@Suite struct SyncCollectionTests {
    static func sync(token: String = "", limit: Int? = nil) -> String {
        "<D:sync-collection xmlns:D=\"DAV:\"><D:sync-token>\(token)</D:sync-token><D:sync-level>1</D:sync-level>"
            + (limit.map { "<D:limit><D:nresults>\($0)</D:nresults></D:limit>" } ?? "")
            + "<D:prop><D:getetag/></D:prop></D:sync-collection>"
    }

    static let book = "/dav/addressbooks/alice/default/"

    func token(_ response: DAVResponse) throws -> String {
        try #require(try response.xml().child("DAV:", "sync-token")?.text)
    }

    @Test func initialSyncListsEverythingThenIncrementalShowsChangesAndTombstones() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "a", fn: "A")
        await dav.putCard(uid: "b", fn: "B")
        let initial = await dav.send("REPORT", Self.book, headers: ["depth": "0"], body: Self.sync())
        #expect(initial.status == 207)
        #expect(Set(try initial.multistatus().keys) == [Self.book + "a.vcf", Self.book + "b.vcf"])
        let first = try token(initial)

        await dav.putCard(uid: "c", fn: "C")
        await dav.send("DELETE", Self.book + "a.vcf")
        let incremental = await dav.send("REPORT", Self.book, headers: ["depth": "0"], body: Self.sync(token: first))
        let views = try incremental.multistatus()
        #expect(Set(views.keys) == [Self.book + "a.vcf", Self.book + "c.vcf"])
        #expect(views[Self.book + "a.vcf"]?.status == 404)
        #expect(views[Self.book + "c.vcf"]?.status(of: "{DAV:}getetag") == 200)
        #expect(try token(incremental) != first)

        let again = await dav.send("REPORT", Self.book, body: Self.sync(token: try token(incremental)))
        #expect(try again.multistatus().isEmpty)
    }

    @Test func limitTruncatesWith507AndAContinuingToken() async throws {
        let dav = try await TestDAV()
        let start = await dav.send("REPORT", Self.book, body: Self.sync())
        let origin = try token(start)
        for index in 0..<5 { await dav.putCard(uid: "p\(index)", fn: "P\(index)") }
        let page = await dav.send("REPORT", Self.book, body: Self.sync(token: origin, limit: 2))
        let views = try page.multistatus()
        #expect(views[Self.book]?.status == 507)
        #expect(page.text.contains("number-of-matches-within-limits"))
        #expect(views.count == 3)
        var seen = Set(views.keys.filter { $0 != Self.book })
        var next = try token(page)
        for _ in 0..<5 {
            let more = await dav.send("REPORT", Self.book, body: Self.sync(token: next, limit: 2))
            let moreViews = try more.multistatus()
            seen.formUnion(moreViews.keys.filter { $0 != Self.book })
            next = try token(more)
            if moreViews[Self.book] == nil { break }
        }
        #expect(seen == Set((0..<5).map { Self.book + "p\($0).vcf" }))
    }

    @Test func invalidTokenIs403ValidSyncToken() async throws {
        let dav = try await TestDAV()
        for bad in ["garbage", "http://rolo.invalid/sync/999/1", "http://rolo.invalid/sync/1/99999"] {
            let response = await dav.send("REPORT", Self.book, body: Self.sync(token: bad))
            #expect(response.status == 403, "token \(bad)")
            #expect(try response.errorConditions().contains("{DAV:}valid-sync-token"))
        }
    }

    @Test func compactedTokenIs403() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "a", fn: "A")
        let old = try token(await dav.send("REPORT", Self.book, body: Self.sync()))
        await dav.putCard(uid: "b", fn: "B")
        try await dav.store.compactChanges(olderThan: .distantFuture)
        let response = await dav.send("REPORT", Self.book, body: Self.sync(token: old))
        #expect(response.status == 403)
    }

    @Test func syncTokenPropertyMatchesReportToken() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "a", fn: "A")
        let report = try token(await dav.send("REPORT", Self.book, body: Self.sync()))
        let propfind = await dav.propfind(Self.book, props: ["{DAV:}sync-token"])
        #expect(try propfind.multistatus()[Self.book]?.value(of: "{DAV:}sync-token")?.text == report)
    }
}

