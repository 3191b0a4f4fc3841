import Foundation
import RoloServer
import RoloStore
import Testing

/// The bulk path shared by `rolo import` and fixtures: splitting, UID rules, batched writes.
@Suite struct CardImporterTests {
    static let twoCards = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:imp-1\r\nFN:Ada Lovelace\r\nN:Lovelace;Ada;;;\r\nEND:VCARD\r\n"
        + "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:imp-2\r\nFN:Alan Turing\r\nEND:VCARD\r\n"
    static let cardWithoutUID = "BEGIN:VCARD\nVERSION:3.0\nFN:Grace Hopper\nN:Hopper;Grace;;;\nEND:VCARD\n"

    @Test func splitterKeepsEachCardsExactText() {
        let cards = CardImporter.cards(in: Array(("junk\r\n" + Self.twoCards + "\r\n" + Self.cardWithoutUID).utf8))
        #expect(cards.count == 3)
        #expect(cards[0] == Array("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:imp-1\r\nFN:Ada Lovelace\r\nN:Lovelace;Ada;;;\r\nEND:VCARD\r\n".utf8))
        #expect(cards[2] == Array(Self.cardWithoutUID.utf8))
    }

    @Test func resourceNamesComeFromSafeUIDsOnlyAndAreStable() {
        #expect(CardImporter.resourceName(forUID: "abc-123@example.org") == "abc-123@example.org.vcf")
        let unsafe = CardImporter.resourceName(forUID: "../etc/passwd")
        #expect(!unsafe.contains("/"))
        #expect(unsafe == CardImporter.resourceName(forUID: "../etc/passwd"))
    }

    @Test func contentDigestUIDsRepeatAcrossRunsAndRandomOnesDoNot() throws {
        let bytes = Array(Self.cardWithoutUID.utf8)
        let first = try CardImporter.prepare(bytes, maxSize: 1 << 20, uids: .contentDigest)
        let second = try CardImporter.prepare(bytes, maxSize: 1 << 20, uids: .contentDigest)
        #expect(first.uid == second.uid)
        #expect(first.uid.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/) != nil)
        #expect(String(decoding: first.bytes, as: UTF8.self).hasSuffix("UID:\(first.uid)\nEND:VCARD\n"))
        let random = try CardImporter.prepare(bytes, maxSize: 1 << 20, uids: .random)
        #expect(random.uid != first.uid)
    }

    @Test func aVersion21CardIsStoredAsVersion30() throws {
        let card = "BEGIN:VCARD\r\nVERSION:2.1\r\nN:Doe;Jane\r\nFN:Jane Doe\r\nTEL;CELL:+1 555\r\nEND:VCARD\r\n"
        let prepared = try CardImporter.prepare(Array(card.utf8), maxSize: 1 << 20, uids: .contentDigest)
        #expect(String(decoding: prepared.bytes, as: UTF8.self).contains("VERSION:3.0"))
        #expect(!prepared.uid.isEmpty)
    }

    @Test func storingTwiceReplacesByUID() async throws {
        let store = try SQLiteStore.temporary()
        defer { try? store.close() }
        try await store.createUser(name: "ida", password: "pw")
        let book = try #require(try await store.collection(owner: "ida", path: ["default"]))
        let cards = try CardImporter.cards(in: Array(Self.twoCards.utf8)).map {
            try CardImporter.prepare($0, maxSize: 1 << 20)
        }
        let first = try await CardImporter.store(cards, collectionID: book.id, in: store, batchSize: 1)
        let again = try await CardImporter.store(cards, collectionID: book.id, in: store)
        #expect(first.created == 2 && first.replaced == 0)
        #expect(again.created == 0 && again.replaced == 2)
        #expect(try await store.listResources(collectionID: book.id).map(\.name).sorted() == ["imp-1.vcf", "imp-2.vcf"])
    }
}
