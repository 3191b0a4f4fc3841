import Testing
@testable import DAVXML

private let dav = XMLNamespace.dav
private let carddav = XMLNamespace.carddav

@Suite struct XMLWriterTests {
    @Test func declaresStandardPrefixesOnTheRootOnly() {
        var writer = XMLWriter(declaration: false)
        writer.element(dav, "multistatus") { $0.empty(carddav, "address-data") }
        #expect(writer.string == #"<d:multistatus xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cs="http://calendarserver.org/ns/"><card:address-data/></d:multistatus>"#)
    }

    @Test func generatesPrefixesForOtherNamespacesScopedToTheirElement() throws {
        var writer = XMLWriter()
        writer.element(dav, "prop") { writer in
            writer.element("urn:a", "one") { $0.empty("urn:a", "nested") }
            writer.empty("urn:b", "two")
            writer.empty("urn:a", "three")
        }
        let text = writer.string
        #expect(text.hasPrefix(#"<?xml version="1.0" encoding="utf-8"?>"#))
        #expect(text.contains(#"<x0:one xmlns:x0="urn:a"><x0:nested/></x0:one>"#))
        let root = try XMLDocumentParser.parse(writer.bytes)
        #expect(root.children.map(\.clarkName) == ["{urn:a}one", "{urn:b}two", "{urn:a}three"])
        #expect(root.children[0].children.first?.clarkName == "{urn:a}nested")
    }

    /// Writes the same nested document, handing the bytes over after every step when `chunked`.
    private static func document(chunked: Bool) -> [UInt8] {
        var writer = XMLWriter()
        var taken: [UInt8] = []
        func step(_ body: (inout XMLWriter) -> Void) {
            body(&writer)
            if chunked {
                taken += writer.bytes
                writer.discardBytes()
            }
        }
        step { $0.start(dav, "multistatus") }
        step { $0.start(dav, "response") }
        step { $0.start("urn:x", "custom") }
        step { $0.text("a < b") }
        step { $0.end() }
        step { $0.element(dav, "href", text: "/dav/x") }
        step { $0.end() }
        step { $0.start(carddav, "address-data") }
        step { $0.end() }
        writer.end()
        return taken + writer.bytes
    }

    @Test func bytesTakenMidDocumentJoinToTheSameDocumentAndEndTagsStillClose() throws {
        let whole = Self.document(chunked: false)
        #expect(Self.document(chunked: true) == whole)
        let root = try XMLDocumentParser.parse(whole)
        #expect(root.children.map(\.clarkName) == ["{DAV:}response", "{urn:ietf:params:xml:ns:carddav}address-data"])
    }

    @Test func escapesTextAndAttributes() throws {
        var writer = XMLWriter(declaration: false, rootPrefixes: [])
        writer.start("", "r", attributes: [XMLAttribute(name: "v", value: "a\"b<c>&\td\ne")])
        writer.text("x < y && z > \"w\" \r\u{01}")
        writer.end()
        #expect(writer.string == "<r v=\"a&quot;b&lt;c&gt;&amp;&#9;d&#10;e\">x &lt; y &amp;&amp; z &gt; \"w\" &#13;\u{FFFD}</r>")
        let parsed = try XMLDocumentParser.parse(writer.bytes)
        #expect(parsed.attribute("v") == "a\"b<c>&\td\ne")
        #expect(parsed.text == "x < y && z > \"w\" \r\u{FFFD}")
    }

    @Test func writesEmptyElementsSelfClosedAndUnnamespacedWithoutPrefix() {
        var writer = XMLWriter(declaration: false, rootPrefixes: [])
        writer.element("", "a") { $0.empty("", "b"); $0.element("", "c", text: "") }
        #expect(writer.string == "<a><b/><c/></a>")
        #expect(writer.isComplete)
    }

