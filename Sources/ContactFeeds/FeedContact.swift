import Contacts
import Foundation
import VCard

/// One card as a feed writer takes it: the model, and a key that stays the same for as long
/// as the card exists (its UID, else its book and resource name), so a calendar app sees the
/// same event again after every poll instead of a new one.
public struct FeedContact: Sendable {
    public var key: String
    public var contact: Contact
    /// Dates the model leaves unmapped but writers use: vCard 3 `X-ANNIVERSARY`
    /// (Evolution, KAddressBook) is not read by `Contacts`, which keeps it in
    /// `unmappedProperties`.
    public var extraAnniversaries: [ContactDate]

    public init(key: String, contact: Contact) {
        self.key = key
        self.contact = contact
        extraAnniversaries = contact.unmappedProperties
            .filter { $0.name == "X-ANNIVERSARY" }
            .compactMap { ContactDate(vCardText: $0.text) }
    }

    /// Reads a stored card's bytes leniently (a feed shows what it can, never refuses a book
    /// for one odd card); nil when nothing in them is a vCard.
    public init?(key: String, bytes: [UInt8]) {
        guard let card = try? VCardParser.parse(bytes, mode: .lenient).first else { return nil }
        let contact = Contact(vCard: card)
        self.init(key: contact.identifier.map { $0.isEmpty ? key : $0 } ?? key, contact: contact)
    }

    /// The name a feed shows: FN, else the personal name, else the organisation.
    public var name: String {
        if let formatted = contact.formattedName?.trimmingCharacters(in: .whitespaces), !formatted.isEmpty {
            return formatted
        }
        return contact.displayName
    }
}
