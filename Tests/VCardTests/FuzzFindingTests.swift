import Foundation
import Testing
import VCard

/// One test per finding of the libFuzzer targets (Fuzz/RoloFuzz, Docs/testing.md), each
/// with the input shrunk to what shows it, so the fix stays fixed.
@Suite struct FuzzFindingTests {
    static func parse(_ text: String, _ mode: VCardParseMode) throws -> [VCard] {
        try VCardParser.parse(Array(text.utf8), mode: mode)
    }

    /// The properties as (group, name, parameters, value): line numbers aside.
    static func content(_ cards: [VCard]) -> [[String]] {
        cards.map { card in
            card.properties.map { "\($0.group ?? "").\($0.name) \($0.parameters.map { "\($0.name)=\($0.values)" }) \($0.rawValue)" }
        }
    }

    /// `vcard` target: a parameter list folded before its `:` is a property. Lenient
    /// reading took its first line, which has no `:`, for an unindented continuation and
    /// glued the whole property onto the value before it.
    @Test func propertyFoldedBeforeItsColonIsNotAContinuation() throws {
        let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:A\r\nADR;TYPE=HOME:;;Street 1;Town;;;\r\n"
            + "PHOTO;ENCODING=b;TYPE=JPEG\r\n :AAAA\r\nNOTE;LANGUAGE=en;\r\n X-A=b\r\n\t:text\r\nEND:VCARD\r\n"
        let strict = try Self.parse(text, .strict)
        #expect(strict[0].properties.map(\.name) == ["VERSION", "FN", "ADR", "PHOTO", "NOTE"])
        #expect(Self.content(try Self.parse(text, .lenient)) == Self.content(strict))
        // An unindented line that is no property still continues the value.
        let continued = try Self.parse("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:A\r\nNOTE:one\r\ntwo; three\r\nEND:VCARD\r\n", .lenient)
        #expect(continued[0].first("NOTE")?.text == "one\ntwo; three")
    }

    /// `jcard` target: a parameter name that is no token (`LANG;\u{FF}REF=2`) was read, then
    /// written as a jCard that jCard reading refuses. Strict reading now refuses it like a
    /// bad property name; lenient reading trims spaces around it and drops what is left.
    @Test func parameterNamesAreTokens() throws {
        let bad: [UInt8] = Array("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:A\r\nLANG;".utf8) + [0xFF]
            + Array("REF=2;TYPE=work:en\r\nTEL; TYPE =cell:1\r\nEND:VCARD\r\n".utf8)
        #expect(throws: VCardError.self) { try VCardParser.parse(bad, mode: .strict) }
        do {
            _ = try VCardParser.parse(bad, mode: .strict)
        } catch {
            #expect(error.message.contains("invalid parameter name") && error.line == 4)
        }
        let card = try #require(try VCardParser.parse(bad, mode: .lenient).first)
        #expect(card.first("LANG")?.parameters == [VCardParameter(name: "TYPE", values: ["work"])])
        #expect(card.first("TEL")?.parameters == [VCardParameter(name: "TYPE", values: ["cell"])])
        let back = try JCard.decode(JCard.encode([card]))
        #expect(back.first?.properties.map(\.parameters) == card.properties.map(\.parameters))
        // Bare 2.1 tokens are values, not names, and stay as they were.
        let v21 = try VCardParser.parse("BEGIN:VCARD\r\nVERSION:2.1\r\nN:A;B\r\nTEL;CELL;X-ODD*TOKEN:1\r\nEND:VCARD\r\n", mode: .strict)
        #expect(v21[0].first("TEL")?.types == ["CELL", "X-ODD*TOKEN"])
    }

