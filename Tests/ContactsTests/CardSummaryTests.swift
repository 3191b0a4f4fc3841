import Contacts
import Testing
import VCard

/// What the server indexes for a card.
struct CardSummaryTests {
    private func summary(_ text: String) throws -> CardSummary {
        CardSummary(card: try #require(try VCardParser.parse(text).first))
    }

    @Test func indexesNamesStructuredValuesAndEachCategory() throws {
        let summary = try summary("""
            BEGIN:VCARD\r
            VERSION:3.0\r
            UID:abc-1\r
            FN:Ada Berg\r
            N:Berg;Ada;;;\r
            NICKNAME:Addie\r
            item1.EMAIL;TYPE=INTERNET:ada@example.com\r
            TEL:+47 400\r
            ADR:;;Storgata 1;Oslo;;0155;Norway\r
            ORG:Fjord Labs;Research\r
            CATEGORIES:Family,Hiking Club\r
            X-CUSTOM:anything\r
            END:VCARD\r

            """)
        #expect(summary.uid == "abc-1")
        #expect(summary.kind == .person)
        let fields = summary.searchFields.map { "\($0.property)=\($0.value)" }
        for expected in ["UID=abc-1", "FN=Ada Berg", "N=Berg Ada", "NICKNAME=Addie", "EMAIL=ada@example.com",
                         "TEL=+47 400", "ADR=Storgata 1 Oslo 0155 Norway", "ORG=Fjord Labs Research",
                         "CATEGORIES=Family", "CATEGORIES=Hiking Club", "X-CUSTOM=anything", "VERSION=3.0"] {
            #expect(fields.contains(expected), "missing \(expected) in \(fields)")
        }
        #expect(summary.members.isEmpty)
    }

    @Test func groupMembersLoseTheirURNPrefixInBothDialects() throws {
        let apple = try summary("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:G\r\nX-ADDRESSBOOKSERVER-KIND:group\r\nX-ADDRESSBOOKSERVER-MEMBER:urn:uuid:A-1\r\nEND:VCARD\r\n")
        #expect(apple.kind == .group && apple.members == ["A-1"])
        #expect(apple.uid == nil)
        let v4 = try summary("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:G\r\nKIND:group\r\nMEMBER:urn:uuid:B-2\r\nMEMBER:urn:uuid:C-3\r\nEND:VCARD\r\n")
        #expect(v4.kind == .group && v4.members == ["B-2", "C-3"])
        #expect(v4.searchFields.contains(CardSummary.SearchField(property: "KIND", value: "group")))
    }

    @Test func companyCardsAreOrganizations() throws {
        #expect(try summary("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Co\r\nX-ABShowAs:COMPANY\r\nEND:VCARD\r\n").kind == .organization)
        #expect(try summary("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Co\r\nKIND:org\r\nEND:VCARD\r\n").kind == .organization)
    }

    @Test func inlinePhotoDataIsNotIndexedButItsPresenceIs() throws {
        let summary = try summary("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:P\r\nPHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQSkZJRg==\r\nEND:VCARD\r\n")
        #expect(summary.searchFields.contains(CardSummary.SearchField(property: "PHOTO", value: "")))
    }

    @Test func summaryAndIdentityAgreeWithTheModelOnEveryFixtureAndCorpusCard() throws {
        for (name, card) in try Fixtures.allCards() {
            let summary = CardSummary(card: card)
            let contact = Contact(vCard: card)
            #expect(summary.uid == contact.identifier, "\(name)")
            #expect(summary.kind == contact.kind, "\(name)")
            #expect(summary.members == (contact.kind == .group ? contact.memberIdentifiers : []), "\(name)")
            let identity = CardIdentity(card: card)
            #expect(identity == CardIdentity(uid: summary.uid, kind: summary.kind, members: summary.members), "\(name)")
        }
    }
}
