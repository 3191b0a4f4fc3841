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
}
