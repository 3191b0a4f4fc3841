import VCard

/// Who a card is, as the store keeps it beside the card: its UID, its kind and, for a
/// group, its members (vCard 4 `KIND`/`MEMBER` or Apple's `X-ADDRESSBOOKSERVER-*`). One
/// pass over the properties that builds no text for the others, since every PUT needs it.
public struct CardIdentity: Sendable, Hashable {
    /// UID as written; nil when the card has none.
    public var uid: String?
    public var kind: ContactKind
    /// Member UIDs with `urn:uuid:` removed; empty unless the card is a group.
    public var members: [String]

    public init(uid: String?, kind: ContactKind, members: [String]) {
        self.uid = uid
        self.kind = kind
        self.members = members
    }

    public init(card: VCard) {
        var uid: String?
        var isGroup = false
        var isOrganization = false
        var members: [String] = []
        for property in card.properties {
            let name = property.name
            switch name {
            case "UID" where uid == nil: uid = property.text
            case "KIND", "X-ADDRESSBOOKSERVER-KIND":
                let kind = property.text.lowercased()
                isGroup = isGroup || kind == "group"
                isOrganization = isOrganization || (kind == "org" && name == "KIND")
            case "X-ABSHOWAS": isOrganization = isOrganization || property.text.uppercased() == "COMPANY"
            case "MEMBER", "X-ADDRESSBOOKSERVER-MEMBER": members.append(MemberReference.stripped(property.text))
            default: break
            }
        }
        self.uid = uid
        self.kind = isGroup ? .group : isOrganization ? .organization : .person
        self.members = isGroup ? members : []
    }
}