    @Test func writesAMultistatusWithPropstatsAndStatuses() throws {
        let bytes = XMLWriter.multistatus { writer in
            writer.response(href: "/dav/alice/default/a%20b.vcf") { writer in
                writer.propstat(status: 200) { $0.element(dav, "getetag", text: "\"e1\"") }
                writer.propstat(status: 404, names: [(carddav, "max-resource-size")])
            }
            writer.response(href: "/dav/alice/default/gone.vcf", status: 404)
            writer.element(dav, "sync-token", text: "http://rolo.invalid/sync/1/2")
        }
        let root = try XMLDocumentParser.parse(bytes)
        #expect(root.clarkName == "{DAV:}multistatus")
        let responses = root.children(dav, "response")
        #expect(responses.count == 2)
        #expect(responses[0].child(dav, "href")?.text == "/dav/alice/default/a%20b.vcf")
        let propstats = responses[0].children(dav, "propstat")
        #expect(propstats.map { $0.child(dav, "status")?.text } == ["HTTP/1.1 200 OK", "HTTP/1.1 404 Not Found"])
        #expect(propstats[0].child(dav, "prop")?.child(dav, "getetag")?.text == "\"e1\"")
        #expect(propstats[1].child(dav, "prop")?.child(carddav, "max-resource-size") != nil)
        #expect(responses[1].child(dav, "status")?.text == "HTTP/1.1 404 Not Found")
        #expect(root.child(dav, "sync-token")?.text == "http://rolo.invalid/sync/1/2")
    }

    @Test func writesPreconditionErrorBodies() throws {
        let plain = try XMLDocumentParser.parse(XMLWriter.errorBody(dav, "valid-sync-token"))
        #expect(plain.clarkName == "{DAV:}error")
        #expect(plain.children.map(\.clarkName) == ["{DAV:}valid-sync-token"])

        let conflict = try XMLDocumentParser.parse(XMLWriter.errorBody(carddav, "no-uid-conflict", href: "/dav/a/b/x.vcf"))
        let condition = try #require(conflict.child(carddav, "no-uid-conflict"))
        #expect(condition.child(dav, "href")?.text == "/dav/a/b/x.vcf")
    }

    @Test func statusLinesCarryReasonPhrases() {
        #expect(XMLWriter.statusLine(207) == "HTTP/1.1 207 Multi-Status")
        #expect(XMLWriter.statusLine(424) == "HTTP/1.1 424 Failed Dependency")
        #expect(XMLWriter.statusLine(507) == "HTTP/1.1 507 Insufficient Storage")
    }

    @Test func deadPropertyRoundTripsThroughInnerXML() throws {
        let request = try XMLDocumentParser.parse("""
            <D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:example:z" xmlns="urn:example:default">
              <D:set><D:prop>
                <Z:color Z:scheme="rgb" plain="yes">red &amp; <![CDATA[<blue>]]></Z:color>
                <Z:authors><Z:author>Ann</Z:author><author>Default NS</author><D:href>/x</D:href></Z:authors>
              </D:prop></D:set>
            </D:propertyupdate>
            """)
        let props = try #require(request.child(dav, "set")?.child(dav, "prop")?.children)
        for property in props {
            // Store as the engine does, then replay inside a multistatus prop.
            let stored = property.innerXML
            let bytes = XMLWriter.multistatus { writer in
                writer.response(href: "/r") { writer in
                    writer.propstat(status: 200) { $0.deadProperty(property.namespace, property.name, innerXML: stored) }
                }
            }
            let replayed = try XMLDocumentParser.parse(bytes)
                .child(dav, "response")?.child(dav, "propstat")?.child(dav, "prop")?.children.first
            var expected = property
            expected.attributes = [] // attributes of the property element itself are not part of its value
            #expect(replayed == expected)
        }
    }

    @Test func xmlStringIsASelfContainedFragment() throws {
        let element = XMLElement(namespace: "urn:z", name: "a", attributes: [XMLAttribute(namespace: "urn:q", name: "k", value: "v")],
                                 children: [XMLElement(namespace: dav, name: "href", text: "/p&q")], text: "")
        let text = element.xmlString
        #expect(try XMLDocumentParser.parse(Array(text.utf8)) == element)
        #expect(text.contains("<d:href"))
    }

