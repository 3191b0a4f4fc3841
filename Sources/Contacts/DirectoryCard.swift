import Foundation
import VCard

/// What one person of the organisation's directory (issue 32) becomes as a card: the one
/// place that decides, so a rebuild on any back end writes the same bytes for the same
/// person, and an unchanged person keeps their ETag (a rebuild that changes nothing moves
/// no sync token).
public struct DirectoryCard: Sendable, Hashable {
    public var uid: String
    public var displayName: String
    public var email: String?
    public var phones: [String]
    public var title: String?
    public var department: String?
    public var organization: String?
    public var photo: [UInt8]?

    public init(uid: String, displayName: String, email: String?, phones: [String], title: String?, department: String?,
                organization: String?, photo: [UInt8]?) {
        self.uid = uid; self.displayName = displayName; self.email = email; self.phones = phones; self.title = title
        self.department = department; self.organization = organization; self.photo = photo
    }

    /// A photo larger than this is left out (a directory is synced to every phone).
    public static let maximumPhotoBytes = 256 * 1024

    /// A phone number as a directory accepts it: digits with the usual separators, a
    /// leading `+`, an extension after `x` or `;ext=`; anything with letters is refused.
    public static func isPhoneNumber(_ text: String) -> Bool {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        if let range = rest.range(of: ";ext=") ?? rest.range(of: "x", options: .caseInsensitive) {
            let ext = rest[range.upperBound...]
            guard !ext.isEmpty, ext.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
            rest = rest[..<range.lowerBound]
        }
        let digits = rest.filter { $0.isASCII && $0.isNumber }.count
        guard digits >= 2, digits <= 20 else { return false }
        return rest.enumerated().allSatisfy { index, character in
            (character.isASCII && character.isNumber) || " -./()".contains(character) || (character == "+" && index == 0)
        }
    }

    /// The photo's media type from its first bytes: JPEG and PNG only.
    public static func photoType(_ bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        return nil
    }

    /// The card as vCard 3.0 (what every client reads): FN, N (the last word as the family
    /// name), work e-mail and phones, TITLE, ORG with the department, PHOTO. Values that
    /// break the rules above are left out.
    public var vCardText: String {
        let words = displayName.split(separator: " ").map(String.init)
        let family = words.count > 1 ? words.last! : ""
        let given = words.count > 1 ? words.dropLast().joined(separator: " ") : displayName
        let image = photo.flatMap { bytes -> ContactImage? in
            guard bytes.count <= Self.maximumPhotoBytes, let type = Self.photoType(bytes) else { return nil }
            return ContactImage(mediaType: type, data: bytes)
        }
        let contact = Contact(
            identifier: uid, formattedName: displayName, givenName: given, familyName: family,
            organizationName: organization ?? "", departmentName: department ?? "", jobTitle: title ?? "", image: image,
            phoneNumbers: phones.filter(Self.isPhoneNumber).enumerated().map { index, number in
                LabeledValue(identifier: "TEL#\(index + 1)", label: .work, value: number.trimmingCharacters(in: .whitespaces))
            },
            emailAddresses: email.map { [LabeledValue(identifier: "EMAIL#1", label: .work, value: $0)] } ?? [])
        return contact.vCardText(version: .v30)
    }
}
