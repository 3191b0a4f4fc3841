import Foundation
import Testing
@testable import VCard

/// jCard (RFC 7095): the RFC's own examples (written out by hand from §3 and appendix B),
/// the corpus and the RealWorld fixtures through vCard 4.0 -> jCard -> vCard 4.0.
@Suite struct JCardTests {
    /// RFC 7095 appendix B: the RFC 6350 §8 example as jCard.
    static let appendixB = """
        ["vcard",
          [
            ["version", {}, "text", "4.0"],
            ["fn", {}, "text", "Simon Perreault"],
            ["n",
              {},
              "text",
              ["Perreault", "Simon", "", "", ["ing. jr", "M.Sc."]]
            ],
            ["bday", {}, "date-and-or-time", "--02-03"],
            ["anniversary",
              {},
              "date-and-or-time",
              "2009-08-08T14:30:00-05:00"
            ],
            ["gender", {}, "text", "M"],
            ["lang", { "pref": "1" }, "language-tag", "fr"],
            ["lang", { "pref": "2" }, "language-tag", "en"],
            ["org", { "type": "work" }, "text", "Viagenie"],
            ["adr",
               { "type": "work" },
               "text",
               [
                "",
                "Suite D2-630",
                "2875 Laurier",
                "Quebec",
                "QC",
                "G1V 2M2",
                "Canada"
               ]
            ],
            ["tel",
              { "type": ["work", "voice"], "pref": "1" },
              "uri",
              "tel:+1-418-656-9254;ext=102"
            ],
            ["tel",
              { "type": ["work", "cell", "voice", "video", "text"] },
              "uri",
              "tel:+1-418-262-6501"
            ],
            ["email",
              { "type": "work" },
              "text",
              "simon.perreault@viagenie.ca"
            ],
            ["geo", { "type": "work" }, "uri", "geo:46.772673,-71.282945"],
            ["key",
              { "type": "work" },
              "uri",
              "http://www.viagenie.ca/simon.perreault/simon.asc"
            ],
            ["tz", {}, "utc-offset", "-05:00"],
            ["url", { "type": "home" }, "uri", "http://nomis80.org"]
          ]
        ]
        """

    /// The value-type examples of RFC 7095 §3.4–§3.5 and §5 (unknown), one card.
    static let valueTypes = """
        ["vcard", [
          ["version", {}, "text", "4.0"],
          ["fn", {}, "text", "John Q. Public"],
          ["tel", {"group": "contact"}, "uri", "tel:+1-555-555-5555"],
          ["adr", {}, "text", ["", "", "123 Main Street", "Any Town", "CA", "91921-1234", "U.S.A."]],
          ["categories", {}, "text", "computers", "cameras"],
          ["photo", {}, "uri", "http://www.example.com/pub/photos/jqpublic.gif"],
          ["bday", {}, "date", "1985-04-12"],
          ["x-bday-truncated", {}, "date", "--04-12"],
          ["x-time-local", {}, "time", "12:30:00"],
          ["x-time-offset", {}, "time", "12:30:00-08:00"],
          ["x-date-time", {}, "date-time", "2012-10-17T12:00:00"],
          ["rev", {}, "timestamp", "2013-02-14T12:30:00Z"],
          ["x-karma-points", {}, "integer", 42],
          ["x-grade", {}, "float", 1.3],
          ["x-non-smoking", {}, "boolean", true],
          ["tz", {}, "utc-offset", "-05:00"],
          ["lang", {}, "language-tag", "de"],
          ["x-complex", {}, "unknown", "http://www.example.com/test;a\\\\,b"],
          ["note", {"language": "en"}, "text", "Line one\\nline two, with a comma; and a semicolon \\\\ backslash"]
        ]]
        """

    private func json(_ text: String) throws -> JSON { try JSONReader.parse(Array(text.utf8)) }

