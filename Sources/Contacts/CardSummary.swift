import VCard

/// A card's `CardIdentity` (UID, kind, group members) with a text per property as
/// `addressbook-query` filters would read it, computed straight from the parsed vCard (no
/// full model build). A PUT needs only the identity; the DAV layer takes that alone.
public struct CardSummary: Sendable, Hashable {
    /// UID as written; nil when the card has none.
    public var uid: String?
    public var kind: ContactKind
    /// (PROPERTY NAME upper-cased, value as text) for every property: structured values
    /// (N, ADR, ORG) with their non-empty components joined by a space, one pair per
    /// CATEGORIES value, inline binary values (PHOTO data) as "".
    public var searchFields: [SearchField]
    /// Member UIDs with `urn:uuid:` removed; empty unless the card is a group.
    public var members: [String]

    /// One indexed (property, text) pair.
    public struct SearchField: Sendable, Hashable {
        public var property: String
        public var value: String

        public init(property: String, value: String) {
            self.property = property
            self.value = value
        }
    }

    public init(card: VCard) {
        let identity = CardIdentity(card: card)
        var fields: [SearchField] = []
        fields.reserveCapacity(card.properties.count)
        for property in card.properties {
            let name = property.name
            switch name {
            case "N", "ADR", "ORG":
                let text = property.components.filter { !$0.isEmpty }.joined(separator: " ")
                fields.append(SearchField(property: name, value: text))
            case "CATEGORIES":
                for category in property.listValues where !category.isEmpty {
                    fields.append(SearchField(property: name, value: category))
                }
            case "PHOTO", "LOGO", "SOUND", "KEY":
                let binary = CardSummary.isInlineBinary(property)
                fields.append(SearchField(property: name, value: binary ? "" : property.text))
            default:
                fields.append(SearchField(property: name, value: property.text))
            }
        }
        self.uid = identity.uid
        self.kind = identity.kind
        self.searchFields = fields
        self.members = identity.members
    }

    /// Inline binary data is never searched: indexing a 200 KB base64 photo helps no query.
    private static func isInlineBinary(_ property: VCardProperty) -> Bool {
        if property.rawValue.prefix(5).lowercased() == "data:" { return true }
        let encoding = property.parameters.first { $0.name == "ENCODING" }?.values.first?.uppercased()
        return encoding == "B" || encoding == "BASE64"
    }
}
