import DAVXML
import Foundation
import Testing

private let dav = "DAV:"
private let carddav = "urn:ietf:params:xml:ns:carddav"

private func parse(_ xml: String) throws(XMLParseError) -> XMLElement {
    try XMLDocumentParser.parse(Array(xml.utf8))
}

private func parseError(_ xml: String, limits: XMLDocumentParser.Limits = .default) -> XMLParseError? {
    do {
        _ = try XMLDocumentParser.parse(Array(xml.utf8), limits: limits)
        return nil
    } catch {
        return error
    }
}

/// The CPU time this thread spent in `body`. Unlike the wall clock it does not count the
/// time other processes had the cores: a full run keeps two cores at a load of 10 to 20, and
/// a parse that takes a few milliseconds alone then took far longer by the clock.
private func cpuTime(_ body: () throws -> Void) rethrows -> Duration {
    func now() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
    let started = now()
    try body()
    return now() - started
}

@Suite struct XMLDocumentParserTests {
    @Test func resolvesPrefixedNamespaces() throws {
        let root = try parse("""
            <?xml version="1.0" encoding="utf-8"?>
            <D:propfind xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav">
              <D:prop><D:getetag/><C:address-data/></D:prop>
            </D:propfind>
            """)
        #expect(root.namespace == dav && root.name == "propfind")
        let prop = try #require(root.child(dav, "prop"))
        #expect(prop.children.map(\.clarkName) == ["{DAV:}getetag", "{\(carddav)}address-data"])
    }

