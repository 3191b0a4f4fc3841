import VCard

/// Merges duplicate cards into one survivor, never on its own: a person picks the survivor
/// and, where the cards disagree on a single value (name, organisation, birthday, note,
/// photo…), which card's value to keep. Every multi value (phones, e-mail addresses,
/// addresses, URLs, messaging, social profiles, dates, related names, categories) of every
/// card is kept, without exact duplicates. The survivor is patched (`CardPatch`), so its
/// own lines keep their bytes.
public enum CardMerge {
    /// Single-valued properties a person chooses between, in the order a page asks.
    public static let singleValued = ["FN", "N", "NICKNAME", "ORG", "TITLE", "BDAY", "NOTE", "PHOTO"]
    /// Multi-valued properties whose values are joined.
    public static let multiValued: Set<String> = ["TEL", "EMAIL", "ADR", "URL", "IMPP", "X-SOCIALPROFILE", "X-ABDATE",
                                                  "X-ABRELATEDNAMES", "RELATED", "ANNIVERSARY"]

    /// A single value the cards disagree on: each distinct value with the index of the
    /// first card holding it (0 is the survivor, 1… the others in the order given).
    public struct Conflict: Sendable, Hashable {
        public var property: String
        public var options: [(card: Int, value: String)]

        public static func == (lhs: Conflict, rhs: Conflict) -> Bool {
            lhs.property == rhs.property && lhs.options.map(\.card) == rhs.options.map(\.card)
                && lhs.options.map(\.value) == rhs.options.map(\.value)
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(property)
            for option in options { hasher.combine(option.card); hasher.combine(option.value) }
        }
    }

    /// The single values on which `cards` (survivor first) disagree; a value only one
    /// card has is no conflict (it is kept).
    public static func conflicts(_ cards: [VCard]) -> [Conflict] {
        singleValued.compactMap { name in
            var options: [(card: Int, value: String)] = []
            for (index, card) in cards.enumerated() {
                guard let property = card.first(name) else { continue }
                let value = comparable(property)
                if !options.contains(where: { $0.value == value }) { options.append((index, value)) }
            }
            return options.count > 1 ? Conflict(property: name, options: options) : nil
        }
    }

    /// Merges `others` into `survivor`. `choices` maps a single-valued property to the
    /// index of the card whose value wins (0 the survivor, 1… `others`); without a choice
    /// the survivor's value stays, and a value only another card has is taken.
    public static func merge(into survivor: inout CardPatch, others: [VCard], choices: [String: Int] = [:]) {
        let version = survivor.version
        let converted = others.map { $0.version == version ? $0 : VCardConverter.convert($0, to: version) }
        // Single values.
        for name in singleValued {
            let chosen = choices[name] ?? 0
            let current = survivor.ids(named: name).first
            var source: (card: VCard, property: VCardProperty)?
            if chosen > 0, chosen <= converted.count, let property = converted[chosen - 1].first(name) {
                source = (converted[chosen - 1], property)
            } else if current == nil, let card = converted.first(where: { $0.first(name) != nil }), let property = card.first(name) {
                source = (card, property)
            }
            guard let source else { continue }
            var property = source.property
            property.group = nil
            property.line = 0
            if let current {
                if let existing = survivor.property(current), comparable(existing) == comparable(property) { continue }
                survivor.replace(current, with: property)
            } else {
                survivor.insert(property)
            }
        }
        // Multi values, with their item-group companions under a group of their own.
        for card in converted {
            for property in card.properties where multiValued.contains(property.name) {
                let key = comparable(property)
                let present = survivor.properties.contains { $0.property.name == property.name && comparable($0.property) == key }
                guard !present else { continue }
                var copy = property
                copy.line = 0
                let companions = property.group.map { group in
                    card.properties.filter { ($0.name == "X-ABLABEL" || $0.name == "X-ABADR") && $0.group?.lowercased() == group.lowercased() }
                } ?? []
                let group = companions.isEmpty ? nil : survivor.unusedGroup()
                copy.group = group
                var last = survivor.insert(copy)
                for companion in companions {
                    var moved = companion
                    moved.group = group
                    moved.line = 0
                    last = survivor.insert(moved, after: last)
                }
            }
            let categories = card.properties.filter { $0.name == "CATEGORIES" }.flatMap(\.listValues)
            for category in categories where !category.isEmpty { survivor.setCategory(category, member: true) }
            // Everything else the card says that the survivor does not (an app's X-
            // property, a GENDER, a LANG...): kept too, so a merge loses no value.
            for property in card.properties where Self.carriedAsIs(property.name) {
                let key = comparable(property)
                let present = survivor.properties.contains { $0.property.name == property.name && comparable($0.property) == key }
                guard !present else { continue }
                var copy = property
                copy.line = 0
                // Its group tied it to companions this card alone had.
                copy.group = nil
                survivor.insert(copy)
            }
        }
    }

    /// The card's identity and structure, which stay the survivor's, and the properties the
    /// merge handles itself (single and multi values, their label companions, categories).
    static let handledOrStructural: Set<String> = [
        "BEGIN", "END", "VERSION", "UID", "REV", "PRODID", "KIND", "X-ADDRESSBOOKSERVER-KIND", "MEMBER",
        "X-ADDRESSBOOKSERVER-MEMBER", "CLIENTPIDMAP", "X-ABLABEL", "X-ABADR", "CATEGORIES", "FN", "N", "SOURCE", "NAME",
    ]

    /// Copied as they are from a merged card when the survivor has no equal one.
    static func carriedAsIs(_ name: String) -> Bool {
        !handledOrStructural.contains(name) && !singleValued.contains(name) && !multiValued.contains(name)
    }

    /// A property's value as two cards are compared by: phone numbers by their digits,
    /// e-mail addresses case-insensitively, photos by their bytes, other text as written.
    static func comparable(_ property: VCardProperty) -> String {
        switch property.name {
        case "TEL":
            let digits = property.text.filter(\.isASCIIDigitCharacter)
            return digits.isEmpty ? property.text : digits
        case "EMAIL": return property.text.lowercased()
        case "PHOTO": return ContactImage(photo: property).map { "\($0.data.hashValue):\($0.data.count)" } ?? property.rawValue
        case "BDAY": return CardEdit.date(property)?.description ?? property.text
        case "N", "ORG", "ADR": return property.components.map(\.trimmingSpaces).joined(separator: ";")
        default: return property.text.trimmingSpaces
        }
    }
}
