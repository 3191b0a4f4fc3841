import PropertyBased
import Testing
@testable import VCard

/// Random cards with random Unicode: written then parsed they come back identical, and
/// every written line is at most 75 octets of valid UTF-8.
@Suite struct PropertyTests {
    static let characters: [Character] = Array("abcXYZ019 ,;:\\\"^'=.-_\n\téßøñ中文字アイ한국😀🎉👩‍💻🇸🇪") + ["\u{301}", "e\u{301}", "\u{200D}", "\u{FEFF}"]
    static let text = Gen<Character?>.element(of: characters).map { $0! }.string(of: 0...40)
    static let longText = Gen<Character?>.element(of: characters).map { $0! }.string(of: 100...400)

    /// Structural choices (names, groups, value kinds) from a seed; text comes from the generators.
    struct Choices {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static let propertyNames = ["FN", "NOTE", "N", "ADR", "TEL", "EMAIL", "CATEGORIES", "X-CUSTOM", "X-ABLABEL", "URL", "ORG", "x-lower-case"]
    static let parameterNames = ["TYPE", "PREF", "LABEL", "X-FOO", "X-BAR-BAZ", "LANGUAGE", "VALUE", "PID", "x-evolution-ui-slot"]

    static func makeCard(version: VCardVersion, values: [String], parameterValues: [String], seed: Int) -> VCard {
        var choices = Choices(state: UInt64(seed))
        var properties = [VCardProperty(name: "VERSION", rawValue: version.rawValue)]
        var pool = parameterValues[...]
        for value in values {
            var parameters: [VCardParameter] = []
            for _ in 0..<choices.next(3) {
                let count = 1 + choices.next(3)
                let taken = Array(pool.prefix(count))
                pool = pool.dropFirst(taken.count)
                parameters.append(VCardParameter(name: parameterNames[choices.next(parameterNames.count)], values: taken.isEmpty ? [""] : taken))
            }
            let name = propertyNames[choices.next(propertyNames.count)]
            let group: String? = [nil, "item\(choices.next(20))", "g-\(choices.next(5))"][choices.next(3)]
            let property: VCardProperty
            switch choices.next(4) {
            case 0: property = VCardProperty(group: group, name: name, parameters: parameters, text: value)
            case 1: property = VCardProperty(group: group, name: name, parameters: parameters, components: value.split(separator: ";", omittingEmptySubsequences: false).map(String.init))
            case 2: property = VCardProperty(group: group, name: name, parameters: parameters, list: value.split(separator: " ").map(String.init))
            default: property = VCardProperty(group: group, name: name, parameters: parameters, text: value + value + value)
            }
            properties.append(property)
        }
        return VCard(version: version, properties: properties)
    }

    static func checkLines(_ text: String) {
        let bytes = Array(text.utf8)
        var start = 0
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x0D {
                #expect(index + 1 < bytes.count && bytes[index + 1] == 0x0A, "CR must start CRLF")
                let line = Array(bytes[start..<index])
                #expect(line.count <= 75, "line of \(line.count) octets")
                #expect(String(validating: line, as: UTF8.self) != nil, "line is not valid UTF-8 alone")
                index += 2
                start = index
                continue
            }
            #expect(bytes[index] != 0x0A, "bare LF in output")
            index += 1
        }
        #expect(start == bytes.count, "output ends with CRLF")
    }

    @Test func writeThenParseIsTheIdentity() async {
        await propertyCheck(count: 300, input: Self.text.array(of: 1...12), Self.text.array(of: 0...12), Gen.int(in: 0...Int(Int32.max))) { values, parameterValues, seed in
            for version in [VCardVersion.v30, .v40] {
                let card = Self.makeCard(version: version, values: values, parameterValues: parameterValues, seed: seed)
                let written = VCardWriter.write(card)
                Self.checkLines(written)
                let parsed = try? parseOne(written)
                #expect(parsed.map(withoutLines) == card, "\(written)")
            }
        }
    }