    @Test func appendixBReadsAsTheRFC6350Example() throws {
        let cards = try JCard.decode(Self.appendixB)
        let card = try #require(cards.first)
        #expect(cards.count == 1 && card.version == .v40)
        #expect(card.first("N")?.rawValue == "Perreault;Simon;;;ing. jr,M.Sc.")
        #expect(card.first("N")?.components == ["Perreault", "Simon", "", "", "ing. jr,M.Sc."])
        #expect(card.first("BDAY")?.rawValue == "--0203")
        #expect(card.first("ANNIVERSARY")?.rawValue == "20090808T143000-0500")
        #expect(card.first("ANNIVERSARY")?.parameters == [])
        #expect(card.properties(named: "LANG").map { $0.parameter("PREF") ?? [] } == [["1"], ["2"]])
        #expect(card.first("ADR")?.components == ["", "Suite D2-630", "2875 Laurier", "Quebec", "QC", "G1V 2M2", "Canada"])
        let tel = try #require(card.first("TEL"))
        #expect(tel.parameter("VALUE") == ["uri"] && tel.types == ["WORK", "VOICE"] && tel.parameter("PREF") == ["1"])
        #expect(tel.rawValue == "tel:+1-418-656-9254;ext=102")
        #expect(card.first("TZ")?.parameter("VALUE") == ["utc-offset"] && card.first("TZ")?.rawValue == "-0500")
        #expect(card.first("GEO")?.parameter("VALUE") == nil, "uri is GEO's default type")
        // Written as vCard and read back strictly: the same card.
        let again = try parseOne(VCardWriter.write(card))
        #expect(withoutLines(again) == card)
        // And back to jCard: the appendix, value for value.
        #expect(try json(JCard.encode(card)) == json(Self.appendixB))
    }

    @Test func appendixBMatchesTheRFC6350Text() throws {
        let vcard = """
            BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Simon Perreault\r\nN:Perreault;Simon;;;ing. jr,M.Sc.\r\nBDAY:--0203\r\n\
            ANNIVERSARY:20090808T1430-0500\r\nGENDER:M\r\nLANG;PREF=1:fr\r\nLANG;PREF=2:en\r\nORG;TYPE=work:Viagenie\r\n\
            ADR;TYPE=work:;Suite D2-630;2875 Laurier;Quebec;QC;G1V 2M2;Canada\r\n\
            TEL;VALUE=uri;TYPE="work,voice";PREF=1:tel:+1-418-656-9254;ext=102\r\n\
            TEL;VALUE=uri;TYPE="work,cell,voice,video,text":tel:+1-418-262-6501\r\n\
            EMAIL;TYPE=work:simon.perreault@viagenie.ca\r\nGEO;TYPE=work:geo:46.772673,-71.282945\r\n\
            KEY;TYPE=work;VALUE=uri:http://www.viagenie.ca/simon.perreault/simon.asc\r\nTZ;VALUE=utc-offset:-0500\r\n\
            URL;TYPE=home:http://nomis80.org\r\nEND:VCARD\r\n
            """
        let card = try parseOne(vcard)
        let encoded = try json(JCard.encode(card))
        var expected = try json(Self.appendixB)
        // The RFC's jCard spells the anniversary with seconds the vCard text does not have.
        if case .array(var outer) = expected, case .array(var rows) = outer[1], case .array(var row) = rows[4] {
            row[3] = .string("2009-08-08T14:30-05:00")
            rows[4] = .array(row)
            outer[1] = .array(rows)
            expected = .array(outer)
        }
        #expect(encoded == expected)
    }

