/// FN for a card that has none, composed the way Apple Contacts and Google Contacts show
/// such a card: from N ("Prefix Given Middle Family Suffix"; for names written in Han,
/// kana or Hangul, family name first without spaces: 山田太郎), else the first ORG
/// component, else the first NICKNAME, else the first EMAIL, else the first TEL; else "".
/// Never fails.
enum FormattedName {
    /// The text (unescaped) FN would hold. Works on any version (2.1 is read as 3.0).
    static func derive(_ input: VCard) -> String {
        let card = input.version == .v21 ? Upgrade21.toV30(input) : input
        if let n = card.first("N") {
            let parts = VCardEscaping.splitEscaped(n.rawValue, on: Byte.semicolon).map { part in
                VCardEscaping.splitEscaped(String(part), on: Byte.comma)
                    .map { VCardEscaping.unescape($0).trimmingCharacters() }
                    .filter { !$0.isEmpty }
                    .joined(separator: " ")
            }
            func part(_ index: Int) -> String { index < parts.count ? parts[index] : "" }
            let (family, given, middle, prefix, suffix) = (part(0), part(1), part(2), part(3), part(4))
            let name: String
            if [family, given, middle].contains(where: containsEastAsianScript) {
                let core = family + given + middle
                name = [prefix, core, suffix].filter { !$0.isEmpty }.joined(separator: " ")
            } else {
                name = [prefix, given, middle, family, suffix].filter { !$0.isEmpty }.joined(separator: " ")
            }
            if !name.isEmpty { return name }
        }
        for property in card.properties where property.name == "ORG" {
            if let first = property.components.first?.trimmingCharacters(), !first.isEmpty { return first }
        }
        for property in card.properties where property.name == "NICKNAME" {
            if let first = property.listValues.map({ $0.trimmingCharacters() }).first(where: { !$0.isEmpty }) { return first }
        }
        for property in card.properties where property.name == "EMAIL" {
            var text = property.text.trimmingCharacters()
            if text.lowercased().hasPrefix("mailto:") { text.removeFirst(7) }
            if !text.isEmpty { return text }
        }
        for property in card.properties where property.name == "TEL" {
            var text = property.text.trimmingCharacters()
            if text.lowercased().hasPrefix("tel:") { text.removeFirst(4) }
            if !text.isEmpty { return text }
        }
        return ""
    }

    /// The card with an FN added (after N, else after VERSION) when it has none.
    static func ensure(_ card: VCard) -> VCard {
        guard !card.properties.contains(where: { $0.name == "FN" }) else { return card }
        var card = card
        let text = derive(card)
        let value = card.version == .v21 ? text : VCardEscaping.escape(text)
        let fn = VCardProperty(group: nil, upperName: "FN", parameters: [], rawValue: value, line: 0)
        if let n = card.properties.firstIndex(where: { $0.name == "N" }) {
            card.properties.insert(fn, at: n + 1)
        } else if let version = card.properties.firstIndex(where: { $0.name == "VERSION" }) {
            card.properties.insert(fn, at: version + 1)
        } else {
            card.properties.insert(fn, at: 0)
        }
        return card
    }

    private static func containsEastAsianScript(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            switch scalar.value {
            case 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3134F,  // kana, Han
                 0x1100...0x11FF, 0x3130...0x318F, 0xAC00...0xD7AF:  // Hangul
                return true
            default:
                return false
            }
        }
    }
}

extension String {
    /// Drops leading and trailing whitespace and newlines.
    func trimmingCharacters() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[first...last])
    }
}
