import ContactFeeds
import Contacts
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// The phone-book writers: element names as the formats publish them, number types mapped
/// from the Contacts model's labels, and XML that parses.
struct PhoneBookTests {
    static let cards: [FeedContact] = [
        card(["VERSION:3.0", "UID:z", "N:Zed;Zoe;;;", "FN:Zoe Zed", "TEL;TYPE=CELL:+49 170 1",
              "TEL;TYPE=WORK:+49 30 2", "TEL;TYPE=HOME:+49 30 3", "TEL;TYPE=WORK,FAX:+49 30 4"]),
        card(["VERSION:4.0", "UID:a", "FN:Anne & <Co>", "ORG:Anne & <Co>", "KIND:org", "TEL;TYPE=work:123"]),
        card(["VERSION:4.0", "UID:n", "FN:No Number", "EMAIL:x@example.org"]),
    ]

    static func card(_ lines: [String]) -> FeedContact {
        let text = (["BEGIN:VCARD"] + lines + ["END:VCARD", ""]).joined(separator: "\r\n")
        return FeedContact(key: "k", bytes: Array(text.utf8))!
    }

    /// Parses the XML (Foundation's parser) and gives the element names in document order.
    static func elements(_ xml: String) throws -> [String] {
        final class Collector: NSObject, XMLParserDelegate {
            var names: [String] = []
            var attributes: [[String: String]] = []
            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
                        qualifiedName: String?, attributes: [String: String]) {
                names.append(name)
                self.attributes.append(attributes)
            }
        }
        let parser = XMLParser(data: Data(xml.utf8))
        let collector = Collector()
        parser.delegate = collector
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        return collector.names
    }

    @Test func yealinkListsNamesAndNumbersWithoutFaxes() throws {
        let xml = PhoneBookFormat.yealink.write(Self.cards)
        let names = try Self.elements(xml)
        #expect(names.first == "YealinkIPPhoneDirectory")
        #expect(names.filter { $0 == "DirectoryEntry" }.count == 2)
        #expect(names.filter { $0 == "Telephone" }.count == 4)
        #expect(xml.contains("<Name>Anne &amp; &lt;Co&gt;</Name>"))
        #expect(!xml.contains("+49 30 4"))
        #expect(xml.range(of: "Anne")!.lowerBound < xml.range(of: "Zoe")!.lowerBound)
    }

    @Test func fritzBoxTypesNumbersHomeWorkMobileAndFaxWork() throws {
        let xml = PhoneBookFormat.fritzbox.write(Self.cards, bookName: "Family")
        let names = try Self.elements(xml)
        #expect(Array(names.prefix(3)) == ["phonebooks", "phonebook", "contact"])
        #expect(names.contains("realName") && names.contains("telephony"))
        #expect(xml.contains("<phonebook name=\"Family\">"))
        #expect(xml.contains("<number type=\"mobile\" prio=\"1\" id=\"0\">+49 170 1</number>"))
        #expect(xml.contains("<number type=\"work\" prio=\"0\" id=\"1\">+49 30 2</number>"))
        #expect(xml.contains("<number type=\"home\" prio=\"0\" id=\"2\">+49 30 3</number>"))
        #expect(xml.contains("<number type=\"fax_work\" prio=\"0\" id=\"3\">+49 30 4</number>"))
        #expect(!xml.contains("No Number"))
    }

    @Test func fritzBoxSplitsAContactOfMoreThanNineNumbers() throws {
        let many = Self.card(["VERSION:4.0", "UID:m", "FN:Many"] + (1...11).map { "TEL:\($0)" })
        let xml = PhoneBookFormat.fritzbox.write([many])
        #expect(try Self.elements(xml).filter { $0 == "contact" }.count == 2)
        #expect(xml.components(separatedBy: "<realName>Many</realName>").count == 3)
    }

    @Test func snomWritesTheVersion2DirectoryWithTypedNumbers() throws {
        let xml = PhoneBookFormat.snom.write(Self.cards)
        let names = try Self.elements(xml)
        #expect(names.first == "tbook")
        #expect(names.filter { $0 == "contact" }.count == 2)
        #expect(xml.contains("<first_name>Zoe</first_name>"))
        #expect(xml.contains("<last_name>Zed</last_name>"))
        #expect(xml.contains("<last_name>Anne &amp; &lt;Co&gt;</last_name>"))
        #expect(xml.contains("no=\"+49 170 1\" type=\"mobile\""))
        #expect(xml.contains("no=\"+49 30 2\" type=\"business\""))
        #expect(xml.contains("no=\"+49 30 3\" type=\"home\""))
        #expect(!xml.contains("+49 30 4"))
    }

    @Test func controlCharactersNeverReachTheXML() throws {
        // Built in code: a vCard with a control character does not parse, but a model can hold one.
        let odd = FeedContact(key: "o", contact: Contact(identifier: "o", formattedName: "Bell\u{7}Name",
                                                         phoneNumbers: [LabeledValue(identifier: "t", label: nil, value: "1")]))
        for format in PhoneBookFormat.allCases {
            let xml = format.write([odd])
            #expect(!xml.unicodeScalars.contains("\u{7}"))
            _ = try Self.elements(xml)
        }
    }
}
