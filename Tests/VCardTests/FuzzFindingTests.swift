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
}
