import Contacts
import RoloStore
import VCard

/// What the store indexes of a card: UID, kind and group members as the Contacts
/// `CardIdentity` reads them (vCard 4 `KIND`/`MEMBER` or Apple's `X-ADDRESSBOOKSERVER-*`),
/// and one index entry per property value as `VCardProperty.text`, exactly the text the
/// filter's `matches` compares, so an index answer and a card scan always agree.
extension CardMetadata {
    /// Properties copied into the search index: what clients look cards up by (names, email,
    /// phone, organisation, categories, UID, kind). A query on any other property is answered
    /// by scanning the cards, with the same result. `NOTE` and `ADR` are left out: long
    /// free text that clients do not search, yet about a fifth of a card's index entries
    /// and more of their bytes, each a b-tree leaf written at a random place on every PUT.
    public static let indexedProperties: Set<String> = ["FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "UID", "CATEGORIES",
                                                 "TITLE", "URL", "KIND", "X-ADDRESSBOOKSERVER-KIND"]

    /// Index rows for a card; `rolo import` uses it too, so imported cards index like PUTs.
    public init(card: VCard) {
        let identity = CardIdentity(card: card)
        let entries = card.properties.lazy
            .filter { Self.indexedProperties.contains($0.name) }
            .map { IndexEntry(property: $0.name, value: $0.text) }
        self.init(uid: identity.uid ?? "", kind: identity.kind.rawValue, indexEntries: Array(entries), members: identity.members,
                  listing: CardListingFields(card: card))
    }
}
