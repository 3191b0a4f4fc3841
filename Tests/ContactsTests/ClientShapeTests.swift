import Contacts
import Testing
import VCard

/// One small card per client shape, read into the model: meaningful without the shared corpus.
struct ClientShapeTests {
    private func contacts(_ fixture: String) throws -> [Contact] {
        try Fixtures.cards(fixture: fixture).map(Contact.init(vCard:))
    }

    private func labels<Value>(_ values: [LabeledValue<Value>]) -> [String?] { values.map { $0.label?.name } }

    @Test func appleCardReadsBuiltInCustomAndTypeLabels() throws {
        let ada = try #require(try contacts("apple-ios-3.0.vcf").first)
        #expect(labels(ada.phoneNumbers) == ["mobile", "iPhone", "homeFax", "other", "Boat"])
        #expect(ada.phoneNumbers.map(\.isPreferred) == [true, false, false, false, false])
        #expect(ada.emailAddresses.first?.label == .work && ada.emailAddresses.first?.isPreferred == true)
        #expect(ada.urlAddresses.first?.label == .homePage)
        #expect(ada.dates.first?.label == .anniversary)
        #expect(ada.dates.first?.value == ContactDate(year: nil, month: 9, day: 1))
        #expect(ada.relatedNames.first?.label == .spouse && ada.relatedNames.first?.value == "Ola Berg")
        #expect(ada.birthday == ContactDate(year: nil, month: 7, day: 4))
        let address = try #require(ada.postalAddresses.first)
        #expect(address.value.street == "Storgata 1\nOppgang B")
        #expect(address.value.isoCountryCode == "no")
        #expect(ada.socialProfiles.first?.value == SocialProfile(service: "mastodon", username: "ada",
                                                                  urlString: "https://social.example/@ada"))
        #expect(ada.instantMessageAddresses.first?.value == InstantMessageAddress(service: "Skype", uri: "skype:ada.berg"))
        #expect(ada.note == "Line one\nLine two, with comma")
        #expect(ada.image?.mediaType == "image/jpeg" && ada.image?.data.prefix(2) == [0xFF, 0xD8])
        #expect(ada.organizationName == "Fjord Labs" && ada.departmentName == "Research" && ada.jobTitle == "Engineer")
        #expect(ada.phoneticGivenName == "Ah-da")
    }

    @Test func appleGroupSharedWithAnUnmappedPropertyIsWrittenBack() throws {
        let ada = try #require(try contacts("apple-ios-3.0.vcf").first)
        let card = ada.vCard(version: .v30)
        let boat = try #require(card.properties.first { $0.rawValue == "+47 400 00 005" })
        let note = try #require(card.properties.first { $0.name == "X-CUSTOM-NOTE" })
        #expect(boat.group == "item2" && note.group == "item2")
        let label = card.properties.first { $0.name == "X-ABLABEL" && $0.group == "item2" }
        #expect(label?.text == "Boat")
    }

    @Test func googleExportReadsCustomLabelsAndEscapedURLWithoutUID() throws {
        let ravi = try #require(try contacts("google-3.0.vcf").first)
        #expect(ravi.identifier == nil)
        #expect(labels(ravi.phoneNumbers) == ["mobile", "Parents' home"])
        #expect(labels(ravi.emailAddresses) == ["home", "work"])
        #expect(ravi.urlAddresses.first?.value == "http://ravi.example/blog")
        #expect(ravi.urlAddresses.first?.label == .custom("Blog"))
        #expect(ravi.dates.first?.label == .anniversary)
        #expect(ravi.categories == ["myContacts", "Friends"])
    }

    @Test func davx5FourZeroReadsPrefPidAnniversaryAndRelated() throws {
        let lucia = try #require(try contacts("davx5-4.0.vcf").first)
        #expect(labels(lucia.phoneNumbers) == ["mobile", "work", "Abuela"])
        #expect(lucia.phoneNumbers.first?.isPreferred == true)
        let work = try #require(lucia.emailAddresses.last)
        #expect(work.pid == "2.1" && work.identifier == "pid:2.1")
        #expect(work.isPreferred == false, "PREF=3 is not preferred")
        #expect(lucia.birthday?.description == "--04-16")
        #expect(lucia.dates.map(\.label) == [.anniversary])
        #expect(lucia.dates.first?.value.description == "2015-09-12")
        #expect(lucia.relatedNames.first?.label == .spouse)
        #expect(lucia.postalAddresses.first?.value.street == "Calle de Alcalá 45, 3º B")
        #expect(lucia.instantMessageAddresses.first?.value.service == "xmpp")
        // PREF=3 survives as a kept parameter.
        let written = lucia.vCard(version: .v40).properties.first { $0.rawValue == "lfernandez@empresa.example" }
        #expect(written?.parameter("PREF") == ["3"])
    }

    @Test func thunderbirdReadsBareFaxAsOtherFaxAndUnlabeledPreferredEmail() throws {
        let jonas = try #require(try contacts("thunderbird-4.0.vcf").first)
        #expect(labels(jonas.phoneNumbers) == ["mobile", "otherFax"])
        #expect(labels(jonas.emailAddresses) == [nil, "work"])
        #expect(jonas.emailAddresses.first?.isPreferred == true)
        #expect(jonas.birthday == ContactDate(year: 1988, month: 2, day: 29))
        #expect(jonas.unmappedProperties.map(\.name) == ["X-MOZILLA-HTML"])
        let tel = jonas.vCard(version: .v40).properties.first { $0.name == "TEL" }
        #expect(tel?.parameter("VALUE") == ["TEXT"], "VALUE=TEXT is kept")
    }

    @Test func evolutionKeepsItsParametersAndProperties() throws {
        let claire = try #require(try contacts("evolution-3.0.vcf").first)
        #expect(labels(claire.phoneNumbers) == ["mobile", "workFax"])
        #expect(claire.categories == ["Business", "VIP"])
        #expect(claire.unmappedProperties.map(\.name) == ["X-EVOLUTION-FILE-AS"])
        let tel = try #require(claire.vCard(version: .v30).properties.first { $0.name == "TEL" })
        #expect(tel.parameter("X-EVOLUTION-E164") == ["612345678", "+33"])
    }

    @Test func outlookTwoOneDecodesQuotedPrintableAndBareTypes() throws {
        let sean = try #require(try contacts("outlook-2.1.vcf").first)
        #expect(sean.formattedName == "Seán O'Brien")
        #expect(sean.note == "Gate code 4411 – ring twice")
        #expect(labels(sean.phoneNumbers) == ["work", "mobile", "workFax"])
        #expect(labels(sean.emailAddresses) == [nil])
        #expect(sean.emailAddresses.first?.isPreferred == true)
        #expect(sean.familyName == "O'Brien" && sean.givenName == "Sean")
        // The model holds decoded text: no QUOTED-PRINTABLE parameter is written back.
        let written = sean.vCard(version: .v30)
        #expect(!written.properties.contains { $0.parameter("ENCODING") != nil })
        #expect(written.first("N")?.parameter("LANGUAGE") == ["en-us"])
    }

    @Test func groupsInBothDialectsAndACompanyCard() throws {
        let cards = try contacts("groups.vcf")
        try #require(cards.count == 3)
        #expect(cards[0].kind == .group)
        #expect(cards[0].memberIdentifiers == ["11111111-AAAA-4BBB-8CCC-000000000001",
                                               "0D0D0D0D-DEAD-4BEE-8F00-123456789ABC"])
        #expect(cards[1].kind == .group && cards[1].memberIdentifiers.count == 2)
        let group = try #require(Group(cards[1]))
        #expect(group.name == "Book Club")
        #expect(group.contains(uid: "urn:uuid:3a9e5c71-0000-4f86-a0c1-e7f9b3d5a2c8"))
        #expect(group.contains(uid: "c2f1e0d9-0000-4000-8000-000000000003"))
        #expect(!group.contains(uid: "someone-else"))
        #expect(cards[2].kind == .organization)
        #expect(Group(cards[2]) == nil)
        #expect(cards[2].phoneNumbers.first?.label == .main)
    }

    @Test func groupKindAndMembersAreWrittenInEachVersionsDialect() throws {
        let appleGroup = try #require(try contacts("groups.vcf").first)
        let v4 = appleGroup.vCard(version: .v40)
        #expect(v4.first("KIND")?.text == "group")
        #expect(v4.properties(named: "MEMBER").map(\.text).first == "urn:uuid:11111111-AAAA-4BBB-8CCC-000000000001")
        #expect(v4.first("X-ADDRESSBOOKSERVER-KIND") == nil)
        let v3 = Contact(vCard: v4).vCard(version: .v30)
        #expect(v3.first("X-ADDRESSBOOKSERVER-KIND")?.text == "group")
        #expect(v3.properties(named: "X-ADDRESSBOOKSERVER-MEMBER").count == 2)
        #expect(v3.first("KIND") == nil)
    }
}