    /// `vcard` target: the 2.1 base64-block and quoted-printable soft-break rules looked
    /// for BASE64 or QUOTED-PRINTABLE anywhere before the `:`, so a property named
    /// X-BASE64 (or a value such as `X-A=QUOTED-PRINTABLE-LIKE`) glued the next line onto
    /// its value, and a base64 block swallowed a property whose `:` was on a folded line.
    @Test func transferEncodingsAreReadFromTheParametersOnly() throws {
        let named = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:A\r\nX-BASE64:\r\nN;X-LONG=aaaaaaaaaaaa\r\n :Doe;John;;;\r\n"
            + "NOTE;X-MODE=QUOTED-PRINTABLE-LIKE:ends with=\r\nTEL:1\r\nEND:VCARD\r\n"
        for mode in [VCardParseMode.strict, .lenient] {
            let card = try #require(try Self.parse(named, mode).first)
            #expect(card.properties.map(\.name) == ["VERSION", "FN", "X-BASE64", "N", "NOTE", "TEL"], "\(mode)")
            #expect(card.first("X-BASE64")?.rawValue == "" && card.first("NOTE")?.rawValue == "ends with=")
        }
        // The 2.1 shapes still join: a BASE64 block (bare or ENCODING=) up to a blank line
        // or the next property, and a quoted-printable soft break.
        let v21 = "BEGIN:VCARD\r\nVERSION:2.1\r\nN:A;B\r\nPHOTO;TYPE=JPEG;ENCODING=BASE64:AAAA\r\nBBBB\r\n\r\n"
            + "LOGO;BASE64:CCCC\r\nDDDD\r\nNOTE;X-A=1\r\n :text\r\n"
            + "TITLE;ENCODING=QUOTED-PRINTABLE:one=\r\ntwo\r\nEND:VCARD\r\n"
        let card = try #require(try Self.parse(v21, .strict).first)
        #expect(card.first("PHOTO")?.rawValue == "AAAABBBB")
        #expect(card.first("LOGO")?.rawValue == "CCCCDDDD")
        #expect(card.first("NOTE")?.rawValue == "text")
        #expect(card.first("TITLE")?.rawValue == "onetwo")
    }

    /// `jcard` target: turning jCard's extended dates into vCard's basic ones dropped
    /// every `:` of any date-typed value, so a BDAY of free text lost characters on the
    /// way through jCard. Only values in a date or time form are converted now.
    @Test func jCardConvertsOnlyRealDates() throws {
        let text = "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:A\r\nBDAY:circa 1970: spring\r\n"
            + "ANNIVERSARY:20090808T1430-0500\r\nDEATHDATE:--0203\r\nX-T;VALUE=time:-0530Z\r\n"
            + "REV:20240105T101512Z\r\nTZ;VALUE=utc-offset:-0500\r\nX-OFF;VALUE=utc-offset:UTC+1:30\r\nEND:VCARD\r\n"
        let card = try #require(try Self.parse(text, .strict).first)
        let json = JCard.encode(card)
        for fragment in ["\"circa 1970: spring\"", "\"2009-08-08T14:30-05:00\"", "\"--02-03\"", "\"-05:30Z\"",
                         "\"2024-01-05T10:15:12Z\"", "\"-05:00\"", "\"UTC+1:30\""] {
            #expect(json.contains(fragment), "\(fragment) in \(json)")
        }
        let back = try #require(try JCard.decode(json).first)
        #expect(back.properties.map(\.rawValue) == card.properties.map(\.rawValue))
    }

    /// `vcard` target: a VERSION line with a group or parameters kept them, but the writer
    /// prints `VERSION:x`, so writing and reading back changed the card.
    @Test func versionIsReadWithoutGroupOrParameters() throws {
        let text = "BEGIN:VCARD\r\nitem1.VERSION;TYPE=x;X-A=\"b\":3.0\r\nFN:A\r\nN:A;;;;\r\nEND:VCARD\r\n"
        for mode in [VCardParseMode.strict, .lenient] {
            let card = try #require(try Self.parse(text, mode).first)
            let version = try #require(card.first("VERSION"))
            #expect(version.group == nil && version.parameters.isEmpty && version.rawValue == "3.0" && version.line == 2)
            #expect(Self.content(try Self.parse(VCardWriter.write(card), .strict)) == Self.content([card]))
        }
    }

    /// `jcard` target: a jCard version row with another value type (or a group) became a
    /// VERSION with parameters, which the writer does not print.
    @Test func jCardVersionHasNoParameters() throws {
        let card = try #require(try JCard.decode(#"["vcard",[["version",{"group":"g","x":"y"},"t","4.0"],["fn",{},"text","A"]]]"#).first)
        let version = try #require(card.first("VERSION"))
        #expect(version.group == nil && version.parameters.isEmpty && version.rawValue == "4.0")
        #expect(Self.content(try Self.parse(VCardWriter.write(card), .strict)) == Self.content([card]))
    }

