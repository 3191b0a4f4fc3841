import Contacts
import Testing
import VCard

struct ContactDateTests {
    @Test(arguments: [
        ("1986-05-21", "1986-05-21"), ("19860521", "1986-05-21"), ("--0315", "--03-15"), ("--03-15", "--03-15"),
        ("20090808T1430-0500", "2009-08-08T14:30-05:00"), ("1953-10-15T23:10:00Z", "1953-10-15T23:10:00Z"),
    ])
    func readsTheFormsWritersUse(text: String, expected: String) throws {
        #expect(try #require(ContactDate(vCardText: text)).description == expected)
    }

    @Test(arguments: ["", "circa 1800", "2024-13-01", "--1", "1986-05-21Tnoon"])
    func rejectsWhatIsNotADate(text: String) {
        #expect(ContactDate(vCardText: text) == nil)
    }

    @Test func aYearlessDateIsWrittenPerVersion() throws {
        let birthday = ContactDate(year: nil, month: 3, day: 15)
        let contact = Contact(identifier: "d", formattedName: "D", birthday: birthday)
        let v3 = contact.vCard(version: .v30).first("BDAY")
        #expect(v3?.rawValue == "1604-03-15")
        #expect(v3?.parameter("X-APPLE-OMIT-YEAR") == ["1604"])
        #expect(contact.vCard(version: .v40).first("BDAY")?.rawValue == "--0315")
        #expect(Contact(vCard: contact.vCard(version: .v30)).birthday == birthday)
        #expect(Contact(vCard: contact.vCard(version: .v40)).birthday == birthday)
    }

    @Test func anUnreadableBirthdayIsKeptAsWritten() throws {
        let card = try #require(try VCardParser.parse("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:X\r\nBDAY;VALUE=text:circa 1800\r\nEND:VCARD\r\n").first)
        let contact = Contact(vCard: card)
        #expect(contact.birthday == nil)
        #expect(contact.unmappedProperties.map(\.rawValue) == ["circa 1800"])
    }
}
