import Foundation
import Testing
@testable import VCard

/// Committed fixtures in the shapes real phones and old exports wrote (`Fixtures/RealWorld`,
/// bytes produced with iconv by `make-fixtures.py`): legacy charsets, VERSION-less cards,
/// unindented continuation lines, cards without FN, FN with a comma.
enum RealWorld {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/RealWorld")

    static func bytes(_ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
    }

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".vcf") }.sorted()
    }

    /// Per file, per card: property name -> expected decoded text (`text` for FN/NOTE/TITLE,
    /// components joined with "|" for N/ADR/ORG).
    static let expected: [String: [[String: String]]] = [
        "sjis-21-qp.vcf": [[
            "FN": "山田 太郎", "N": "山田|太郎|||",
            "NOTE": "表示はソフトで確認。二行目の予定もあります。長いメモは折り返されます。",
            "SOUND": "ﾔﾏﾀﾞ|ﾀﾛｳ|||", "EMAIL": "taro.yamada@example.jp",
        ]],
        "sjis-21-whole-file.vcf": [["FN": "鈴木 表子", "N": "鈴木|表子|||", "ORG": "ソニー表参道店",
                                    "ADR": "||港区芝公園4-2-8|東京都||105-0011|日本"]],
        "iso2022jp-21.vcf": [["FN": "佐藤 花子", "N": "佐藤|花子|||", "TITLE": "営業部長"]],
        "eucjp-21.vcf": [["FN": "高橋 健一", "N": "高橋|健一|||"]],
        "gb18030-21.vcf": [["FN": "王喆", "N": "王|喆|||"], ["FN": "李娜", "N": "李|娜|||", "NOTE": "吉野家的𠮷字"]],
        "big5-21.vcf": [["FN": "許志明", "N": "許|志明|||", "ADR": "||信義路五段7號|台北市||110|台灣"]],
        "euckr-21.vcf": [["FN": "김민준", "N": "김|민준|||", "NOTE": "똠방각하 모임"]],
        "koi8r-21.vcf": [["FN": "Иван Петров", "N": "Петров|Иван|Сергеевич||"]],
        "windows1251-21.vcf": [["FN": "Ґанна Їжакевич", "N": "Їжакевич|Ґанна|||", "ORG": "Київська пекарня"]],
        "iso8859-21.vcf": [
            ["FN": "François Müller", "N": "Müller|François|||", "ADR": "||Øvre gate 5|Ålesund||6002|Norge"],
            ["FN": "Zdeněk Šťastný", "N": "Šťastný|Zdeněk|||", "NOTE": "Łódź, Żółć"],
            ["FN": "Œdipe Lefèvre", "N": "Lefèvre|Œdipe|||", "NOTE": "Dîner à 50 € chez Šárka"],
        ],
        "utf16le-bom-21.vcf": [["FN": "Zoë Adeyemi-Okafor 🎻", "N": "Adeyemi-Okafor|Zoë|||",
                                "NOTE": "Cellist — rehearsals on Tuesdays"]],
        "encoded-text-21.vcf": [["FN": "中村 美咲", "N": "中村|美咲|||", "NOTE": "Ünïcødé note ✓"]],
        "no-version-21-shape.vcf": [["FN": "Agnieszka Nowak", "N": "Nowak|Agnieszka|||", "TEL": "+48 600 555 131"]],
        "no-version-30-shape.vcf": [["FN": "Kwame Mensah", "NOTE": "Met at the Accra tech meetup, 2019"]],
        "continuation-unindented-30.vcf": [[
            "FN": "Chiamaka Okonkwo",
            "NOTE": "First line of the note\nSecond line: still the note\n\nFourth line after a blank one; Meeting at 10:30",
            "ADR": "||12 Allen Avenue\nFlat 3B|Ikeja|Lagos|100271|Nigeria",
            "X-CUSTOM-FIELD": "unknown value",
        ]],
        "no-fn.vcf": [["N": "Doe|John|Quincy|Dr.|Jr."], ["ORG": "Acme Widgets|Sales"], [:], [:], [:], [:], [:]],
        "fn-comma.vcf": [["FN": "Doe, John"], ["FN": "Smith, Jane"], ["FN": "García, María"]],
    ]

    /// Files whose cards the strict (PUT) reader refuses; everything else parses strictly too.
    static let lenientOnly: Set<String> = ["no-version-21-shape.vcf", "no-version-30-shape.vcf", "continuation-unindented-30.vcf"]

    static func text(_ card: VCard, _ name: String) -> String? {
        guard let property = card.first(name) else { return nil }
        switch name {
        case "N", "ADR", "ORG", "SOUND": return property.components.joined(separator: "|")
        default: return property.text
        }
    }
}

