import Foundation
@testable import CardIndexing
import RoloStore
import Testing
import VCard

@Suite struct CardListingFieldsTests {
    static func fields(_ text: String) throws -> CardListingFields {
        CardListingFields(card: try VCardParser.parse(text.replacingOccurrences(of: "\n", with: "\r\n"))[0])
    }

    @Test func aListRowHoldsTheNameTheFirstValuesAndAFoldedSearchLine() throws {
        let fields = try Self.fields("""
            BEGIN:VCARD
            VERSION:3.0
            FN:José Müller
            N:Müller;José;;;
            NICKNAME:Pepe
            ORG:ACME;Sales
            item1.TEL:+1 (555) 010-9999
            item1.X-ABLabel:Boat
            TEL:555 0100
            EMAIL:Jose@Example.com
            CATEGORIES:Family,Work
            PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQ
            END:VCARD

            """)
        #expect(fields.displayName == "José Müller")
        #expect(fields.sortKey == "jose muller")
        #expect(fields.organization == "ACME Sales")
        #expect(fields.email == "Jose@Example.com" && fields.phone == "+1 (555) 010-9999")
        #expect(fields.hasPhoto)
        let lines = fields.searchText.split(separator: "\n").map(String.init)
        for expected in ["jose muller", "pepe", "acme sales", "jose@example.com", "15550109999", "\u{1E}family", "\u{1E}work"] {
            #expect(lines.contains(expected), "\(expected)")
        }
    }

    @Test func aCardWithoutFNIsNamedFromNThenOrgThenEmailAndOneWithNothingSortsLast() throws {
        #expect(try Self.fields("BEGIN:VCARD\nVERSION:3.0\nN:Lee;Dora;;;\nFN:\nEND:VCARD\n").displayName == "Dora Lee")
        #expect(try Self.fields("BEGIN:VCARD\nVERSION:4.0\nORG:Initech\nEND:VCARD\n").displayName == "Initech")
        let nothing = try Self.fields("BEGIN:VCARD\nVERSION:4.0\nUID:x\nEND:VCARD\n")
        #expect(nothing.displayName == "" && nothing.sortKey == "\u{10FFFF}")
        #expect(CardListingFields.sortKey("'Bob") == "bob")
        // A remote photo is no photo to the list: it is never fetched.
        #expect(try !Self.fields("BEGIN:VCARD\nVERSION:4.0\nFN:A\nPHOTO:https://example.com/a.jpg\nEND:VCARD\n").hasPhoto)
    }

    @Test func searchWordsFoldLikeTheSearchLineAndKeepPhoneDigits() {
        #expect(CardListingFields.searchWords("  ANN  Müller ") == ["ann", "muller"])
        #expect(CardListingFields.searchWords("+1 (555) 010-9999") == ["1", "555", "0109999"])
        #expect(CardListingFields.searchWords("555-0100") == ["5550100"])
    }

    @Test func cardMetadataCarriesTheListingRow() throws {
        let card = try VCardParser.parse("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:g1\r\nKIND:group\r\nFN:Friends\r\nMEMBER:urn:uuid:a\r\nEND:VCARD\r\n")[0]
        let metadata = CardMetadata(card: card)
        #expect(metadata.kind == "group" && metadata.members == ["a"])
        #expect(metadata.listing?.displayName == "Friends")
    }

