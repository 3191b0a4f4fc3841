import Testing
import DAVXML

/// Deterministic pseudo-random numbers (SplitMix64) so failures reproduce.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private let namespaces = ["", "DAV:", "urn:ietf:params:xml:ns:carddav", "http://calendarserver.org/ns/", "urn:x", "http://example.com/ns?a=1&b=2"]
private let names = ["a", "prop", "href", "x-long-name", "n.1", "_u"]
private let textPieces = ["plain", " ", "<", ">", "&", "\"", "'", "\t", "\n", "\r", "Zoë", "東京", "🎉", "]]>", "&amp;"]

private func randomText(_ rng: inout SplitMix64) -> String {
    (0..<Int.random(in: 0...6, using: &rng)).map { _ in textPieces.randomElement(using: &rng)! }.joined()
}

private func randomElement(_ rng: inout SplitMix64, depth: Int) -> XMLElement {
    var element = XMLElement(namespace: namespaces.randomElement(using: &rng)!, name: names.randomElement(using: &rng)!)
    var seen = Set<String>()
    for _ in 0..<Int.random(in: 0...3, using: &rng) {
        let attribute = XMLAttribute(namespace: namespaces.randomElement(using: &rng)!, name: names.randomElement(using: &rng)!,
                                     value: randomText(&rng))
        if seen.insert("\(attribute.namespace)|\(attribute.name)").inserted { element.attributes.append(attribute) }
    }
    if depth < 4 && Bool.random(using: &rng) {
        element.children = (0..<Int.random(in: 1...4, using: &rng)).map { _ in randomElement(&rng, depth: depth + 1) }
        // Text beside children survives only when it is not just whitespace.
        let text = randomText(&rng)
        if !text.unicodeScalars.allSatisfy({ " \t\n\r".unicodeScalars.contains($0) }) { element.text = text }
    } else {
        element.text = randomText(&rng)
    }
    return element
}

@Suite struct XMLRoundTripTests {
    @Test func writtenTreesParseBackIdentical() throws {
        var rng = SplitMix64(state: 2024)
        for _ in 0..<500 {
            let element = randomElement(&rng, depth: 0)
            let parsed = try XMLDocumentParser.parse(Array(element.xmlString.utf8))
            #expect(parsed == element, "\(element.xmlString)")
        }
    }

    @Test func innerXMLReplaysUnderAnyPrefix() throws {
        var rng = SplitMix64(state: 7)
        for _ in 0..<300 {
            let element = randomElement(&rng, depth: 0)
            var writer = XMLWriter()
            writer.element(XMLNamespace.dav, "prop") { $0.deadProperty(element.namespace, element.name, innerXML: element.innerXML) }
            let replayed = try #require(try XMLDocumentParser.parse(writer.bytes).children.first)
            var expected = element
            expected.attributes = []
            #expect(replayed == expected)
        }
    }

    /// Found by fuzzing (`xml` target): an `xml:lang` attribute (a dead property set by
    /// PROPPATCH or an extended MKCOL) was written with a generated prefix declared for the
    /// XML namespace, which no parser accepts, so the property's PROPFIND answer was broken.
    @Test func xmlNamespaceAttributesKeepTheXmlPrefix() throws {
        let body = #"<d:p xmlns:d="DAV:"><d:v xml:lang="fr" xml:space="preserve">texte</d:v><xml:odd>x</xml:odd></d:p>"#
        let parsed = try XMLDocumentParser.parse(body)
        #expect(parsed.children[0].attribute("lang", namespace: XMLNamespace.xml) == "fr")
        let written = parsed.xmlString
        #expect(written.contains(#"xml:lang="fr""#) && !written.contains("xmlns:x0"))
        #expect(try XMLDocumentParser.parse(written) == parsed)
        var replay = XMLWriter()
        replay.element(XMLNamespace.dav, "prop") { $0.deadProperty(parsed.namespace, parsed.name, innerXML: parsed.innerXML) }
        #expect(try XMLDocumentParser.parse(replay.bytes).children.first?.children == parsed.children)
    }

    @Test func mutatedDocumentsParseOrFailCleanly() {
        let seed = Array("""
            <?xml version="1.0" encoding="utf-8"?>
            <C:addressbook-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav">
              <D:prop><D:getetag/><C:address-data><C:prop name="FN"/></C:address-data></D:prop>
              <C:filter test="anyof"><C:prop-filter name="EMAIL">
                <C:text-match collation="i;unicode-casemap" match-type="contains">a&amp;b<![CDATA[<c>]]></C:text-match>
              </C:prop-filter></C:filter><C:limit><C:nresults>10</C:nresults></C:limit>
            </C:addressbook-query>
            """.utf8)
        let alphabet = Array("<>/&;:=\"' !?[]-#x\u{0}".utf8) + [0xC3, 0xFF, 0x80]
        var rng = SplitMix64(state: 99)
        var parsed = 0, refused = 0
        for _ in 0..<3000 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                let index = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[index] = alphabet.randomElement(using: &rng)!
                case 1: bytes.remove(at: index)
                default: bytes.insert(alphabet.randomElement(using: &rng)!, at: index)
                }
                if bytes.isEmpty { bytes = [0x3C] }
            }
            do {
                _ = try XMLDocumentParser.parse(bytes)
                parsed += 1
            } catch {
                #expect(!error.message.isEmpty)
                refused += 1
            }
        }
        #expect(parsed > 0 && refused > 0)
    }
}
