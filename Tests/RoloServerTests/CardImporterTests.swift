import CardIndexing
import Foundation
import RoloServer
import RoloSQLite
import RoloStore
import Testing
import VCard

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

    /// What a lenient reading understood is stored as a card a PUT would accept: strict
    /// reading, VERSION, FN, one UID.
    static func expectPutWouldTake(_ prepared: CardImporter.PreparedCard) throws -> VCard {
        let cards = try VCardParser.parse(prepared.bytes)
        #expect(cards.count == 1)
        let card = try #require(cards.first)
        try VCardValidator.validate(card, requireUID: true)
        #expect(card.properties(named: "UID").map(\.text) == [prepared.uid])
        return card
    }

    @Test func aCardAPutWouldTakeKeepsItsBytes() throws {
        let card = "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:kept\r\nFN:Kept  As Sent\r\nX-ODD;x-p=1:as is\r\nEND:VCARD\r\n"
        #expect(try CardImporter.prepare(Array(card.utf8), maxSize: 1 << 20).bytes == Array(card.utf8))
    }

    @Test func aCardWithoutVersionIsReadByItsShape() throws {
        let v30 = "BEGIN:VCARD\r\nUID:nv-30\r\nFN:Sara Lind\r\nN:Lind;Sara;;;\r\nEND:VCARD\r\n"
        let card30 = try Self.expectPutWouldTake(try CardImporter.prepare(Array(v30.utf8), maxSize: 1 << 20))
        #expect(card30.version == .v30 && card30.first("FN")?.text == "Sara Lind")
        let v21 = "BEGIN:VCARD\r\nUID:nv-21\r\nN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:M=C3=BCller;J=C3=B6rg;;;\r\nTEL;CELL:+49 170 555\r\nEND:VCARD\r\n"
        let card21 = try Self.expectPutWouldTake(try CardImporter.prepare(Array(v21.utf8), maxSize: 1 << 20))
        #expect(card21.version == .v30)
        #expect(card21.first("FN")?.text == "Jörg Müller")
        #expect(card21.first("TEL")?.types.contains("CELL") == true)
    }

    @Test func aCardWithoutFNGetsTheOneContactsAppsShow() throws {
        let cases = [("BEGIN:VCARD\nVERSION:3.0\nUID:f1\nN:Ndiaye;Awa;;;\nEND:VCARD\n", "Awa Ndiaye"),
                     ("BEGIN:VCARD\nVERSION:4.0\nUID:f2\nEMAIL:moussa@mail.example\nEND:VCARD\n", "moussa@mail.example"),
                     ("BEGIN:VCARD\nVERSION:3.0\nUID:f3\nN:;;;;\nORG:Acme\\, Inc.;Sales\nEND:VCARD\n", "Acme, Inc.")]
        for (text, fn) in cases {
            let card = try Self.expectPutWouldTake(try CardImporter.prepare(Array(text.utf8), maxSize: 1 << 20))
            #expect(card.first("FN")?.text == fn)
        }
    }

    @Test func anEmptyUIDLineIsReplacedNotDoubled() throws {
        let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\r\nFN:Empty Uid\r\nN:Uid;Empty;;;\r\nEND:VCARD\r\n"
        let prepared = try CardImporter.prepare(Array(text.utf8), maxSize: 1 << 20, uids: .contentDigest)
        _ = try Self.expectPutWouldTake(prepared)
    }

    @Test func aUTF16FileSplitsIntoUTF8Cards() throws {
        let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:w1\r\nFN:Zoë\r\nEND:VCARD\r\nBEGIN:VCARD\r\nVERSION:3.0\r\nUID:w2\r\nFN:Łukasz\r\nEND:VCARD\r\n"
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in text.utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let cards = CardImporter.cards(in: utf16)
        #expect(cards.count == 2)
        let names = try cards.map { try Self.expectPutWouldTake(try CardImporter.prepare($0, maxSize: 1 << 20)).first("FN")?.text }
        #expect(names == ["Zoë", "Łukasz"])
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