    @Test func longValuesFoldIntoValidLinesAndComeBack() async {
        await propertyCheck(count: 100, input: Self.longText, Gen.int(in: 0...1000)) { value, seed in
            let card = Self.makeCard(version: .v40, values: [value, value], parameterValues: [value], seed: seed)
            let written = VCardWriter.write(card)
            Self.checkLines(written)
            #expect((try? parseOne(written)).map(withoutLines) == card)
        }
    }

    @Test func accessorsReturnWhatBuildersWereGiven() async {
        await propertyCheck(count: 300, input: Self.text.array(of: 1...6)) { parts in
            #expect(VCardProperty(name: "ADR", components: parts).components == parts)
            #expect(VCardProperty(name: "NOTE", text: parts.joined()).text == parts.joined())
            #expect(VCardProperty(name: "CATEGORIES", list: parts).listValues == parts)
        }
    }

    @Test func conversionRoundTripKeepsValuesOfRandomCards() async {
        await propertyCheck(count: 200, input: Self.text.array(of: 1...10), Gen.int(in: 0...Int(Int32.max))) { values, seed in
            var card = Self.makeCard(version: .v30, values: values, parameterValues: ["home", "pref", "cell"], seed: seed)
            // A 4.0 ADR LABEL parameter becomes a 3.0 LABEL property by design: not generated here.
            for index in card.properties.indices { card.properties[index].parameters.removeAll { $0.name == "LABEL" } }
            var back = VCardConverter.convert(VCardConverter.convert(card, to: .v40), to: .v30)
            if !card.properties.contains(where: { $0.name == "FN" }) {
                // Conversion derives the FN a card without one lacks: exactly one is added.
                #expect(back.properties.filter { $0.name == "FN" }.count == 1)
                back.properties.removeAll { $0.name == "FN" }
            }
            #expect(back.properties.map(\.rawValue) == card.properties.map(\.rawValue))
            for (before, after) in zip(card.properties, back.properties) {
                #expect(OracleReader.preferred(after) == OracleReader.preferred(before))
            }
        }
    }

    static let fragments: [String] = [
        "BEGIN:VCARD", "END:VCARD", "VERSION:2.1", "VERSION:4.0", "\r\n", "\n", "\r", " ", "\t", ":", ";", ",", "=", "\"",
        "^", "\\", "ENCODING=QUOTED-PRINTABLE", "ENCODING=BASE64", "CHARSET=latin1", "=C3", "=\r\n", "item1.", "TEL", "X-ABLabel",
        "é", "😀", "\u{0}", "data:image/png;base64,", "TYPE=\"a,b\"", "PREF=1",
    ]

    @Test func arbitraryInputNeverCrashesOrHangs() async {
        let pieces = Gen<String?>.element(of: Self.fragments).map { $0! }.array(of: 0...40)
        await propertyCheck(count: 1500, input: pieces, Gen.int(in: 0...Int(Int32.max)), Gen.bool) { parts, seed, mutate in
            // Either random fragments alone, or a client shape with fragments spliced in.
            var bytes: [UInt8]
            if mutate {
                var choices = Choices(state: UInt64(seed))
                bytes = ClientShapes.crlf(ClientShapes.all[choices.next(ClientShapes.all.count)].text)
                for part in parts { bytes.insert(contentsOf: Array(part.utf8), at: choices.next(bytes.count + 1)) }
            } else {
                bytes = Array(parts.joined().utf8)
            }
            if let cards = try? VCardParser.parse(bytes) {
                for card in cards {
                    let written = VCardWriter.write(card)
                    Self.checkLines(written)
                    if card.version != .v21 {
                        #expect((try? parseOne(written)).map(withoutLines) == withoutLines(card), "\(written)")
                    }
                    _ = try? VCardValidator.validate(card, requireUID: true)
                    for version in [VCardVersion.v30, .v40] {
                        Self.checkLines(VCardWriter.write(VCardConverter.convert(card, to: version)))
                    }
                }
            }
        }
    }
}

