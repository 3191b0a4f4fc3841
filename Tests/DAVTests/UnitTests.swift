import Foundation
import RoloStore
import VCard
import DAVXML
import Testing
@testable import DAV

/// Pure helpers: path parsing, conditional headers, escaping, dates.
@Suite struct ResourcePathTests {
    let configuration = DAVConfiguration()

    @Test func parsesTheURLSpace() {
        #expect(ResourcePath(path: "/", configuration: configuration) == .root)
        #expect(ResourcePath(path: "/dav", configuration: configuration) == .root)
        #expect(ResourcePath(path: "/dav/principals/alice", configuration: configuration) == .principal(user: "alice"))
        #expect(ResourcePath(path: "/dav/addressbooks/alice/", configuration: configuration) == .home(user: "alice"))
        #expect(ResourcePath(path: "/dav/addressbooks/alice/default/x.vcf", configuration: configuration)
            == .member(user: "alice", components: ["default", "x.vcf"]))
    }

    @Test func refusesPathsOutsideTheTreeAndDotSegments() {
        #expect(ResourcePath(path: "/other/x", configuration: configuration) == nil)
        #expect(ResourcePath(path: "/davx/", configuration: configuration) == nil)
        #expect(ResourcePath(path: "/dav/addressbooks/alice/../bob/", configuration: configuration) == nil)
        #expect(ResourcePath(path: "/dav/principals/alice/extra", configuration: configuration) == nil)
    }

    @Test func stripsProxyPrefix() {
        let proxied = DAVConfiguration(proxyPrefix: "/rolo/")
        #expect(ResourcePath(path: "/rolo/dav/addressbooks/alice/", configuration: proxied) == .home(user: "alice"))
        #expect(HrefBuilder(configuration: proxied).home("alice") == "/rolo/dav/addressbooks/alice/")
    }
}

@Suite struct PreconditionsTests {
    @Test func mapsConditionalHeaders() {
        #expect(Preconditions.write([:]) == .none)
        #expect(Preconditions.write(["if-match": "*"]) == .ifMatchAny)
        #expect(Preconditions.write(["if-match": "\"a\", W/\"b\""]) == .ifMatch(["\"a\"", "\"b\""]))
        #expect(Preconditions.write(["if-none-match": "*"]) == .ifNoneMatchAny)
        #expect(Preconditions.write(["if-none-match": "\"a\""]) == .ifNoneMatch(["\"a\""]))
        // Optional white space (space, tab) around each tag, empty list members, weak tags.
        #expect(Preconditions.entityTags(" \t\"a\" ,,W/\"b\"\t, * ") == ["\"a\"", "\"b\"", "*"])
        #expect(Preconditions.entityTags(" , ").isEmpty)
    }

    @Test func evaluatesIfHeader() {
        #expect(Preconditions.ifHeaderHolds(nil, etag: nil))
        #expect(Preconditions.ifHeaderHolds("([\"e1\"])", etag: "\"e1\""))
        #expect(!Preconditions.ifHeaderHolds("([\"e2\"])", etag: "\"e1\""))
        #expect(!Preconditions.ifHeaderHolds("(<opaquelocktoken:x>)", etag: "\"e1\""))
        #expect(Preconditions.ifHeaderHolds("(Not <DAV:no-lock>)", etag: nil))
        #expect(Preconditions.ifHeaderHolds("(<opaquelocktoken:x>) ([\"e1\"])", etag: "\"e1\""))
    }
}

@Suite struct FormattingTests {
    @Test func writesCardBytesAsEscapedPropertyTextKeepingCR() throws {
        var writer = XMLWriter(declaration: false)
        writer.property(.cardDAV("address-data"), .utf8(Data("a<b>&\"c\"\r\n".utf8)))
        #expect(writer.string.hasSuffix(">a&lt;b&gt;&amp;\"c\"&#13;\n</card:address-data>"))
        let parsed = try XMLDocumentParser.parse(writer.bytes)
        #expect(parsed.text == "a<b>&\"c\"\r\n")
    }

