import Foundation
import Testing
@testable import DAV

/// `BookPages` knows a page is the last from the row it reads past it: a book of exactly
/// two pages is read in two reads, not three (the third found nothing, and on PostgreSQL
/// cost a round trip from a read-ahead thread).
@Suite struct BookPagesTests {
    static func pages(ofBookWith count: Int, pageSize: Int, withBodies: Bool) async throws -> [[String]] {
        let dav = try await TestDAV()
        for index in 0..<count {
            #expect(await dav.putCard(uid: "u\(index)", fn: "Card \(index)", name: String(format: "c%02d", index)).status == 201)
        }
        let book = try #require(try await dav.store.collection(owner: "alice", path: ["default"]))
        var pages = BookPages(store: dav.store, collectionID: book.id, withBodies: withBodies, pageSize: pageSize, bodyLimit: 1 << 20)
        var read: [[String]] = []
        while !pages.isFinished, read.count <= count {
            let page = try await pages.nextPage()
            #expect(page.allSatisfy { withBodies == !$0.data.isEmpty })
            read.append(page.map(\.info.name))
        }
        return read
    }

    @Test(arguments: [false, true])
    func aBookOfWholePagesEndsWithItsLastFullPage(withBodies: Bool) async throws {
        let read = try await Self.pages(ofBookWith: 6, pageSize: 3, withBodies: withBodies)
        #expect(read == [["c00.vcf", "c01.vcf", "c02.vcf"], ["c03.vcf", "c04.vcf", "c05.vcf"]])
    }

    @Test func aShortLastPageEndsTheBookAndNoCardIsReadTwice() async throws {
        let read = try await Self.pages(ofBookWith: 7, pageSize: 3, withBodies: false)
        #expect(read == [["c00.vcf", "c01.vcf", "c02.vcf"], ["c03.vcf", "c04.vcf", "c05.vcf"], ["c06.vcf"]])
    }

    @Test func anEmptyBookIsOneEmptyPage() async throws {
        #expect(try await Self.pages(ofBookWith: 0, pageSize: 3, withBodies: false) == [[]])
    }
}