    /// A multistatus of 10,000 responses comes out whole and well formed. (Its speed is
    /// `RoloBench xml`'s to measure: a wall-clock bound here failed a loaded CI run.)
    @Test func writesALargeMultistatusWhole() throws {
        let bytes = XMLWriter.multistatus { writer in
            for index in 0..<10_000 {
                writer.response(href: "/dav/alice/default/card-\(index).vcf") { writer in
                    writer.propstat(status: 200) { writer in
                        writer.element(dav, "getetag", text: "\"etag-\(index)\"")
                        writer.element(carddav, "address-data", text: "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Person \(index) <p@example.com>\r\nEND:VCARD\r\n")
                    }
                }
            }
        }
        #expect(bytes.count > 1_000_000)
        let parsed = try XMLDocumentParser.parse(Array(bytes))
        #expect(parsed.name == "multistatus")
        #expect(parsed.children.count == 10_000)
        #expect(parsed.children.last?.children.first?.text == "/dav/alice/default/card-9999.vcf")
    }

    // MARK: text(utf8:), the one-pass writer of stored card bytes

    private func textElement(utf8 bytes: [UInt8]) -> (String, XMLElement?) {
        var writer = XMLWriter(declaration: false, rootPrefixes: [])
        writer.element("", "t") { $0.text(utf8: bytes) }
        return (writer.string, try? XMLDocumentParser.parse(writer.bytes))
    }

    @Test func utf8TextEscapesCDATAEndAndMarkup() {
        let (text, parsed) = textElement(utf8: Array("a ]]> b <c> & d".utf8))
        #expect(text == "<t>a ]]&gt; b &lt;c&gt; &amp; d</t>")
        #expect(parsed?.text == "a ]]> b <c> & d")
    }

    @Test func utf8TextKeepsCRLFThroughAParser() {
        let card = "BEGIN:VCARD\r\nFN:Ann\r\n folded\r\nEND:VCARD\r\n"
        let (text, parsed) = textElement(utf8: Array(card.utf8))
        #expect(text.contains("BEGIN:VCARD&#13;\nFN:Ann&#13;\n folded"))
        #expect(parsed?.text == card)
    }

    /// CR LF is written in one step (`Packed.carriageReturnLineFeed`); a CR alone, a CR
    /// last in the value, CR CR LF and LF CR keep the same references.
    @Test func carriageReturnsWithAndWithoutLineFeeds() {
        for value in ["a\r", "\r", "\r\r\n", "\n\r", "a\rb\r\nc\r\n", "12345678\r\n12345678\r"] {
            let bytes = Array(value.utf8)
            var writer = XMLWriter(declaration: false, rootPrefixes: [])
            writer.text(utf8: bytes)
            #expect(writer.bytes == Self.referenceEscape(bytes, attribute: false), "\(bytes)")
            let (_, parsed) = textElement(utf8: bytes)
            #expect(parsed?.text == value, "\(bytes)")
        }
    }

    @Test func utf8TextCopiesNonASCIIUnchanged() {
        let value = "FN:Élodie 山田 Αλέξανδρος محمد 😀"
        let (text, parsed) = textElement(utf8: Array(value.utf8))
        #expect(text == "<t>\(value)</t>")
        #expect(parsed?.text == value)
    }

    @Test func utf8TextReplacesControlCharactersButKeepsTabAndNewline() {
        let (text, parsed) = textElement(utf8: [0x61, 0x00, 0x62, 0x1B, 0x63, 0x09, 0x0A, 0x7F])
        #expect(text == "<t>a\u{FFFD}b\u{FFFD}c\t\n\u{7F}</t>")
        #expect(parsed?.text == "a\u{FFFD}b\u{FFFD}c\t\n\u{7F}")
    }

