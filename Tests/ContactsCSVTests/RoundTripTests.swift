import Contacts
import ContactsCSV
import Testing
import VCard

/// Export then import gives the same fields, for both formats.
struct RoundTripTests {
    /// The fields a CSV carries, labels included.
    struct Fields: Equatable {
        var names: [String], organization: [String], birthday: ContactDate?, note: String?, categories: [String]
        var phones: [String], emails: [String], addresses: [String], urls: [String], dates: [String], related: [String]
        init(_ c: Contact) {
            func l<V>(_ values: [LabeledValue<V>]) -> [String] { values.map { "\($0.label?.name ?? "-")=\($0.value)" } }
            names = [c.namePrefix, c.givenName, c.middleName, c.familyName, c.nameSuffix]
            organization = [c.organizationName, c.departmentName, c.jobTitle]
            birthday = c.birthday; note = c.note; categories = c.categories
            phones = l(c.phoneNumbers); emails = l(c.emailAddresses); addresses = l(c.postalAddresses)
            urls = l(c.urlAddresses); dates = l(c.dates); related = l(c.relatedNames)
        }
    }

    static let card = """
        BEGIN:VCARD\r
        VERSION:3.0\r
        UID:rt-1\r
        FN:Dr. Ada B. Lovelace\r
        N:Lovelace;Ada;B.;Dr.;\r
        ORG:Engines\\, Ltd;Research\r
        TITLE:Programmer\r
        BDAY:--12-10\r
        NOTE:Line one\\, with comma\\nand "quotes"\r
        CATEGORIES:Friends,Math\r
        TEL;TYPE=CELL:+44 1\r
        TEL;TYPE=WORK:+44 2\r
        TEL;TYPE=HOME,FAX:+44 3\r
        EMAIL;TYPE=INTERNET:ada@example.org\r
        ADR;TYPE=HOME:;;12 Square\\nFlat 3;London;;SW1;United Kingdom\r
        URL;TYPE=HOME:https://ada.example.org/\r
        END:VCARD\r

        """

    static let group = """
        BEGIN:VCARD\r
        VERSION:3.0\r
        UID:g-1\r
        FN:Pioneers\r
        X-ADDRESSBOOKSERVER-KIND:group\r
        X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:rt-1\r
        END:VCARD\r

        """

    func contacts() throws -> [Contact] {
        try VCardParser.parse(Self.card + Self.group).map(Contact.init(vCard:))
    }

    @Test func googleExportThenImportKeepsTheFields() throws {
        let original = try contacts()
        let file = try CSVContactFile(bytes: CSVContactWriter.bytes(original, as: .google))
        #expect(file.format == .google && file.failures.isEmpty && file.rows.count == 1, "the group is no row")
        var expected = Fields(original[0])
        expected.categories.append("Pioneers")
        #expect(Fields(file.rows[0].contact) == expected)
    }

    @Test func outlookExportThenImportKeepsTheFields() throws {
        let original = try contacts()
        let bytes = CSVContactWriter.bytes(original, as: .outlook)
        #expect(bytes.starts(with: [0xEF, 0xBB, 0xBF]))
        let file = try CSVContactFile(bytes: bytes)
        #expect(file.format == .outlook && file.encoding == .utf8BOM && file.failures.isEmpty && file.rows.count == 1)
        var expected = Fields(original[0])
        expected.categories.append("Pioneers")
        // Outlook's e-mail columns have no label, its web page column is the home page, and
        // phones come back in its column order.
        expected.phones = ["work=+44 2", "mobile=+44 1", "homeFax=+44 3"]
        expected.emails = ["-=ada@example.org"]
        expected.urls = ["homePage=https://ada.example.org/"]
        #expect(Fields(file.rows[0].contact) == expected)
    }

    @Test func importedFixturesRoundTripThroughBothFormats() throws {
        for name in ["google-legacy-en.csv", "google-en-bom.csv", "google-de.csv"] {
            let first = try CSVContactFile(bytes: try FixtureFiles.bytes(name))
            let again = try CSVContactFile(bytes: CSVContactWriter.bytes(first.rows.map(\.contact), as: .google))
            #expect(again.rows.map { Fields($0.contact) } == first.rows.map { Fields($0.contact) }, "\(name)")
        }
        for name in ["outlook-en-utf16.csv", "outlook-de-1252.csv"] {
            let first = try CSVContactFile(bytes: try FixtureFiles.bytes(name))
            let again = try CSVContactFile(bytes: CSVContactWriter.bytes(first.rows.map(\.contact), as: .outlook))
            #expect(again.rows.map { Fields($0.contact) } == first.rows.map { Fields($0.contact) }, "\(name)")
        }
    }

    @Test func rowsBecomeValidVCards() throws {
        let file = try CSVContactFile(bytes: try FixtureFiles.bytes("outlook-de-1252.csv"))
        let card = file.rows[0].contact.vCard(version: .v30)
        #expect(throws: Never.self) { try VCardValidator.validate(VCardConverter.addingFormattedName(card), requireUID: false) }
    }
}
