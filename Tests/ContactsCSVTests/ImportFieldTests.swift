import Contacts
import ContactsCSV
import Testing

/// Each exporter's file lands in the Contacts model's fields, labels mapped, in its encoding.
struct ImportFieldTests {
    func read(_ name: String) throws -> CSVContactFile {
        try CSVContactFile(bytes: try FixtureFiles.bytes(name))
    }

    func labeled<V>(_ values: [LabeledValue<V>]) -> [String] {
        values.map { "\($0.label?.name ?? "-")=\($0.value)" }
    }

    @Test func googleLegacyExportFillsNamesLabelsAndJoinedValues() throws {
        let file = try read("google-legacy-en.csv")
        #expect(file.format == .google && file.language == .english && file.encoding == .utf8)
        #expect(file.failures.isEmpty)
        #expect(file.rows.map(\.line) == [2, 6], "Ada's quoted note and formatted address span lines 2-5")
        let ada = try #require(file.rows.first?.contact)
        #expect(ada.formattedName == "Ada Lovelace" && ada.givenName == "Ada" && ada.familyName == "Lovelace")
        #expect(ada.namePrefix == "Countess" && ada.nickname == "Enchantress")
        #expect(ada.birthday == ContactDate(year: 1815, month: 12, day: 10))
        #expect(ada.note == "Wrote \"the first program\",\nwith Babbage.")
        #expect(ada.categories == ["Friends", "Math"], "myContacts is Google's own group")
        #expect(labeled(ada.emailAddresses) == ["home=ada@example.org", "home=ada.lovelace@example.org", "work=ada@engine.example"])
        #expect(ada.emailAddresses.map(\.isPreferred) == [true, false, false], "\"* Home\" marks the primary value")
        #expect(labeled(ada.phoneNumbers) == ["mobile=+44 20 7946 0001", "homeFax=+44 20 7946 0002", "Boat=+44 20 7946 0003"])
        #expect(ada.phoneNumbers[2].label == .custom("Boat"), "a custom label stays custom")
        let address = try #require(ada.postalAddresses.first)
        #expect(address.label == .home && address.value.street == "12 St James's Square" && address.value.locality == "London"
                && address.value.postalCode == "SW1Y 4JH" && address.value.country == "United Kingdom")
        #expect(ada.organizationName == "Analytical Engine Ltd" && ada.jobTitle == "Programmer"
                && ada.departmentName == "Notes, Translations")
        #expect(labeled(ada.relatedNames) == ["spouse=William King"])
        #expect(labeled(ada.urlAddresses) == ["homePage=https://ada.example.org/"])
        #expect(ada.dates.map(\.label) == [.anniversary] && ada.dates.first?.value == ContactDate(year: 1835, month: 7, day: 8))
        let grace = try #require(file.rows.last?.contact)
        #expect(grace.birthday == ContactDate(year: nil, month: 12, day: 9), "--12-09 is a birthday without a year")
    }

    @Test func googleCurrentExportWithBOMReadsAsUTF8() throws {
        let file = try read("google-en-bom.csv")
        #expect(file.format == .google && file.encoding == .utf8BOM)
        let soren = try #require(file.rows.first?.contact)
        #expect(soren.givenName == "Søren" && soren.middleName == "Aabye" && soren.familyName == "Kierkegaard")
        #expect(soren.organizationName == "Universitetet" && soren.jobTitle == "Magister")
        #expect(soren.categories == ["Philosophers", "starred"])
        #expect(labeled(soren.phoneNumbers) == ["main=+45 33 12 34 56", "pager=+45 33 12 34 57"])
        #expect(labeled(soren.emailAddresses) == ["other=soren@example.dk"])
        #expect(soren.postalAddresses.first?.value == PostalAddress(poBox: "PO 7", street: "Nytorv 2", locality: "København",
                                                                   postalCode: "1450", country: "Denmark"))
        #expect(labeled(soren.urlAddresses) == ["Blog=https://soren.example.dk/"])
        #expect(file.columns.first { $0.header == "Phone 1 - Label" }?.meaning == "phone 1 (label)")
        #expect(file.columns.first { $0.header == "File As" }?.meaning == nil, "a column not imported says so")
    }

    @Test func googleGermanHeadersAndLabels() throws {
        let file = try read("google-de.csv")
        #expect(file.format == .google && file.language == .german)
        let jurgen = try #require(file.rows.first?.contact)
        #expect(jurgen.givenName == "Jürgen" && jurgen.familyName == "Groß")
        #expect(labeled(jurgen.emailAddresses) == ["home=juergen@example.de"])
        #expect(labeled(jurgen.phoneNumbers) == ["mobile=+49 170 1234567"])
        #expect(jurgen.postalAddresses.first?.value.locality == "München" && jurgen.categories == ["Familie"])
    }

    @Test func outlookEnglishUTF16ExportMapsColumnsToLabels() throws {
        let file = try read("outlook-en-utf16.csv")
        #expect(file.format == .outlook && file.language == .english && file.encoding == .utf16LE)
        #expect(file.failures.isEmpty)
        let alan = try #require(file.rows.first?.contact)
        #expect(alan.namePrefix == "Dr." && alan.givenName == "Alan" && alan.middleName == "Mathison" && alan.familyName == "Turing")
        #expect(alan.organizationName == "University of Manchester" && alan.departmentName == "Computing Machine Laboratory"
                && alan.jobTitle == "Reader")
        #expect(labeled(alan.phoneNumbers) == ["work=+44 161 555 0101", "mobile=+44 7700 900123", "workFax=+44 161 555 0102",
                                              "Car=+44 7700 900124"])
        #expect(alan.emailAddresses.map(\.value) == ["alan@example.ac.uk", "turing@example.org"])
        let work = try #require(alan.postalAddresses.first)
        #expect(work.label == .work && work.value.street == "Oxford Road\nKilburn Building" && work.value.postalCode == "M13 9PL")
        #expect(alan.birthday == ContactDate(year: 1912, month: 6, day: 23))
        #expect(alan.dates.isEmpty, "0/0/00 is Outlook's empty date")
        #expect(alan.categories == ["Scientists", "Bletchley"])
        #expect(alan.note == "Enigma, \"Bombe\"")
        #expect(labeled(alan.relatedNames) == ["manager=Max Newman"])
        #expect(labeled(alan.urlAddresses) == ["homePage=https://turing.example.org/"])
    }

    @Test func outlookGermanWindows1252Export() throws {
        let file = try read("outlook-de-1252.csv")
        #expect(file.format == .outlook && file.language == .german && file.encoding == .windows1252)
        let barbel = try #require(file.rows.first?.contact)
        #expect(barbel.namePrefix == "Frau" && barbel.givenName == "Bärbel" && barbel.familyName == "Müller-Lüdenscheidt")
        #expect(barbel.organizationName == "Öko GmbH" && barbel.jobTitle == "Geschäftsführerin")
        #expect(labeled(barbel.phoneNumbers) == ["home=+49 211 123456", "mobile=+49 171 7654321", "main=+49 211 999"])
        #expect(barbel.postalAddresses.first?.label == .home && barbel.postalAddresses.first?.value.street == "Königsallee 1")
        #expect(barbel.birthday == ContactDate(year: 1965, month: 12, day: 24), "German Outlook writes D.M.YYYY")
        #expect(barbel.dates.first?.value == ContactDate(year: 1990, month: 6, day: 1) && barbel.dates.first?.label == .anniversary)
        #expect(barbel.categories == ["Kunden", "Messe"] && barbel.note == "Grüße – € 5", "0x96 and 0x80 are 1252's – and €")
        #expect(labeled(barbel.relatedNames) == ["spouse=Hans Müller"])
        #expect(file.columns.first { $0.header == "Telefon privat" }?.meaning == "phone (home)")
    }

    @Test func utf16BigEndianAndSemicolonsAreRead() throws {
        let text = "Vorname;Nachname;Mobiltelefon\r\nErika;Mustermann;\"+49 1;2\"\r\n"
        let bytes: [UInt8] = [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        let file = try CSVContactFile(bytes: bytes)
        #expect(file.encoding == .utf16BE && file.format == .outlook)
        #expect(file.rows.first?.contact.familyName == "Mustermann" && file.rows.first?.contact.phoneNumbers.first?.value == "+49 1;2")
    }
}
