import Testing
@testable import VCard

@Suite struct ConverterTests {
    private func apple() throws -> VCard { try parseOne(ClientShapes.crlf(ClientShapes.appleV3)) }
    private func davx5() throws -> VCard { try parseOne(ClientShapes.crlf(ClientShapes.davx5V4)) }

    private func line(_ property: VCardProperty?) -> String {
        guard let property else { return "<absent>" }
        return VCardWriter.write(VCard(version: .v40, properties: [property]))
            .split(separator: "\r\n").dropFirst(2).first.map(String.init) ?? ""
    }

    @Test func convertingToTheSameVersionChangesNothing() throws {
        let card = try apple()
        #expect(VCardConverter.convert(card, to: .v30) == card)
        #expect(VCardConverter.convert(card, to: .v21) == card)
    }

    @Test func typePrefBecomesPref1AndTypesLowerCaseIn40() throws {
        let v4 = VCardConverter.convert(try apple(), to: .v40)
        #expect(v4.version == .v40)
        #expect(v4.properties.first?.rawValue == "4.0")
        let tels = v4.properties(named: "TEL")
        #expect(line(tels[0]) == "TEL;TYPE=cell;TYPE=voice;PREF=1:+46 70 123 45 67")
        #expect(line(tels[1]) == "TEL;TYPE=iphone;TYPE=cell;TYPE=voice:+46 70 765 43 21")
        #expect(line(v4.properties(named: "EMAIL")[0]) == "item1.EMAIL;TYPE=internet;PREF=1:maja@nordljus.example")
    }

    @Test func pref1BecomesTypePrefAndTypesUpperCaseIn30() throws {
        let v3 = VCardConverter.convert(try davx5(), to: .v30)
        #expect(line(v3.properties(named: "TEL")[0]) == "TEL;TYPE=CELL;TYPE=PREF:+34 612 345 678")
        #expect(line(v3.properties(named: "TEL")[1]) == "TEL;TYPE=WORK:+34 91 123 45 67")
        let prefTwo = VCard(version: .v40, properties: [VCardProperty(name: "EMAIL", parameters: [VCardParameter(name: "PREF", values: ["2"])], rawValue: "a@b")])
        #expect(line(VCardConverter.convert(prefTwo, to: .v30).first("EMAIL")) == "EMAIL;PREF=2:a@b")
    }