    /// `convert` target: a 3.0 LABEL became the 4.0 ADR's LABEL parameter with its line
    /// breaks escaped but not its backslashes, so `C:\new` came back from 4.0 with a line
    /// break in it.
    @Test func addressLabelKeepsItsBackslashes() throws {
        let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:A\r\nN:A;;;;\r\nADR;TYPE=WORK:;;1 Main St;Town;;;\r\n"
            + "LABEL;TYPE=WORK:C:\\\\new folder\\n1 Main St\r\nEND:VCARD\r\n"
        let v30 = try #require(try Self.parse(text, .strict).first)
        #expect(v30.first("LABEL")?.text == "C:\\new folder\n1 Main St")
        let v40 = VCardConverter.convert(v30, to: .v40)
        let label = try #require(v40.first("ADR")?.parameterValues("LABEL")?.first)
        #expect(VCardEscaping.unescape(label[...]) == "C:\\new folder\n1 Main St")
        let back = VCardConverter.convert(v40, to: .v30)
        #expect(back.first("LABEL")?.text == "C:\\new folder\n1 Main St")
    }

    /// `jcard` target: `VALUE=` (empty) became jCard's value type "", which jCard reading
    /// refuses; an empty VALUE names no type, so the default is written.
    @Test func emptyValueParameterIsNoType() throws {
        let card = try #require(try Self.parse("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:A\r\nNOTE;VALUE=:x\r\nEND:VCARD\r\n", .strict).first)
        let json = JCard.encode(card)
        #expect(json.contains(#"["note", {}, "text", "x"]"#))
        #expect(try JCard.decode(json).first?.first("NOTE")?.rawValue == "x")
    }
}


extension FuzzFindingTests {
    /// `convert` target: an empty (or partial) X-APPLE-OMIT-YEAR matched every year, so a
    /// 3.0 `BDAY;X-APPLE-OMIT-YEAR=:1604-05-06` lost its year in 4.0. Only a value that
    /// names exactly the date's year leaves the year out.
    @Test func appleOmitYearMustNameTheYear() throws {
        let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:A\r\nBDAY;X-APPLE-OMIT-YEAR=:1604-05-06\r\n"
            + "ANNIVERSARY;X-APPLE-OMIT-YEAR=1:1985-05-06\r\nX-ABDATE;X-APPLE-OMIT-YEAR=1604:1604-09-01\r\n"
            + "DEATHDATE;X-APPLE-OMIT-YEAR=1604:16041231\r\nEND:VCARD\r\n"
        let v30 = try #require(try Self.parse(text, .strict).first)
        let v40 = VCardConverter.convert(v30, to: .v40)
        #expect(v40.first("BDAY")?.rawValue == "16040506")
        #expect(v40.first("ANNIVERSARY")?.rawValue == "19850506")
        // Apple's year-less dates still lose their placeholder year, extended or basic.
        #expect(v40.first("X-ABDATE")?.rawValue == "--0901" && v40.first("X-ABDATE")?.parameter("X-APPLE-OMIT-YEAR") == nil)
        #expect(v40.first("DEATHDATE")?.rawValue == "--1231")
        let back = VCardConverter.convert(v40, to: .v30)
        #expect(back.first("BDAY")?.rawValue == "1604-05-06")
        #expect(back.properties(named: "X-ABDATE").map(\.rawValue).contains("1985-05-06"))
    }