    @Test func utf8TextReplacesInvalidUTF8AndNonCharactersSoOutputStaysWellFormed() {
        // A lone continuation byte, a truncated 3-byte sequence, an overlong "/", a UTF-16
        // surrogate, U+FFFE, and a lead byte at the very end.
        let bytes: [UInt8] = [0x41, 0x80, 0x42, 0xE6, 0x97, 0x43, 0xC0, 0xAF, 0xED, 0xA0, 0x80, 0xEF, 0xBF, 0xBE, 0xF0]
        let (text, parsed) = textElement(utf8: bytes)
        let replacement = "\u{FFFD}"
        #expect(parsed != nil)
        #expect(text.hasPrefix("<t>A\(replacement)B"))
        #expect(parsed?.text.hasPrefix("A\(replacement)B\(replacement)") == true)
        #expect(parsed?.text.contains("C") == true)
        #expect(parsed?.text.unicodeScalars.contains { $0.value == 0xFFFE || (0xD800...0xDFFF).contains($0.value) } == false)
    }

    @Test func utf8TextOfNonContiguousBytesMatchesArrayBytes() {
        let value = "x < y ]]> ü\r\n"
        var fromSequence = XMLWriter(declaration: false, rootPrefixes: [])
        fromSequence.element("", "t") { $0.text(utf8: value.utf8.lazy.map { $0 }) }
        #expect(fromSequence.string == textElement(utf8: Array(value.utf8)).0)
    }

    /// The escaper skips plain bytes eight at a time; a reference that looks at every byte
    /// must give the same output for any mix of plain ASCII, markup, control characters,
    /// valid and broken UTF-8, wherever they fall within or across the eight-byte words.
    @Test func wordAtATimeEscapingAgreesWithAByteByByteReferenceAtEveryOffset() {
        var generator = SplitMix64(state: 6)
        let pieces: [[UInt8]] = [
            Array("plain ascii text ".utf8), [0x26], [0x3C], [0x3E], [0x22], [0x27], [0x0D, 0x0A], [0x09], [0x0A], [0x00], [0x1F],
            [0x7F], [0x3D], [0x3F], [0xBE], Array("é".utf8), Array("山".utf8), Array("😀".utf8), [0xEF, 0xBF, 0xBE],
            [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xE6, 0x97], [0x80], [0xF0], [0xFF],
        ]
        for _ in 0..<2_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                bytes += Bool.random(using: &generator) ? Array("abcdefgh".utf8) : pieces.randomElement(using: &generator)!
            }
            let offset = Int.random(in: 0...min(7, bytes.count), using: &generator)
            let slice = bytes[offset...]
            var writer = XMLWriter(declaration: false, rootPrefixes: [])
            writer.text(utf8: slice)
            #expect(writer.bytes == Self.referenceEscape(Array(slice), attribute: false), "\(Array(slice))")