    /// `CardListingFields.trimmed` keeps a name with no white space at its ends as it is, and
    /// trims as Foundation trims: the two agree on which scalars are white space.
    @Test func aNameIsTrimmedAsFoundationTrimsIt() {
        let scalars = (0..<0x3100).compactMap(Unicode.Scalar.init) + ["\u{FEFF}", "\u{180E}", "\u{200B}", "\u{205F}"]
        for scalar in scalars {
            for text in ["\(scalar)Anna\(scalar)", "Anna\(scalar)", "\(scalar)\(scalar)", "\(scalar)", "\(scalar)\u{301} A"] {
                #expect(Array(CardListingFields.trimmed(text).utf8) == Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8),
                        "U+\(String(scalar.value, radix: 16))")
            }
        }
        #expect(CardListingFields.trimmed("") == "" && CardListingFields.trimmed(" \r\n Émile  ") == "Émile")
    }

    /// The search text is folded as one text (issue 34): the same bytes as each line folded
    /// alone, for lines whose fold depends on their ends (final sigma, a leading combining
    /// mark) and lines Foundation folds beside lines the table folds.
    @Test func theSearchTextFoldsAsItsLinesFoldAlone() {
        #expect(CardListingFields.searchText(["ΣΟΦΙΑ", "Anna"]) == "σοφια\nanna")
        let lines = ["ΟΔΥΣΣΕΥΣ", "Σοφία", "Σ", "ΑΣ'", "\u{301}Émile", "e\u{301}", "İstanbul", "STRASSE ß", "ﬁne",
                     "김민준", "サトウ", "株式会社サンプル", "Дмитрий", "+1 (555) 010-9999", "Ǆ", "\u{1E}FAMILY", "ΣΑΣ ΣΑΣ"]
        for first in lines {
            for second in lines {
                let joined = CardListingFields.searchText([first, second])
                #expect(Array(joined.utf8) == Array((CaseFolding.search(first) + "\n" + CaseFolding.search(second)).utf8),
                        "\(first) / \(second)")
            }
        }
    }

    /// The row's sort key, read from its folded search text, is the display name's own.
    @Test func theRowsSortKeyIsItsDisplayNamesOwnWhereverTheNameComesFrom() throws {
        let names = ["ΟΔΥΣΣΕΥΣ", "Σοφία", "ΑΣ'", "\u{301}Émile", "İstanbul", "STRASSE ß", "ﬁne", "김민준", "サトウ",
                     "'Bob", "Zoë", "", "+1 555"]
        for name in names {
            for (other, fold) in [("", "x"), ("ΣΑΣ", "y"), ("two\\nlines", "z")] {
                // Each property the name can come from, after lines from other properties
                // (one folded by Foundation, one with a line break in it).
                let cards = [
                    "NICKNAME:\(other)\nFN:\(name)\nEMAIL:\(fold)@example.com",
                    "NICKNAME:\(other)\nN:\(name);;;;\nTEL:\(fold)",
                    "NICKNAME:\(other)\nFN:\nORG:\(name)",
                    "NICKNAME:\(other)\nEMAIL:\(name)\nTEL:1",
                    "NICKNAME:\(other)\nTEL:\(name)",
                    "FN:\(other)\nFN:\(name)",
                ]
                for card in cards {
                    let fields = try Self.fields("BEGIN:VCARD\nVERSION:3.0\n\(card)\nEND:VCARD\n")
                    #expect(fields.sortKey == CardListingFields.sortKey(fields.displayName), "\(card)")
                }
            }
        }
        #expect(CardListingFields.foldedLine(1, of: ["a", "b"], in: "a\nb") == "b")
        #expect(CardListingFields.foldedLine(0, of: ["a", "b"], in: "a\nb") == "a")
        #expect(CardListingFields.foldedLine(1, of: ["a\nc", "b"], in: "a\nc\nb") == nil)
        #expect(CardListingFields.foldedLine(2, of: ["a", "b"], in: "a\nb") == nil)
    }

    /// The fast paths of the sort key and the phone digits give what Character by Character does.
    @Test func theSortKeyAndThePhoneDigitsReadByByteAgreeWithCharacters() {
        func generalSortKey(_ name: String) -> String {
            let key = CaseFolding.search(name).drop { !($0.isLetter || $0.isNumber) }
            return key.isEmpty ? "\u{10FFFF}" : String(key)
        }
        var names = ["Anna", "anna", "0800 Taxi", "9", "'Bob", " Émile", "Émile", "a\u{301}b", "Zoë", "z", "(Work)", "",
                     "\u{301}", "Σοφία", "ΣΟΦΙΑ", "김민준", "サトウ", "株式会社", "Дмитрий", "محمد", "٣ Tage", "①x", "ⅫA", "·Anna",
                     "\u{300}\u{301}a", "«Émile»", "ǅemal", "ﬁne"]
        names += (0x20..<0x7F).compactMap(Unicode.Scalar.init).map { "\($0)x" }
        for name in names {
            #expect(CardListingFields.sortKey(name) == generalSortKey(name), "\(name)")
        }
        var numbers = ["+1 (555) 010-9999", "tel:+44 20", "\r\n12", "", "٣٤٥ 12", "①2", "555\u{301}1"]
        numbers += (0x0..<0x80).compactMap(Unicode.Scalar.init).map { "1\($0)2" }
        for number in numbers {
            #expect(CardListingFields.digits(number) == number.filter(\.isNumber), "\(number.unicodeScalars.map(\.value))")
        }
    }
}