    /// `convert` target: `data:base64,…` has no `;base64` marker (RFC 2397): its media
    /// type is "base64" and its data is not base64. It was taken for base64, written as a
    /// 3.0 `ENCODING=b` photo and came back as `data:;base64,…`.
    @Test func dataURINeedsTheBase64Marker() throws {
        let text = "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:A\r\nPHOTO:data:bAse64,\r\nLOGO:data:;BASE64,AAAA\r\nEND:VCARD\r\n"
        let v40 = try #require(try Self.parse(text, .strict).first)
        #expect(v40.first("PHOTO")?.inlineData == VCardInlineData(mediaType: "base64", bytes: []))
        #expect(v40.first("LOGO")?.inlineData == VCardInlineData(mediaType: nil, bytes: [0, 0, 0]))
        let v30 = VCardConverter.convert(v40, to: .v30)
        #expect(v30.first("PHOTO")?.rawValue == "data:bAse64,")
        #expect(v30.first("PHOTO")?.parameter("VALUE") == ["uri"])
        #expect(v30.first("LOGO")?.rawValue == "AAAA" && v30.first("LOGO")?.parameter("ENCODING") == ["b"])
        let back = VCardConverter.convert(v30, to: .v40)
        #expect(back.first("PHOTO")?.rawValue == "data:bAse64,")
        #expect(back.first("LOGO")?.rawValue == "data:;base64,AAAA")
    }

    /// `convert` target: a 4.0 `data:…;base64,` URI whose data is no base64 (a backslash and
    /// spaces in it) was taken out of the URI into a 3.0 `ENCODING=b` value with its spaces
    /// dropped, and came back with other characters: it now stays a URI (`VALUE=uri`), byte
    /// for byte.
    @Test func dataURIWithoutBase64DataStaysAURI() throws {
        let uri = #"data:image/jpeg;base64,/9j/4AAQ r\ \n; Hinterhaus"#
        let text = "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:A\r\nPHOTO:\(uri)\r\nLOGO:data:image/png;base64,iVBO Rw0K==\r\nEND:VCARD\r\n"
        let v40 = try #require(try Self.parse(text, .strict).first)
        let v30 = VCardConverter.convert(v40, to: .v30)
        #expect(v30.first("PHOTO")?.rawValue == uri)
        #expect(v30.first("PHOTO")?.parameter("VALUE") == ["uri"])
        #expect(v30.first("PHOTO")?.parameter("ENCODING") == nil)
        // Real base64 (spaces allowed) still becomes a 3.0 inline value.
        #expect(v30.first("LOGO")?.parameter("ENCODING") == ["b"])
        let back = VCardConverter.convert(v30, to: .v40)
        #expect(back.first("PHOTO")?.rawValue == uri)
        #expect(back.first("LOGO")?.rawValue == "data:image/png;base64,iVBORw0K==")
    }

    @Test func base64IsEncodedAcceptsOnlyBase64() {
        #expect(Base64.isEncoded("iVBO Rw0K\r\n=="))
        #expect(Base64.isEncoded("a-b_"))
        #expect(Base64.isEncoded(""))
        #expect(!Base64.isEncoded("ab\\n"))
        #expect(!Base64.isEncoded("ab==cd"))
        #expect(!Base64.isEncoded("ab;cd"))
    }

    /// `convert` target: 4.0 -> 3.0 dropped KIND:org whenever the card had any X-ABShowAs
    /// (PERSON too), so the org was lost; and `organization`, which is no kind RFC 6350
    /// defines, became X-ABShowAs:COMPANY and came back as `org`.
    @Test func kindOrgIsKeptBesideAnotherShowAs() throws {
        let text = "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:A\r\nKIND:org\r\nX-ABSHOWAS:PERSON\r\nEND:VCARD\r\n"
        let v40 = try #require(try Self.parse(text, .strict).first)
        let v30 = VCardConverter.convert(v40, to: .v30)
        #expect(v30.properties(named: "X-ABSHOWAS").map(\.rawValue) == ["COMPANY", "PERSON"])
        #expect(VCardConverter.convert(v30, to: .v40).first("KIND")?.rawValue == "org")
        // An X-ABShowAs:COMPANY already says it: no second one.
        let company = try #require(try Self.parse(text.replacingOccurrences(of: "PERSON", with: "Company"), .strict).first)
        #expect(VCardConverter.convert(company, to: .v30).properties(named: "X-ABSHOWAS").map(\.rawValue) == ["Company"])

        let other = try #require(try Self.parse(text.replacingOccurrences(of: "KIND:org", with: "KIND:organization"), .strict).first)
        let otherV30 = VCardConverter.convert(other, to: .v30)
        #expect(otherV30.first("X-ADDRESSBOOKSERVER-KIND")?.rawValue == "organization")
        #expect(VCardConverter.convert(otherV30, to: .v40).first("KIND")?.rawValue == "organization")
    }
}