            let value = String(decoding: slice, as: UTF8.self)
            var attributes = XMLWriter(declaration: false, rootPrefixes: [])
            attributes.empty("", "t", attributes: [XMLAttribute(name: "a", value: value)])
            let expected = Array("<t a=\"".utf8) + Self.referenceEscape(Array(value.utf8), attribute: true) + Array("\"/>".utf8)
            #expect(attributes.bytes == expected, "\(value)")
        }
    }

    /// Long values are escaped a block of `XMLEscaper.blockSize` bytes at a time into a
    /// scratch buffer: a UTF-8 sequence, a reference or a run of plain bytes that straddles
    /// a block's end must come out as the reference has it, and so must a block made only
    /// of bytes that expand sixfold (`"` in an attribute).
    @Test func blockwiseEscapingAgreesWithTheReferenceAcrossBlockEnds() {
        let block = XMLEscaper.blockSize
        let fillers: [[UInt8]] = [Array("abcdefgh".utf8), [0x0D, 0x0A], Array("山".utf8), Array("😀".utf8), [0x26], [0xF0], [0x22]]
        for filler in fillers {
            for shift in 0..<8 {
                for special in [Array("é".utf8), Array("😀".utf8), [0x26], [0x0D], [0xE6, 0x97], [0x22]] {
                    var bytes = Array(repeating: UInt8(ascii: "x"), count: block - 2 + shift)
                    bytes += special
                    while bytes.count < 3 * block + 5 { bytes += filler }
                    var writer = XMLWriter(declaration: false, rootPrefixes: [])
                    writer.text(utf8: bytes)
                    #expect(writer.bytes == Self.referenceEscape(bytes, attribute: false), "filler \(filler), special \(special), shift \(shift)")
                }
            }
            let value = String(decoding: Array(repeating: filler, count: 2 * block / filler.count + 3).joined(), as: UTF8.self)
            var attributes = XMLWriter(declaration: false, rootPrefixes: [])
            attributes.empty("", "t", attributes: [XMLAttribute(name: "a", value: value)])
            let expected = Array("<t a=\"".utf8) + Self.referenceEscape(Array(value.utf8), attribute: true) + Array("\"/>".utf8)
            #expect(attributes.bytes == expected, "filler \(filler)")
        }
    }

    /// The escaper keeps the bytes of a word below the lowest bit `PlainWord.look` sets:
    /// that bit must always mark the first byte that needs a look (a borrow of the bit
    /// tricks may flag bytes above it, never below).
    @Test func plainWordLookMarksTheFirstByteThatNeedsALook() {
        var generator = SplitMix64(state: 11)
        let interesting: [UInt8] = [0x00, 0x09, 0x0A, 0x0D, 0x1F, 0x20, 0x21, 0x22, 0x26, 0x3B, 0x3C, 0x3D, 0x3E, 0x3F, 0x7F, 0x80, 0xC3, 0xFF]
        for _ in 0..<20_000 {
            let bytes = (0..<8).map { _ in
                Bool.random(using: &generator) ? interesting.randomElement(using: &generator)! : UInt8.random(in: 0x20...0x7E, using: &generator)
            }
            let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            for attribute in [false, true] {
                let needsLook: (UInt8) -> Bool = { byte in
                    byte >= 0x80 || byte < 0x20 || byte == 0x26 || byte == 0x3C || byte == 0x3E || (attribute && byte == 0x22)
                }
                let look = PlainWord.look(UInt64(littleEndian: word), attribute: attribute)
                let first = bytes.firstIndex(where: needsLook)
                #expect((look == 0) == (first == nil), "\(bytes)")
                if let first { #expect(look.trailingZeroBitCount >> 3 == first, "\(bytes)") }
            }
        }
    }

    /// The escaping rules one byte at a time: markup and (in attributes) quote, tab, LF and
    /// CR as references, CR as a reference in text, other control characters, non-characters
    /// U+FFFE/U+FFFF and every byte of a broken UTF-8 sequence as U+FFFD.
    static func referenceEscape(_ bytes: [UInt8], attribute: Bool) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte >= 0x80 {
                let length = switch byte { case 0xC2...0xDF: 2; case 0xE0...0xEF: 3; case 0xF0...0xF4: 4; default: 0 }
                if length > 0, index + length <= bytes.count,
                   let scalar = String(validating: bytes[index..<(index + length)], as: UTF8.self)?.unicodeScalars.first,
                   scalar.value != 0xFFFE, scalar.value != 0xFFFF {
                    out += bytes[index..<(index + length)]
                    index += length
                } else {
                    out += Array("\u{FFFD}".utf8)
                    index += 1
                }
                continue
            }
            switch byte {
            case 0x26: out += Array("&amp;".utf8)
            case 0x3C: out += Array("&lt;".utf8)
            case 0x3E: out += Array("&gt;".utf8)
            case 0x0D: out += Array("&#13;".utf8)
            case 0x22 where attribute: out += Array("&quot;".utf8)
            case 0x09 where attribute: out += Array("&#9;".utf8)
            case 0x0A where attribute: out += Array("&#10;".utf8)
            case 0x09, 0x0A: out.append(byte)
            case 0x00..<0x20: out += Array("\u{FFFD}".utf8)
            default: out.append(byte)
            }
            index += 1
        }
        return out
    }
}