    @Test func writesStructuredPropertyValues() throws {
        var writer = XMLWriter(declaration: false)
        writer.element(Namespace.dav, "prop") { writer in
            writer.property(.dav("resourcetype"), .emptyElements([.dav("collection"), .cardDAV("addressbook")]))
            writer.property(.dav("owner"), .href("/dav/principals/a&b/"))
            writer.property(.dav("getetag"), nil)
        }
        let prop = try XMLDocumentParser.parse(writer.bytes)
        #expect(prop.child(Namespace.dav, "resourcetype")?.children.map(\.clarkName)
                == ["{DAV:}collection", "{urn:ietf:params:xml:ns:carddav}addressbook"])
        #expect(prop.child(Namespace.dav, "owner")?.child(Namespace.dav, "href")?.text == "/dav/principals/a&b/")
        #expect(prop.child(Namespace.dav, "getetag")?.children.isEmpty == true)
    }

    @Test func trimsXMLWhitespaceOnly() {
        #expect(" \r\n\t/dav/a b.vcf\n ".trimmingXMLWhitespace == "/dav/a b.vcf")
        #expect("\u{A0}é\u{A0}".trimmingXMLWhitespace == "\u{A0}é\u{A0}")
        #expect(" \n ".trimmingXMLWhitespace == "")
        #expect("plain".trimmingXMLWhitespace == "plain")
        #expect(" 山田 ".trimmingXMLWhitespace == "山田")
    }

    @Test func formatsHTTPDates() {
        let date = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.rfc1123(date) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.rfc3339(date) == "1994-11-06T08:49:37Z")
        // Every weekday and month, single-digit fields, against Foundation's formatter.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        for step in 0..<400 {
            let date = Date(timeIntervalSince1970: 946_684_800 + Double(step) * 86_400 * 1.37 + Double(step * 3_607 % 86_400))
            #expect(HTTPDate.rfc1123(date) == formatter.string(from: date))
        }
    }

    @Test func percentEncodesSegmentsAndDecodesBack() {
        #expect(PercentEncoding.encodeSegment("a b/ü@x") == "a%20b%2F%C3%BC@x")
        #expect(PercentEncoding.decode("a%20b%C3%BC%0A%7f%25") == "a bü\n\u{7F}%")
        #expect(PercentEncoding.encodeSegment("a bü\n\u{7F}%") == "a%20b%C3%BC%0A%7F%25")
        // A slash or NUL in a name, a broken escape, bytes that are not UTF-8: refused.
        for refused in ["a%2Fb", "a%2fb", "a%00", "bad%2", "bad%zz", "%FF", "%C3"] {
            #expect(PercentEncoding.decode(refused) == nil, "\(refused)")
        }
    }

    @Test func extractsCardMetadata() {
        let card = VCard(version: .v40, properties: [
            VCardProperty(name: "UID", rawValue: "g1"), VCardProperty(name: "KIND", rawValue: "group"),
            VCardProperty(name: "FN", rawValue: "Team"), VCardProperty(name: "MEMBER", rawValue: "urn:uuid:m1"),
        ])
        let metadata = CardMetadata(card: card)
        #expect(metadata.uid == "g1")
        #expect(metadata.kind == "group")
        #expect(metadata.members == ["m1"])
        #expect(metadata.indexEntries.contains(IndexEntry(property: "FN", value: "Team")))
    }
}


@Suite struct PutMediaTypeTests {
    @Test func vCardMediaTypesAreRecognisedInAnyCaseWithParametersAndBlanks() {
        for accepted in ["text/vcard", "TEXT/VCARD", "text/x-vcard", "Text/X-VCard; charset=utf-8",
                         " text/vcard ;version=4.0", "\ttext/vcard\t"] {
            #expect(Put.isVCardMediaType(accepted), "\(accepted)")
        }
        for refused in ["text/vcards", "text/vcar", "text/plain", "application/vcard+json", "text/ vcard", "", ";text/vcard",
                        "text/vcard-x", "xtext/vcard"] {
            #expect(!Put.isVCardMediaType(refused), "\(refused)")
        }
    }

    @Test func aBodyThatIsNotUTF8IsRefusedBeforeParsing() throws {
        var body = Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u\r\nFN:".utf8)
        body.append(contentsOf: [0xC3, 0x28])
        body.append(Data("\r\nEND:VCARD\r\n".utf8))
        #expect(throws: DAVError.self) { try Put.validatedCard(body) }
        let valid = Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u\r\nFN:Zoë\r\nN:;Zoë;;;\r\nEND:VCARD\r\n".utf8)
        #expect(try Put.validatedCard(valid).properties.first { $0.name == "FN" }?.text == "Zoë")
    }
}

@Suite struct CardIndexEntryTests {
    /// NOTE and ADR are not indexed (long free text nobody searches, and a random b-tree
    /// write each per PUT); names, addresses of mail, phones and the rest still are.
    @Test func noteAndAddressStayOutOfTheIndexWhileTheSearchedPropertiesAreIn() throws {
        let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u1\r\nFN:Ada Lovelace\r\nN:Lovelace;Ada;;;\r\nEMAIL:ada@engine.org\r\n"
            + "TEL:+44 1\r\nORG:Engines\r\nNOTE:Wrote the first program\r\nADR:;;1 Street;London;;;UK\r\nEND:VCARD\r\n"
        let card = try #require(try VCardParser.parse(text).first)
        let metadata = CardMetadata(card: card)
        #expect(Set(metadata.indexEntries.map(\.property)) == ["UID", "FN", "N", "EMAIL", "TEL", "ORG"])
        #expect(metadata.uid == "u1")
        #expect(metadata.kind == "person")
    }
}
