import Contacts
import Foundation
import Testing
import VCard

/// `DirectoryCard`: what a directory entry becomes as a card, and the values it leaves out.
struct DirectoryCardTests {
    static func card(phones: [String] = [], photo: [UInt8]? = nil) -> DirectoryCard {
        DirectoryCard(uid: "rolo-directory-anna", displayName: "Anna Maria Berg", email: "anna@example.org", phones: phones,
                      title: "Engineer", department: "Platform", organization: "Example Ltd", photo: photo)
    }

    @Test func theCardCarriesEveryFieldAsAClientReadsIt() throws {
        let text = Self.card(phones: ["+49 30 1234-56"]).vCardText
        let parsed = try #require(try VCardParser.parse(text).first)
        let contact = Contact(vCard: parsed)
        #expect(contact.identifier == "rolo-directory-anna" && contact.formattedName == "Anna Maria Berg")
        #expect(contact.givenName == "Anna Maria" && contact.familyName == "Berg")
        #expect(contact.organizationName == "Example Ltd" && contact.departmentName == "Platform" && contact.jobTitle == "Engineer")
        #expect(contact.emailAddresses.map(\.value) == ["anna@example.org"])
        #expect(contact.phoneNumbers.map(\.value) == ["+49 30 1234-56"])
        #expect(text.hasPrefix("BEGIN:VCARD\r\nVERSION:3.0\r\n"))
    }

    @Test func theSameEntryIsTheSameBytes() {
        #expect(Self.card(phones: ["+1 555 0100"]).vCardText == Self.card(phones: ["+1 555 0100"]).vCardText)
    }

    @Test func malformedPhonesAndPhotosAreLeftOut() throws {
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 7, count: 64)
        let text = Self.card(phones: ["call me", "+49 170 ABC", "+49 170 1", "1"], photo: jpeg).vCardText
        let contact = Contact(vCard: try #require(try VCardParser.parse(text).first))
        #expect(contact.phoneNumbers.map(\.value) == ["+49 170 1"])
        #expect(contact.image?.mediaType == "image/jpeg" && contact.image?.data == jpeg)
        let big = [0xFF, 0xD8, 0xFF] + Array(repeating: UInt8(1), count: DirectoryCard.maximumPhotoBytes)
        #expect(Contact(vCard: try #require(try VCardParser.parse(Self.card(photo: big).vCardText).first)).image == nil)
        #expect(Contact(vCard: try #require(try VCardParser.parse(Self.card(photo: [1, 2, 3, 4]).vCardText).first)).image == nil)
        #expect(DirectoryCard.isPhoneNumber("+1 (555) 010-0100 x12") && !DirectoryCard.isPhoneNumber("+1 555+0100"))
    }
}
