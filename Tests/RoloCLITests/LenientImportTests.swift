import Foundation
import Testing
import VCard

/// `rolo import` reads what old phones and exporters write (issue 21) and stores cards a
/// PUT would accept; `rolo export --format jcard` writes the book as a JSON array of jCards.
@Suite struct LenientImportTests {
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let lenient = tests.appendingPathComponent("RoloCLITests/Fixtures/lenient")
    static let realWorld = tests.appendingPathComponent("VCardTests/Fixtures/RealWorld")

    static func vcfFiles(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".vcf") }.sorted()
            .map { folder.appendingPathComponent($0).path }
    }

    /// Imports `files` into a fresh database's `lena/default` and returns the exported cards,
    /// each read strictly (as a PUT would) and validated.
    static func importAndExport(_ files: [String]) async throws -> (imported: RoloBinary.Outcome, cards: [VCard], database: String, folder: URL) {
        let (folder, database) = try temporaryDatabase()
        try await ImportInterruptionTests.addUser("lena", database: database)
        let imported = try await RoloBinary.run(["import", "lena", "default"] + files + ["--database", database])
        let exported = try await RoloBinary.run(["export", "lena", "default", "--database", database])
        #expect(exported.status == 0)
        let cards = try VCardParser.parse([UInt8](exported.output))
        for card in cards {
            #expect(throws: Never.self) { try VCardValidator.validate(card, requireUID: true) }
            #expect(card.version == .v30 || card.version == .v40)
        }
        return (imported, cards, database, folder)
    }

    @Test func handWrittenShapesImportAsCardsAPutWouldTake() async throws {
        let result = try await Self.importAndExport(try Self.vcfFiles(in: Self.lenient))
        defer { try? FileManager.default.removeItem(at: result.folder) }
        #expect(result.imported.status == 0, "\(result.imported.stderr)")
        #expect(result.imported.stdout.contains("Imported 6 cards"), "\(result.imported.stdout)")
        let byFN = Dictionary(result.cards.map { ($0.first("FN")?.text ?? "", $0) }, uniquingKeysWith: { first, _ in first })

        let camille = try #require(byFN["Mme Camille Moreau"])
        #expect(camille.version == .v30)
        #expect(camille.first("UID")?.text.isEmpty == false)
        #expect(camille.first("X-CUSTOM")?.parameterValues("X-PARAM") == ["kept"])

        let elif = try #require(byFN["Elif Öztürk"])
        #expect(elif.version == .v30)
        #expect(elif.first("N")?.components.prefix(2) == ["Öztürk", "Elif"])
        #expect(elif.first("UID")?.text == "lenient-qp-21")

        let tomasz = try #require(byFN["Tomasz Wiśniewski"])
        #expect(tomasz.first("NOTE")?.text == "Met at the conference in Gdańsk\nAsked about the Rust meetup\n\nCall back in May")
        #expect(tomasz.first("ADR")?.components == ["", "", "ul. Długa 5\nm. 12", "Gdańsk", "", "80-831", "Poland"])
        #expect(tomasz.first("TEL")?.text == "+48 501 555 222")

        let address = try #require(byFN["only-an-address@example.org"])
        #expect(address.version == .v40)
        #expect(address.properties(named: "UID").count == 1)
        #expect(address.first("UID")?.text.isEmpty == false)

        #expect(byFN["Bäckerei Sonnenschein"]?.first("UID")?.text == "lenient-org")
        #expect(byFN["Bex"]?.first("UID")?.text == "lenient-nick")
    }

    /// Every real-world shape the vCard layer reads (legacy charsets, UTF-16, BASE64 text,
    /// no VERSION, no FN, unindented lines) imports, and is stored as UTF-8 3.0/4.0.
    @Test func everyRealWorldFixtureImports() async throws {
        let files = try Self.vcfFiles(in: Self.realWorld)
        var expected = 0
        for file in files {
            expected += try VCardParser.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: file))), mode: .lenient).count
        }
        let result = try await Self.importAndExport(files)
        defer { try? FileManager.default.removeItem(at: result.folder) }
        #expect(result.imported.status == 0, "\(result.imported.stderr)")
        #expect(result.cards.count == expected)
        #expect(result.cards.allSatisfy { $0.first("FN")?.text.isEmpty == false })
        // Spot checks of decoded text: Shift_JIS, UTF-16 and KOI8-R came through as UTF-8.
        let names = Set(result.cards.compactMap { $0.first("FN")?.text })
        for file in ["sjis-21-qp.vcf", "utf16le-bom-21.vcf", "koi8r-21.vcf"] {
            let card = try #require(try VCardParser.parse([UInt8](Data(contentsOf: Self.realWorld.appendingPathComponent(file))),
                                                          mode: .lenient).first)
            #expect(names.contains(VCardConverter.convert(card, to: .v30).first("FN")?.text ?? "?"), "\(file)")
        }
    }

    @Test func exportAsJCardIsAJSONArrayOfTheBooksCards() async throws {
        let result = try await Self.importAndExport(try Self.vcfFiles(in: Self.lenient))
        defer { try? FileManager.default.removeItem(at: result.folder) }
        let json = try await RoloBinary.run(["export", "lena", "default", "--format", "jcard", "--database", result.database])
        #expect(json.status == 0)
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
        let array = try #require(parsed as? [Any])
        #expect(array.count == result.cards.count)
        let cards = try JCard.decode(json.stdout)
        #expect(Set(cards.compactMap { $0.first("UID")?.text }) == Set(result.cards.compactMap { $0.first("UID")?.text }))
        #expect(cards.allSatisfy { $0.version == .v40 })

        // One card is still an array; an empty book is [].
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await ImportInterruptionTests.addUser("solo", database: database)
        let empty = try await RoloBinary.run(["export", "solo", "default", "--format", "jcard", "--database", database])
        #expect(empty.stdout == "[]\n")
        _ = try await RoloBinary.run(["import", "solo", "default", Self.lenient.appendingPathComponent("no-version-21-shape.vcf").path,
                                      "--database", database])
        let one = try await RoloBinary.run(["export", "solo", "default", "--format", "jcard", "--database", database])
        #expect((try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [Any])?.count == 1)
    }
}