@Suite struct RealWorldTests {
    @Test func everyFixtureHasExpectations() {
        #expect(Set(RealWorld.files) == Set(RealWorld.expected.keys))
    }

    @Test(arguments: RealWorld.files)
    func decodesExactly(file: String) throws {
        let cards = try VCardParser.parse(RealWorld.bytes(file), mode: .lenient)
        let expected = try #require(RealWorld.expected[file])
        try #require(cards.count == expected.count, "\(file): \(cards.count) cards")
        for (card, facts) in zip(cards, expected) {
            for (name, value) in facts {
                #expect(RealWorld.text(card, name) == value, "\(file) \(name)")
            }
            #expect(!card.properties.contains { $0.parameter("CHARSET") != nil }, "\(file): CHARSET is decoded away")
        }
        if !RealWorld.lenientOnly.contains(file) {
            let strict = try VCardParser.parse(RealWorld.bytes(file))
            #expect(strict.map(withoutLines) == cards.map(withoutLines), "\(file): strict and lenient agree")
        }
    }

    /// Parse -> convert (4.0 and 3.0) -> write -> parse: UTF-8 without CHARSET, the decoded
    /// text unchanged, every property (understood or not) kept.
    @Test(arguments: RealWorld.files)
    func convertsAndWritesAsUTF8(file: String) throws {
        let cards = try VCardParser.parse(RealWorld.bytes(file), mode: .lenient)
        let expected = try #require(RealWorld.expected[file])
        for (card, facts) in zip(cards, expected) {
            for version in [VCardVersion.v40, .v30] {
                // As `rolo vcard convert` does: a card staying in its version only gets the FN.
                var converted = VCardConverter.convert(card, to: version)
                if card.version == version { converted = VCardConverter.addingFormattedName(converted) }
                let written = VCardWriter.write(converted)
                #expect(!written.uppercased().contains("CHARSET"), "\(file) -> \(version)")
                #expect(!written.uppercased().contains("QUOTED-PRINTABLE"), "\(file) -> \(version)")
                let again = try parseOne(written)
                #expect(withoutLines(again) == withoutLines(converted), "\(file) -> \(version) written and read back")
                for (name, value) in facts {
                    #expect(RealWorld.text(again, name) == value, "\(file) -> \(version) \(name)")
                }
                #expect(again.first("FN") != nil, "\(file) -> \(version) has FN")
                try VCardValidator.validate(again, requireUID: false)
                // Every property of the source survives (by name and group), in order.
                let source = card.properties.filter { $0.name != "VERSION" && $0.name != "LABEL" }
                    .map { "\($0.group ?? "").\($0.name)" }
                let kept = again.properties.map { "\($0.group ?? "").\($0.name)" }
                #expect(isSubsequence(source.map(renamed(version)), of: kept), "\(file) -> \(version): \(source) in \(kept)")
            }
        }
    }

    /// Whatever is read and written back keeps every property: parse -> write -> parse.
    @Test(arguments: RealWorld.files)
    func parseWriteParseKeepsEveryProperty(file: String) throws {
        for card in try VCardParser.parse(RealWorld.bytes(file), mode: .lenient) {
            let again = try parseOne(VCardWriter.write(card))
            let expected = card.version == .v21 ? VCardConverter.convert(card, to: .v30) : card
            #expect(withoutLines(again) == withoutLines(expected), "\(file)")
            let twice = try parseOne(VCardWriter.write(again))
            #expect(withoutLines(twice) == withoutLines(again), "\(file) second round")
        }
    }

    private func renamed(_ version: VCardVersion) -> (String) -> String {
        { $0 }
    }

    private func isSubsequence(_ needle: [String], of haystack: [String]) -> Bool {
        var index = haystack.startIndex
        for item in needle {
            guard let found = haystack[index...].firstIndex(of: item) else { return false }
            index = haystack.index(after: found)
        }
        return true
    }

    // MARK: Lenient shapes

    @Test func versionlessCardsAreReadByShapeOnlyWhenLenient() throws {
        let v21 = try RealWorld.bytes("no-version-21-shape.vcf")
        let v30 = try RealWorld.bytes("no-version-30-shape.vcf")
        #expect(try VCardParser.parse(v21, mode: .lenient).first?.version == .v21)
        #expect(try VCardParser.parse(v30, mode: .lenient).first?.version == .v30)
        for bytes in [v21, v30] {
            let error = try #require(parseError(bytes))
            #expect(error.message.contains("VERSION"), "\(error)")
            #expect(error.message.lowercased().contains("missing"), "\(error)")
        }
        let card = try #require(try VCardParser.parse(v21, mode: .lenient).first)
        #expect(card.properties.first?.name == "VERSION")
        #expect(OracleReader.labeled(card, ["TEL"]).map(\.label) == ["mobile", "workFax"])
    }