    @Test func groupKindAndMembersMapBothWays() throws {
        let v4 = VCardConverter.convert(try parseOne(ClientShapes.crlf(ClientShapes.appleGroupV3)), to: .v40)
        #expect(v4.first("KIND")?.rawValue == "group")
        #expect(v4.properties(named: "MEMBER").map(\.rawValue) == [
            "urn:uuid:11111111-2222-3333-4444-555555555555", "urn:uuid:66666666-7777-8888-9999-000000000000",
        ])
        #expect(v4.first("X-ADDRESSBOOKSERVER-KIND") == nil)
        let v3 = VCardConverter.convert(try parseOne(ClientShapes.crlf(ClientShapes.groupV4)), to: .v30)
        #expect(v3.first("X-ADDRESSBOOKSERVER-KIND")?.rawValue == "group")
        #expect(v3.properties(named: "X-ADDRESSBOOKSERVER-MEMBER").map(\.rawValue) == ["urn:uuid:bbbb", "urn:uuid:cccc"])
        #expect(v3.first("KIND") == nil && v3.first("MEMBER") == nil)
    }

    @Test func organizationKindMapsToAppleShowAsCompany() throws {
        let org = VCard(version: .v40, properties: [VCardProperty(name: "FN", rawValue: "ACME"), VCardProperty(name: "KIND", rawValue: "org")])
        let v3 = VCardConverter.convert(org, to: .v30)
        #expect(v3.first("X-ABSHOWAS")?.rawValue == "COMPANY")
        #expect(VCardConverter.convert(v3, to: .v40).first("KIND")?.rawValue == "org")
    }

    @Test func photosMapBetweenBase64AndDataURIs() throws {
        let v4 = VCardConverter.convert(try apple(), to: .v40)
        let photo = try #require(v4.first("PHOTO"))
        #expect(photo.parameters.isEmpty)
        #expect(photo.rawValue.hasPrefix("data:image/jpeg;base64,/9j/4AAQ"))
        #expect(photo.inlineData?.bytes == (try apple()).first("PHOTO")?.inlineData?.bytes)
        let v3 = VCardConverter.convert(try davx5(), to: .v30)
        #expect(line(v3.first("PHOTO")) == "PHOTO;ENCODING=b;TYPE=PNG:iVBORw0KGgo=")
        let external = VCard(version: .v40, properties: [VCardProperty(name: "PHOTO", rawValue: "https://x.example/p.jpg")])
        #expect(line(VCardConverter.convert(external, to: .v30).first("PHOTO")) == "PHOTO;VALUE=uri:https://x.example/p.jpg")
    }

    @Test func yearlessBirthdayMapsToAppleOmitYear() throws {
        #expect(line(VCardConverter.convert(try apple(), to: .v40).first("BDAY")) == "BDAY:--0315")
        #expect(line(VCardConverter.convert(try davx5(), to: .v30).first("BDAY")) == "BDAY;X-APPLE-OMIT-YEAR=1604:1604-04-16")
    }

    @Test func anniversaryMapsToLabeledAppleDate() throws {
        let v3 = VCardConverter.convert(try davx5(), to: .v30)
        let date = try #require(v3.first("X-ABDATE"))
        #expect(date.rawValue == "2015-09-12")
        let group = try #require(date.group)
        #expect(v3.properties.contains { $0.name == "X-ABLABEL" && $0.group == group && $0.rawValue == "_$!<Anniversary>!$_" })
        #expect(v3.first("ANNIVERSARY") == nil)
        #expect(group == "item2", "a fresh group after the card's item1")

        let v4 = VCardConverter.convert(try apple(), to: .v40)
        #expect(line(v4.first("ANNIVERSARY")) == "item10.ANNIVERSARY;PREF=1:20140816")
        #expect(v4.properties(named: "X-ABDATE").map(\.rawValue) == ["20190301"])
    }

    @Test func relatedSpouseMapsToLabeledAppleRelatedName() throws {
        let v3 = VCardConverter.convert(try davx5(), to: .v30)
        let related = try #require(v3.first("X-ABRELATEDNAMES"))
        #expect(related.rawValue == "Diego")
        #expect(related.parameters.isEmpty)
        #expect(v3.properties.contains { $0.name == "X-ABLABEL" && $0.group == related.group && $0.rawValue == "_$!<Spouse>!$_" })

        let v4 = VCardConverter.convert(try apple(), to: .v40)
        let relations = v4.properties(named: "RELATED")
        #expect(relations.map { line($0) } == [
            "item12.RELATED;TYPE=spouse;PREF=1;VALUE=text:Jonas Lindqvist",
            "item13.RELATED;TYPE=parent;VALUE=text:Astrid",
        ])
        let back = VCardConverter.convert(v4, to: .v30)
        #expect(back.properties(named: "X-ABRELATEDNAMES").map { line($0) } == [
            "item12.X-ABRELATEDNAMES;TYPE=PREF:Jonas Lindqvist", "item13.X-ABRELATEDNAMES:Astrid",
        ])
    }

    @Test func addressLabelParameterMapsToLabelProperty() throws {
        let v3 = VCardConverter.convert(try davx5(), to: .v30)
        let adrIndex = try #require(v3.properties.firstIndex { $0.name == "ADR" })
        #expect(line(v3.properties[adrIndex + 1]) == #"LABEL;TYPE=HOME:Calle de Alcalá 45\, 3º B\nMadrid"#)
        #expect(v3.properties[adrIndex].parameter("LABEL") == nil)

        let evolution = VCardConverter.convert(try parseOne(ClientShapes.crlf(ClientShapes.evolutionV3)), to: .v40)
        #expect(evolution.first("LABEL") == nil)
        let work = try #require(evolution.properties(named: "ADR").first)
        #expect(work.parameters.last == VCardParameter(name: "LABEL", values: [#"12 rue des Archives\n75004 Paris\nFrance"#]))
        #expect(evolution.properties(named: "ADR")[1].parameter("LABEL") == nil)
    }

    @Test func version21IsCleanedWhenConverted() throws {
        let source = try parseOne(ClientShapes.crlf(ClientShapes.outlook21))
        for target in [VCardVersion.v30, .v40] {
            let converted = VCardConverter.convert(source, to: target)
            #expect(converted.version == target)
            #expect(converted.first("NOTE")?.text == "Call before 10am.\nGate code 4411 – ask for the bay; side door.")
            #expect(converted.first("ADR")?.components[2] == "Unit 4, North Wall Quay")
            #expect(converted.first("N")?.components == ["O'Connell", "Siobhán", "", "Ms.", ""])
            #expect(!converted.properties.contains { $0.parameter("CHARSET") != nil || $0.parameter("ENCODING")?.first == "BASE64" })
            #expect(converted.first("BDAY")?.rawValue == (target == .v30 ? "1984-07-19" : "19840719"))
        }
        let v3 = VCardConverter.convert(source, to: .v30)
        #expect(line(v3.properties(named: "TEL")[1]) == "TEL;TYPE=CELL;TYPE=PREF:+353 87 555 0103")
        #expect(line(v3.first("PHOTO")) == "PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgICAgMC")
        #expect(line(VCardConverter.convert(source, to: .v40).first("LABEL")) == "<absent>")
    }

    @Test func labelsAndPreferencesSurviveThreeToFourToThree() throws {
        let original = try apple()
        let back = VCardConverter.convert(VCardConverter.convert(original, to: .v40), to: .v30)
        for (_, names) in OracleReader.labeledNames {
            #expect(OracleReader.labeled(back, names) == OracleReader.labeled(original, names))
            #expect(back.properties.filter { names.contains($0.name) }.map(\.group) == original.properties.filter { names.contains($0.name) }.map(\.group))
        }
        #expect(back.first("BDAY") == original.first("BDAY"))
        #expect(back.first("X-SOCIALPROFILE") == original.first("X-SOCIALPROFILE"))
        #expect(back.properties(named: "X-ABLABEL") == original.properties(named: "X-ABLABEL"))
    }

    @Test func labelsAndPreferencesSurviveFourToThreeToFour() throws {
        let original = try davx5()
        let back = VCardConverter.convert(VCardConverter.convert(original, to: .v30), to: .v40)
        for names: Set<String> in [["TEL"], ["EMAIL"], ["ADR"], ["URL"]] {
            #expect(OracleReader.labeled(back, names) == OracleReader.labeled(original, names))
        }
        #expect(back.first("BDAY")?.rawValue == "--0416")
        #expect(back.first("ANNIVERSARY")?.rawValue == "20150912")
        #expect(back.first("RELATED")?.parameter("TYPE") == ["spouse"])
        #expect(back.first("PHOTO")?.rawValue == "data:image/png;base64,iVBORw0KGgo=")
        #expect(back.first("ADR")?.parameters.first { $0.name == "LABEL" }?.values == [#"Calle de Alcalá 45, 3º B\nMadrid"#])
        #expect(back.first("KIND")?.rawValue == "individual")
    }
}
