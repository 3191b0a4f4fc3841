/// A contact group (a vCard with KIND:group or X-ADDRESSBOOKSERVER-KIND:group), like `CNGroup`.
public struct Group: Sendable, Hashable {
    public var identifier: String?
    public var name: String
    /// Members' UIDs, `urn:uuid:` removed, in card order; a member need not exist (dangling UIDs are kept).
    public var memberIdentifiers: [String]

    public init(identifier: String?, name: String, memberIdentifiers: [String]) {
        self.identifier = identifier
        self.name = name
        self.memberIdentifiers = memberIdentifiers
    }

    /// The group a group card describes; nil when the contact is not a group.
    public init?(_ contact: Contact) {
        guard contact.kind == .group else { return nil }
        self.init(identifier: contact.identifier,
                  name: contact.formattedName ?? contact.familyName,
                  memberIdentifiers: contact.memberIdentifiers)
    }

    /// Whether a card with this UID is a member: `urn:uuid:` is ignored on both sides.
    public func contains(uid: String) -> Bool {
        memberIdentifiers.contains(MemberReference.stripped(uid))
    }
}

/// Member references: `urn:uuid:X` and `X` name the same card.
enum MemberReference {
    static let prefix = "urn:uuid:"

    static func stripped(_ reference: String) -> String {
        reference.lowercased().hasPrefix(prefix) ? String(reference.dropFirst(prefix.count)) : reference
    }

    /// The value to write: a bare UID gets `urn:uuid:`; any other URI is written as it is.
    static func uri(for member: String) -> String {
        member.contains(":") ? member : prefix + member
    }
}
