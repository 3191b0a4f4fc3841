import Testing
@testable import VCard

/// The checks the shared corpus gets, run on the in-repo client shapes.
@Suite struct FixtureTests {
    static let names = ClientShapes.all.map(\.name)

    private func cards(_ name: String) throws -> [VCard] {
        let text = try #require(ClientShapes.all.first { $0.name == name }?.text)
        return try VCardParser.parse(ClientShapes.crlf(text))
    }

    @Test(arguments: names)
    func parseWriteParseIsTheIdentity(shape: String) throws {
        for card in try cards(shape) {
            let written = VCardWriter.write(card)
            let again = try parseOne(written)
            if card.version == .v21 {
                #expect(withoutLines(again) == withoutLines(VCardConverter.convert(card, to: .v30)))
            } else {
                #expect(withoutLines(again) == withoutLines(card))
            }
        }
    }

    @Test(arguments: names)
    func everyConversionKeepsLabelsValuesAndPreferences(shape: String) throws {
        for card in try cards(shape) {
            let base = VCardConverter.convert(card, to: .v30)
            let v4 = VCardConverter.convert(base, to: .v40)
            let back = VCardConverter.convert(try parseOne(VCardWriter.write(v4)), to: .v30)
            for (key, names) in OracleReader.labeledNames {
                let expected = OracleReader.labeled(base, names)
                #expect(OracleReader.labeled(v4, names).map(\.label) == expected.map(\.label), "\(shape) \(key) in 4.0")
                #expect(OracleReader.labeled(v4, names).map(\.preferred) == expected.map(\.preferred), "\(shape) \(key) in 4.0")
                #expect(OracleReader.labeled(back, names) == expected, "\(shape) \(key) after 3 -> 4 -> 3")
            }
            #expect(back.first("FN")?.text == base.first("FN")?.text)
            #expect(OracleReader.kind(v4) == OracleReader.kind(base))
            #expect(OracleReader.members(v4) == OracleReader.members(base))
            #expect(OracleReader.categories(back) == OracleReader.categories(base))
        }
    }

    @Test func shapesReadAsTheirClientsMeantThem() throws {
        let google = try parseOne(ClientShapes.crlf(ClientShapes.google))
        #expect(google.first("URL")?.text == "http://blog.example/amara")
        #expect(OracleReader.labeled(google, ["TEL"]).map(\.label) == ["mobile", "Parents' home"])
        let thunderbird = try parseOne(ClientShapes.crlf(ClientShapes.thunderbird))
        #expect(OracleReader.labeled(thunderbird, ["TEL"]).map(\.label) == ["mobile", "otherFax"])
        #expect(thunderbird.first("NOTE")?.text == "Quarterly sync on Thursdays.\nBring the Q3 numbers.")
        let android = try parseOne(ClientShapes.crlf(ClientShapes.android21))
        #expect(android.first("FN")?.text == "Nguyễn Thị Lan")
        #expect(android.first("N")?.components == ["Nguyễn", "Thị Lan", "", "", ""])
        #expect(OracleReader.labeled(android, ["TEL"]) == [
            .init(label: "mobile", value: "+84912345678", preferred: true), .init(label: "workFax", value: "+842438259999", preferred: false),
        ])
    }
}