    @Test func bareTypeTokenAloneMeans21() throws {
        let text = "BEGIN:VCARD\r\nFN:A\r\nTEL;CELL:1\r\nEND:VCARD\r\n"
        #expect(try VCardParser.parse(text, mode: .lenient).first?.version == .v21)
        let plain = "BEGIN:VCARD\r\nFN:A\r\nTEL;TYPE=cell:1\r\nEND:VCARD\r\n"
        #expect(try VCardParser.parse(plain, mode: .lenient).first?.version == .v30)
    }

    @Test func unindentedContinuationLinesNeedLenientMode() throws {
        let bytes = try RealWorld.bytes("continuation-unindented-30.vcf")
        #expect(parseError(bytes) != nil)
        let card = try #require(try VCardParser.parse(bytes, mode: .lenient).first)
        #expect(card.first("NOTE")?.rawValue.contains("\n") == false, "3.0 text keeps line breaks escaped")
        #expect(card.first("X-ABADR")?.group == "item1")
        #expect(card.properties.map(\.name) == ["VERSION", "N", "FN", "NOTE", "ADR", "X-ABADR", "TEL", "X-CUSTOM-FIELD"])
    }

    /// A VERSION-less card gets its VERSION first: the joined value that becomes `\n` is
    /// still the right property's, and the next card's joins start afresh.
    @Test func continuationInAVersionlessCardAndTheCardAfterIt() throws {
        let text = "BEGIN:VCARD\nFN:A\nNOTE:one\ntwo\nTEL:1\nEND:VCARD\n"
            + "BEGIN:VCARD\nVERSION:3.0\nFN:B\nTITLE:x\nNOTE:three\nfour\nEND:VCARD\n"
        let cards = try VCardParser.parse(text, mode: .lenient)
        #expect(cards.map(\.version) == [.v30, .v30])
        #expect(cards[0].properties.map(\.rawValue) == ["3.0", "A", "one\\ntwo", "1"])
        #expect(cards[1].properties.map(\.rawValue) == ["3.0", "B", "x", "three\\nfour"])
    }

    @Test func continuationInA21QuotedPrintableNote() throws {
        let text = "BEGIN:VCARD\nVERSION:2.1\nFN:A\nNOTE;ENCODING=QUOTED-PRINTABLE:caf=C3=A9\nsecond line\nEND:VCARD\n"
        let card = try #require(try VCardParser.parse(text, mode: .lenient).first)
        #expect(card.first("NOTE")?.rawValue == "café\nsecond line")
        #expect(VCardConverter.convert(card, to: .v40).first("NOTE")?.text == "café\nsecond line")
    }

    @Test func propertyLikeLinesStayProperties() throws {
        let text = "BEGIN:VCARD\nVERSION:3.0\nFN:A\nNOTE:one\nx-thing:two\nitem2.URL:https://example.com\nEND:VCARD\n"
        let card = try #require(try VCardParser.parse(text, mode: .lenient).first)
        #expect(card.first("NOTE")?.text == "one")
        #expect(card.first("X-THING")?.text == "two")
        #expect(card.first("URL")?.group == "item2")
    }

    @Test(arguments: Corpus.isAvailable ? Corpus.validFiles : [])
    func lenientReadsTheCorpusAsStrictDoes(file: String) throws {
        let strict = try VCardParser.parse(Corpus.bytes(file))
        #expect(try VCardParser.parse(Corpus.bytes(file), mode: .lenient) == strict, "\(file)")
    }

    /// Lenient mode only forgives what it documents: the other broken files still fail.
    @Test(arguments: Corpus.isAvailable ? Corpus.invalidFiles : [])
    func lenientStillRefusesBrokenStreams(file: String) throws {
        let forgiven: Set<String> = [
            "invalid/missing-version.vcf",  // read by shape (3.0)
            "invalid/missing-fn-3.0.vcf", "invalid/missing-fn-4.0.vcf", "invalid/missing-uid-3.0.vcf",  // parse; validation refuses
        ]
        let result = Result { () throws(VCardError) -> [VCard] in try VCardParser.parse(Corpus.bytes(file), mode: .lenient) }
        if forgiven.contains(file) {
            #expect((try? result.get()) != nil, "\(file)")
        } else if case .success = result {
            Issue.record("\(file) was read in lenient mode")
        }
    }

    // MARK: Charsets