    @Test func valueTypesRoundTrip() throws {
        let card = try #require(try JCard.decode(Self.valueTypes).first)
        #expect(card.first("TEL")?.group == "contact")
        #expect(card.first("CATEGORIES")?.listValues == ["computers", "cameras"])
        #expect(card.first("BDAY")?.rawValue == "19850412" && card.first("BDAY")?.parameter("VALUE") == ["date"])
        #expect(card.first("X-BDAY-TRUNCATED")?.rawValue == "--0412")
        #expect(card.first("X-TIME-OFFSET")?.rawValue == "123000-0800")
        #expect(card.first("REV")?.rawValue == "20130214T123000Z" && card.first("REV")?.parameter("VALUE") == nil)
        #expect(card.first("X-KARMA-POINTS")?.rawValue == "42" && card.first("X-KARMA-POINTS")?.parameter("VALUE") == ["integer"])
        #expect(card.first("X-NON-SMOKING")?.rawValue == "TRUE")
        #expect(card.first("X-COMPLEX")?.rawValue == "http://www.example.com/test;a\\,b" && card.first("X-COMPLEX")?.parameter("VALUE") == nil)
        #expect(card.first("NOTE")?.text == "Line one\nline two, with a comma; and a semicolon \\ backslash")
        #expect(card.first("NOTE")?.parameter("LANGUAGE") == ["en"])
        #expect(try json(JCard.encode(card)) == json(Self.valueTypes))
        let again = try parseOne(VCardWriter.write(card))
        #expect(withoutLines(again) == card)
    }

    /// A card in canonical 4.0 form comes back from jCard property for property.
    @Test func canonicalCardRoundTripsExactly() throws {
        let card = try parseOne("""
            BEGIN:VCARD\r\nVERSION:4.0\r\nUID:urn:uuid:0c7f0d1e-4b1a-4d0e-9a51-1d2c3b4a5f60\r\nFN:Doe\\, John\r\n\
            N:Doe;John;Quincy,Q.;Dr.;\r\nNICKNAME:Johnny,J\r\nORG:ACME\\, Inc.;R&D;Lab 3\r\n\
            item1.TEL;TYPE=cell;PREF=1:+1 555 0100\r\nitem1.X-ABLABEL:_$!<Mobile>!$_\r\n\
            ADR;TYPE=home;LABEL="12 Main St\\nSpringfield":;;12 Main St;Springfield;IL;62701;USA\r\n\
            BDAY:--0315\r\nANNIVERSARY:20090808\r\nREV:20240101T120000Z\r\nKIND:individual\r\n\
            GENDER:F;she/her\r\nX-UNKNOWN;X-PARAM=a,b:raw\\,value;x\r\nNOTE:multi\\nline\r\nEND:VCARD\r\n
            """)
        let back = try #require(try JCard.decode(JCard.encode([card])).first)
        #expect(withoutLines(back) == withoutLines(card))
    }

    @Test(arguments: Corpus.isAvailable ? Corpus.validFiles : [])
    func corpusRoundTripsThroughJCard(file: String) throws {
        for card in try VCardParser.parse(Corpus.bytes(file)) {
            try checkRoundTrip(VCardConverter.addingFormattedName(VCardConverter.convert(card, to: .v40)), context: file)
        }
    }

    @Test(arguments: RealWorld.files)
    func realWorldFixturesRoundTripThroughJCard(file: String) throws {
        for card in try VCardParser.parse(RealWorld.bytes(file), mode: .lenient) {
            let v4 = VCardConverter.addingFormattedName(VCardConverter.convert(card, to: .v40))
            try checkRoundTrip(v4, context: file)
            let back = try #require(try JCard.decode(JCard.encode([v4])).first)
            #expect(back.first("FN")?.text == v4.first("FN")?.text)
            #expect(back.first("N")?.components == v4.first("N")?.components)
            #expect(back.first("NOTE")?.text == v4.first("NOTE")?.text)
        }
    }

