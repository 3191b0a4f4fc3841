import Contacts
import RoloStore
import VCard

/// What the store indexes of a card: UID, kind and group members as the Contacts
/// `CardSummary` reads them (vCard 4 `KIND`/`MEMBER` or Apple's `X-ADDRESSBOOKSERVER-*`),
/// and one index entry per property value as `VCardProperty.text`, exactly the text the
/// filter's `matches` compares, so an index answer and a card scan always agree.
extension CardMetadata {
    /// Properties copied into the search index (the filter falls back to scanning others).
    static let indexedProperties: Set<String> = ["FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "UID", "CATEGORIES",
                                                 "ADR", "TITLE", "NOTE", "URL", "KIND", "X-ADDRESSBOOKSERVER-KIND"]

    /// Index rows for a card; `rolo import` uses it too, so imported cards index like PUTs.
    public init(card: VCard) {
        let summary = CardSummary(card: card)
        let entries = card.properties.lazy
            .filter { Self.indexedProperties.contains($0.name) }
            .map { IndexEntry(property: $0.name, value: $0.text) }
        self.init(uid: summary.uid ?? "", kind: summary.kind.rawValue, indexEntries: Array(entries), members: summary.members)
    }
}