    @Test func unknownCharsetIsAnErrorWhenStrictAndBestEffortWhenLenient() throws {
        let text = "BEGIN:VCARD\r\nVERSION:2.1\r\nFN;CHARSET=X-MARTIAN:Zork\r\nN;CHARSET=X-MARTIAN:Gr\u{E9}\r\nEND:VCARD\r\n"
        let error = try #require(parseError(text))
        #expect(error.message.contains("CHARSET X-MARTIAN"), "\(error)")
        #expect(error.line == 3)
        let card = try #require(try VCardParser.parse(text, mode: .lenient).first)
        #expect(card.first("FN")?.text == "Zork")
        #expect(card.first("N")?.rawValue == "Gré")
    }

    @Test func bytesInvalidInTheDeclaredCharset() throws {
        // 0x82 0x20 is not Shift_JIS; UTF-8 bytes under a legacy label are a common mislabel.
        let bad: [UInt8] = Array("BEGIN:VCARD\r\nVERSION:2.1\r\nFN;CHARSET=SHIFT_JIS:".utf8) + [0x82, 0x20, 0x41]
            + Array("\r\nEND:VCARD\r\n".utf8)
        #expect(parseError(bad)?.message.contains("not valid SHIFT-JIS") == true)
        #expect(try VCardParser.parse(bad, mode: .lenient).first?.first("FN")?.text == "\u{FFFD} A")
        let mislabelled = Array("BEGIN:VCARD\r\nVERSION:2.1\r\nFN;CHARSET=ISO-2022-JP:Ren\u{E9}e\r\nEND:VCARD\r\n".utf8)
        #expect(parseError(mislabelled) != nil)
        #expect(try VCardParser.parse(mislabelled, mode: .lenient).first?.first("FN")?.text == "Renée")
    }

    @Test func charsetLabelSpellings() throws {
        for label in ["Shift_JIS", "SJIS", "x-sjis", "shift-jis", "CP932", "Windows-31J"] {
            let bytes = Array("BEGIN:VCARD\r\nVERSION:2.1\r\nFN;CHARSET=\(label):".utf8) + [0x93, 0xFA, 0x96, 0x7B, 0x5C]
                + Array("\r\nEND:VCARD\r\n".utf8)
            #expect(try parseOne(bytes).first("FN")?.text == "日本\\", "\(label)")
        }
    }

    @Test func utf16WithoutBOMAndUTF8BOM() throws {
        let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Łucja\r\nEND:VCARD\r\n"
        var be: [UInt8] = []
        for unit in text.utf16 { be.append(UInt8(unit >> 8)); be.append(UInt8(unit & 0xFF)) }
        #expect(try parseOne(be).first("FN")?.text == "Łucja")
        #expect(try parseOne([0xEF, 0xBB, 0xBF] + Array(text.utf8)).first("FN")?.text == "Łucja")
    }

    // MARK: FN

    @Test func derivedFormattedNames() throws {
        let cards = try VCardParser.parse(RealWorld.bytes("no-fn.vcf"))
        let derived = cards.map { VCardConverter.convert($0, to: .v40).first("FN")?.text }
        #expect(derived == ["Dr. John Quincy Doe Jr.", "Acme Widgets", "Bex", "only.email@example.net", "+1 555 0102", "山田太郎",
                            "fallback@example.com"])
        #expect(cards.map { VCardConverter.addingFormattedName(VCardConverter.convert($0, to: .v30)).first("FN")?.text } == derived)
        #expect(cards.map { VCardConverter.formattedName(for: $0) } == derived.map { $0 ?? "" })
        #expect(VCardConverter.formattedName(for: VCard(version: .v30, properties: [])) == "")
        let added = VCardConverter.addingFormattedName(cards[0])
        #expect(added.properties.map(\.name) == ["VERSION", "N", "FN", "TEL"])
        #expect(VCardConverter.convert(cards[0], to: .v30) == cards[0], "same version: unchanged")
    }

    @Test func formattedNameWithCommaIsText() throws {
        let cards = try VCardParser.parse(RealWorld.bytes("fn-comma.vcf"))
        #expect(cards[0].first("FN")?.rawValue == "Doe, John", "kept verbatim")
        #expect(VCardWriter.write(cards[0]).contains("\r\nFN:Doe, John\r\n"), "untouched: written as read")
        #expect(VCardWriter.write(cards[1]).contains("\r\nFN:Smith\\, Jane\r\n"), "2.1 -> 3.0 escapes the comma")
        #expect(VCardWriter.write(cards[2]).contains("\r\nFN:García\\, María\r\n"))
        let built = VCardProperty(name: "FN", text: "Doe, John")
        #expect(built.rawValue == "Doe\\, John")
        #expect(JCard.encode(cards[0]).contains("[\"fn\", {}, \"text\", \"Doe, John\"]"))
        let back = try JCard.decode(JCard.encode([cards[0]]))
        #expect(back.first?.first("FN")?.text == "Doe, John")
        #expect(back.first?.first("FN")?.rawValue == "Doe\\, John")
    }
}
