import RoloStore
import VCard

/// What the store indexes of a card, read from the parsed vCard: its UID, kind, the
/// property values addressbook-query filters on, and group members (vCard 4 `MEMBER` or
/// Apple's `X-ADDRESSBOOKSERVER-MEMBER`).
extension CardMetadata {
    /// Properties copied into the search index.
    static let indexedProperties: Set<String> = ["FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "UID", "CATEGORIES",
                                                 "ADR", "TITLE", "NOTE", "URL", "KIND", "X-ADDRESSBOOKSERVER-KIND"]

    init(card: VCard) {
        let uid = card.first("UID")?.text ?? ""
        let kindValue = (card.first("KIND") ?? card.first("X-ADDRESSBOOKSERVER-KIND"))?.text.lowercased()
        let kind = switch kindValue {
        case "group": "group"
        case "org", "organization": "organization"
        default: "person"
        }
        var entries: [IndexEntry] = []
        for property in card.properties where Self.indexedProperties.contains(property.name) {
            entries.append(IndexEntry(property: property.name, value: property.text))
        }
        let members = (card.properties(named: "MEMBER") + card.properties(named: "X-ADDRESSBOOKSERVER-MEMBER"))
            .map { CardMetadata.memberUID($0.text) }
        self.init(uid: uid, kind: kind, indexEntries: entries, members: members)
    }

    /// `urn:uuid:ABC` -> `ABC`.
    static func memberUID(_ value: String) -> String {
        value.lowercased().hasPrefix("urn:uuid:") ? String(value.dropFirst(9)) : value
    }
}
