import Testing
@testable import VCard

@Suite struct WriterTests {
    private func physicalLines(_ text: String) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A {
                lines.append(current)
                current = []
                index += 2
                continue
            }
            current.append(bytes[index])
            index += 1
        }
        #expect(current.isEmpty, "output must end with CRLF")
        return lines
    }

    @Test func writesCRLFUpperCaseNamesAndVersionFirst() {
        let card = VCard(version: .v40, properties: [
            VCardProperty(group: "item1", name: "tel", parameters: [VCardParameter(name: "type", values: ["cell"])], rawValue: "+1"),
        ])
        #expect(VCardWriter.write(card) == "BEGIN:VCARD\r\nVERSION:4.0\r\nitem1.TEL;TYPE=cell:+1\r\nEND:VCARD\r\n")
    }

    @Test func versionPropertyFollowsTheCardVersion() {
        let card = VCard(version: .v30, properties: [VCardProperty(name: "FN", rawValue: "A"), VCardProperty(name: "VERSION", rawValue: "4.0")])
        #expect(VCardWriter.write(card) == "BEGIN:VCARD\r\nFN:A\r\nVERSION:3.0\r\nEND:VCARD\r\n")
    }

    @Test func foldsAt75OctetsWithoutSplittingUTF8() throws {
        let value = String(repeating: "aé😀中", count: 40)
        let text = VCardWriter.write(VCard(version: .v40, properties: [VCardProperty(name: "NOTE", text: value)]))
        let lines = physicalLines(text)
        #expect(lines.count > 5)
        for line in lines {
            #expect(line.count <= 75)
            #expect(String(validating: line, as: UTF8.self) != nil)
        }
        #expect(lines.dropFirst(3).dropLast().allSatisfy { $0.first == 0x20 })
        #expect(try parseOne(text).first("NOTE")?.text == value)
    }

    @Test func quotesAndCaretEncodesParameterValues() throws {
        let property = VCardProperty(name: "ADR", parameters: [
            VCardParameter(name: "LABEL", values: ["a: b; c, \"d\" ^\ne"]),
            VCardParameter(name: "TYPE", values: ["home", "pref"]),
        ], rawValue: ";;x;;;;")
        let text = VCardWriter.write(VCard(version: .v40, properties: [property]))
        #expect(text.contains(#"ADR;LABEL="a: b; c, ^'d^' ^^^ne";TYPE=home,pref:;;x;;;;"#))
        #expect(try parseOne(text).first("ADR")?.parameters == property.parameters)
    }

    @Test func newlinesInValuesAreWrittenEscaped() {
        let card = VCard(version: .v30, properties: [VCardProperty(name: "NOTE", rawValue: "a\r\nb\nc")])
        #expect(VCardWriter.write(card).contains("NOTE:a\\nb\\nc\r\n"))
    }

    @Test func unknownPropertiesAndParametersSurviveParseWriteParse() throws {
        let original = try parseOne(card(
            "3.0", "FN:A", "x-custom-thing;x-param=Mixed;X-Q=\"a:b\":Keep; me\\, please", "item7.X-ABADR:se",
            "X-EVOLUTION-E164;X=612345678,\"+33\":1"))
        let again = try parseOne(VCardWriter.write(original))
        #expect(withoutLines(again) == withoutLines(original))
    }

    @Test func writingIsDeterministic() throws {
        let parsed = try parseOne(ClientShapes.crlf(ClientShapes.appleV3))
        #expect(VCardWriter.write(parsed) == VCardWriter.write(parsed))
        #expect(VCardWriter.write([parsed, parsed]) == VCardWriter.write(parsed) + VCardWriter.write(parsed))
    }

    @Test func version21CardsAreWrittenAs30() throws {
        let parsed = try parseOne(ClientShapes.crlf(ClientShapes.outlook21))
        let text = VCardWriter.write(parsed)
        #expect(text.contains("VERSION:3.0\r\n"))
        #expect(!text.contains("QUOTED-PRINTABLE"))
        #expect(try parseOne(text).version == .v30)
    }
}