    /// vCard 4.0 -> jCard -> vCard 4.0: the same properties (name, group, parameters other
    /// than VALUE, value by its type), and jCard -> vCard -> jCard is the identity.
    private func checkRoundTrip(_ v4: VCard, context: String) throws {
        let encoded = JCard.encode([v4])
        let back = try #require(try JCard.decode(encoded).first, "\(context)")
        #expect(JCard.encode([back]) == encoded, "\(context): jCard -> vCard -> jCard")
        let source = v4.properties.filter { $0.name != "VERSION" }
        let result = back.properties.filter { $0.name != "VERSION" }
        try #require(source.count == result.count, "\(context): \(source.map(\.name)) vs \(result.map(\.name))")
        #expect(back.properties.first?.name == "VERSION")
        for (before, after) in zip(source, result) {
            #expect(before.name == after.name && before.group == after.group, "\(context) \(before.name)")
            let names = Set(before.parameters.map(\.name) + after.parameters.map(\.name)).subtracting(["VALUE"])
            for name in names {
                #expect(before.parameter(name) == after.parameter(name), "\(context) \(before.name);\(name)")
            }
            #expect(JCardEncoding.property(before) == JCardEncoding.property(after), "\(context) \(before.name)")
            let type = before.parameter("VALUE")?.first?.lowercased() ?? JCardSchema.defaultType(before.name)
            if type == "text" {
                #expect(before.text == after.text || before.components == after.components, "\(context) \(before.name)")
            } else if !JCardSchema.dateTypes.contains(type) && type != "utc-offset" {
                #expect(before.rawValue == after.rawValue, "\(context) \(before.name) kept verbatim")
            }
        }
    }

    @Test func severalCardsAreAnArrayOfJCards() throws {
        let a = try parseOne(card("4.0", "FN:A", "UID:a"))
        let b = try parseOne(card("3.0", "N:Bee;Barbara;;;", "UID:b"))
        let text = JCard.encodeString([a, b])
        #expect(text.hasPrefix("[\n[\"vcard\""))
        let back = try JCard.decode(text)
        #expect(back.map { $0.first("FN")?.text } == ["A", "Barbara Bee"])
        #expect(try JCard.decode("[]").isEmpty)
    }

    @Test(arguments: [
        ("", "invalid JSON at byte 0"),
        ("{\"vcard\": []}", "must be a JSON array"),
        ("[\"vcard\"]", "[\"vcard\", [properties]]"),
        ("[\"vcalendar\", []]", "starts with \"vcalendar\""),
        ("[\"vcard\", {}]", "properties must be an array"),
        ("[\"vcard\", [[\"fn\", {}, \"text\"]]]", "property 1 must be [name, {parameters}, type, value"),
        ("[\"vcard\", [[\"fn\", [], \"text\", \"x\"]]]", "parameters must be an object"),
        ("[\"vcard\", [[\"fn\", {}, 3, \"x\"]]]", "value type must be a string"),
        ("[\"vcard\", [[\"f n\", {}, \"text\", \"x\"]]]", "name must be"),
        ("[\"vcard\", [[\"version\", {}, \"text\", \"3.0\"]]]", "version property says \"3.0\""),
        ("[\"vcard\", [[\"fn\", {\"type\": 1}, \"text\", \"x\"]]]", "parameter type holds a number"),
        ("[\"vcard\", [[\"fn\", {}, \"text\", null]]]", "a value is null"),
        ("[\"vcard\", [[\"fn\", {}, \"text\", \"x\"]]", "missing ']'"),
        ("[\"vcard\", [[\"fn\", {}, \"text\", \"x\\q\"]]]", "invalid escape"),
        ("[\"vcard\", []] trailing", "unexpected data after the JSON value"),
        ("[\"vcard\", [[\"fn\", {}, \"text\", \"\\ud800\"]]]", "surrogate"),
        ("[\"vcard\", [[\"x-a\", {}, \"uri\", \"a\\nb\"]]]", "control character"),
        ("[\"vcard\", [], [\"vcard\", []]]", "[\"vcard\", [properties]]"),
        (String(repeating: "[", count: 500), "nested more than 64 levels"),
    ])
    func malformedJCardIsRefusedClearly(input: String, mention: String) {
        do {
            let cards = try JCard.decode(input)
            Issue.record("accepted: \(input) -> \(cards)")
        } catch {
            #expect(error.message.contains(mention), "\(input): \(error.message)")
        }
    }
}