    @Test func resolvesDefaultNamespaceAndUnnamespacedElements() throws {
        let root = try parse(#"<propfind xmlns="DAV:"><prop><x xmlns=""/></prop></propfind>"#)
        #expect(root.clarkName == "{DAV:}propfind")
        let x = try #require(root.child(dav, "prop")?.children.first)
        #expect(x.namespace == "" && x.name == "x")
    }

    @Test func honoursRedefinedPrefixesInNestedScopes() throws {
        let root = try parse("""
            <a:root xmlns:a="urn:one"><a:inner xmlns:a="urn:two"><a:leaf/></a:inner><a:after/></a:root>
            """)
        #expect(root.namespace == "urn:one")
        let inner = try #require(root.children.first)
        #expect(inner.namespace == "urn:two")
        #expect(inner.children.first?.namespace == "urn:two")
        #expect(root.children.last?.clarkName == "{urn:one}after")
    }

    @Test func unprefixedAttributesHaveNoNamespaceEvenUnderADefaultNamespace() throws {
        let root = try parse(#"<C:filter xmlns:C="urn:ietf:params:xml:ns:carddav" xmlns="DAV:" test="allof" xmlns:z="urn:z" z:extra="1"/>"#)
        #expect(root.attribute("test") == "allof")
        #expect(root.attribute("extra", namespace: "urn:z") == "1")
        #expect(root.attribute("extra") == nil)
        #expect(root.attributes.count == 2)
    }

    @Test func keepsLeafTextWithWhitespaceAndDropsFormattingWhitespace() throws {
        let root = try parse("<r>\n  <a>  spaced  </a>\n  <b>   </b>\n</r>")
        #expect(root.text == "")
        #expect(root.child("", "a")?.text == "  spaced  ")
        #expect(root.child("", "b")?.text == "   ")
    }

    @Test func decodesCDATAAndPredefinedAndCharacterReferences() throws {
        let root = try parse("<r><![CDATA[a <b> & c]]> &amp; &lt;&#65;&#x42;</r>")
        #expect(root.text == "a <b> & c & <AB")
    }

    @Test func decodesEscapedAttributeValues() throws {
        let root = try parse(#"<r v="a&amp;b &quot;q&quot; &lt;"/>"#)
        #expect(root.attribute("v") == #"a&b "q" <"#)
    }

    @Test func decodesAmpersandsInNamespaceURIs() throws {
        let root = try parse(#"<p:r xmlns:p="http://example.com/?a=1&amp;b=2"/>"#)
        #expect(root.namespace == "http://example.com/?a=1&b=2")
    }

    @Test func keepsNonASCIIText() throws {
        let root = try parse("<r>Zoë 東京 🎉</r>")
        #expect(root.text == "Zoë 東京 🎉")
    }

    @Test func convertsDeclaredLatin1EncodingToUTF8() throws {
        var bytes = Array(#"<?xml version="1.0" encoding="ISO-8859-1"?><r>"#.utf8)
        bytes.append(0xE9) // é in Latin-1
        bytes += Array("</r>".utf8)
        #expect(try XMLDocumentParser.parse(bytes).text == "é")
    }

    @Test func refusesDoctype() {
        let error = parseError(#"<?xml version="1.0"?><!DOCTYPE r><r/>"#)
        #expect(error?.message.contains("DOCTYPE") == true)
    }

    @Test func refusesExternalEntityDeclarationsWithoutReadingFiles() {
        let xxe = """
            <?xml version="1.0"?>
            <!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <r>&xxe;</r>
            """
        let error = parseError(xxe)
        #expect(error?.message.contains("DOCTYPE") == true)
        #expect(error?.line == 2)
    }

    @Test func refusesBillionLaughsQuickly() {
        var xml = #"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">"#
        for level in 1...30 {
            xml += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">"
        }
        xml += "]><lolz>&lol30;</lolz>"
        var error: XMLParseError?
        let elapsed = cpuTime { error = parseError(xml) }
        #expect(error?.message.contains("DOCTYPE") == true)
        #expect(elapsed < .milliseconds(200))
    }

    @Test func refusesUndeclaredEntityReferences() {
        #expect(parseError("<r>&nbsp;</r>") != nil)
    }

    @Test func reportsTheLineOfMalformedInput() throws {
        let error = try #require(parseError("<a>\n<b>\n</a>\n"))
        #expect(error.line == 3)
        #expect(!error.message.isEmpty)
    }

    @Test func refusesEmptyAndNonXMLInput() {
        #expect(parseError("") != nil)
        #expect(parseError("hello") != nil)
        #expect(parseError("<a></a><b/>") != nil)
    }

    @Test func refusesUndeclaredPrefix() {
        #expect(parseError("<x:a/>") != nil)
    }

    @Test func capsNestingDepth() throws {
        let deep = String(repeating: "<a>", count: 65) + String(repeating: "</a>", count: 65)
        let error = try #require(parseError(deep))
        #expect(error.message.contains("deep"))
        #expect(error.line == 1)
        let fine = String(repeating: "<a>", count: 64) + String(repeating: "</a>", count: 64)
        #expect(parseError(fine) == nil)
    }

    @Test func capsElementCount() throws {
        let many = "<r>" + String(repeating: "<a/>", count: 20) + "</r>"
        let error = try #require(parseError(many, limits: .init(maxDepth: 64, maxElements: 10)))
        #expect(error.message.contains("too many elements"))
    }

    @Test func parsesAHugeMultigetQuickly() throws {
        var xml = #"<C:addressbook-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"><D:prop><D:getetag/><C:address-data/></D:prop>"#
        for index in 0..<20_000 { xml += "<D:href>/dav/alice/default/card-\(index).vcf</D:href>" }
        xml += "</C:addressbook-multiget>"
        var root: XMLElement?
        let elapsed = try cpuTime { root = try parse(xml) }
        let hrefs = root?.children(dav, "href") ?? []
        #expect(hrefs.count == 20_000)
        #expect(hrefs.last?.text == "/dav/alice/default/card-19999.vcf")
        #expect(elapsed < .seconds(2))
    }

    @Test func keepsLongTextDeliveredInManyChunks() throws {
        let long = String(repeating: "abcdefghij", count: 50_000)
        #expect(try parse("<r>\(long)</r>").text == long)
    }

    @Test func parsesFromConcurrentTasks() async throws {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                group.addTask { try parse("<r xmlns=\"urn:t\"><n>\(index)</n></r>").children.count }
            }
            for try await count in group { #expect(count == 1) }
        }
    }

    @Test func anElementsLanguageIsItsOwnXMLLangElseItsParentsAndEmptySaysNone() throws {
        let root = try parse(#"<r xml:lang="en"><a xml:lang="fr"/><b/><c xml:lang=""/></r>"#)
        let inRoot = root.language(inheriting: "de")
        #expect(inRoot == "en")
        #expect(root.children.map { $0.language(inheriting: inRoot) } == ["fr", "en", nil])
        #expect(try parse("<r/>").language(inheriting: "de") == "de")
    }
}
