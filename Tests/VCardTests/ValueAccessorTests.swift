import Testing
@testable import VCard

@Suite struct ValueAccessorTests {
    @Test func textUnescapesAndKeepsEscapedBackslashN() {
        let property = VCardProperty(name: "NOTE", rawValue: #"a\nb\Nc\,d\;e\\f\:g\\nh\x"#)
        #expect(property.text == "a\nb\nc,d;e\\f:g\\nh\\x")
    }

    @Test func componentsSplitOnlyOnUnescapedSemicolons() {
        let property = VCardProperty(name: "ADR", rawValue: #";;Main St 1\; Rear\, left;Town;;12345;Land\\"#)
        #expect(property.components == ["", "", "Main St 1; Rear, left", "Town", "", "12345", "Land\\"])
    }

    @Test func listValuesSplitOnlyOnUnescapedCommas() {
        let property = VCardProperty(name: "CATEGORIES", rawValue: #"Family,Hiking\, Club,a\\,b"#)
        #expect(property.listValues == ["Family", "Hiking, Club", "a\\", "b"])
    }

    @Test func parameterMergesOccurrencesAndNilWhenAbsent() {
        let property = VCardProperty(name: "TEL", parameters: [
            VCardParameter(name: "type", values: ["home,voice"]),
            VCardParameter(name: "TYPE", values: ["pref"]),
        ], rawValue: "1")
        #expect(property.parameter("Type") == ["home", "voice", "pref"])
        #expect(property.types == ["HOME", "VOICE", "PREF"])
        #expect(property.parameter("PREF") == nil)
    }

    @Test func buildersEscapePerValueType() {
        #expect(VCardProperty(name: "NOTE", text: "a,b;c\\d\ne").rawValue == #"a\,b\;c\\d\ne"#)
        #expect(VCardProperty(name: "N", components: ["Doe; Jr", "Ann, Marie", ""]).rawValue == #"Doe\; Jr;Ann\, Marie;"#)
        #expect(VCardProperty(name: "CATEGORIES", list: ["a,b", "c"]).rawValue == #"a\,b,c"#)
        #expect(VCardProperty(name: "URL", uri: "https://x.example/a,b;c").rawValue == "https://x.example/a,b;c")
    }

    @Test func buildersRoundTripThroughAccessors() {
        let parts = ["Weiß; Hinterhaus", "a\\nb", "line\nbreak", "", "x,y"]
        #expect(VCardProperty(name: "ADR", components: parts).components == parts)
        #expect(VCardProperty(name: "CATEGORIES", list: parts).listValues == parts)
        #expect(VCardProperty(name: "NOTE", text: parts.joined()).text == parts.joined())
    }

    @Test func inlineDataDecodesDataURIAndBase64Photos() {
        let uri = VCardProperty(name: "PHOTO", rawValue: "data:image/png;base64,iVBORw0KGgo=")
        #expect(uri.inlineData == VCardInlineData(mediaType: "image/png", bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        let v3 = VCardProperty(name: "PHOTO", parameters: [
            VCardParameter(name: "ENCODING", values: ["b"]), VCardParameter(name: "TYPE", values: ["JPEG"]),
        ], rawValue: "/9j/")
        #expect(v3.inlineData == VCardInlineData(mediaType: "image/jpeg", bytes: [0xFF, 0xD8, 0xFF]))
        #expect(VCardProperty(name: "PHOTO", rawValue: "https://x.example/p.jpg").inlineData == nil)
        #expect(VCardProperty(name: "PHOTO", rawValue: "data:,a%20b").inlineData == VCardInlineData(mediaType: nil, bytes: Array("a b".utf8)))
    }

    @Test func base64RoundTrips() {
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        #expect(Base64.encode(Array("Man".utf8)) == "TWFu")
        #expect(Base64.decode("TW\r\n Fu") == Array("Man".utf8))
        #expect(Base64.decode("T*Fu") == nil)
    }
}

@Suite struct ParameterValueTests {
    @Test func parameterValuesKeepQuotedCommasWhole() throws {
        let adr = try #require(try parseOne(card("4.0", #"ADR;LABEL="Main St 1, Town";TYPE=home,work:;;;;;;"#)).first("ADR"))
        #expect(adr.parameterValues("label") == ["Main St 1, Town"])
        #expect(adr.parameterValues("TYPE") == ["home", "work"])
        #expect(adr.parameter("LABEL") == ["Main St 1", " Town"])
        #expect(adr.parameterValues("PREF") == nil)
    }
}
