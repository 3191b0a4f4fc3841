import Contacts
import RoloStore
import VCard

extension CardListingFields {
    /// A card's list row: written with the card by every write path (PUT, import, the web
    /// UI), so lists and searches never parse cards.
    public init(card: VCard) {
        // Each candidate for the display name with the index of its line in `lines`, which
        // holds the non-empty searched texts in card order.
        var name: (text: String, line: Int)?
        var structuredName: (text: String, line: Int)?
        var organization: (text: String, line: Int)?
        var email: (text: String, line: Int)?
        var phone: (text: String, line: Int)?
        var hasPhoto = false
        var lines: [String] = []
        func search(_ text: String) {
            if !text.isEmpty { lines.append(text) }
        }
        for property in card.properties {
            switch property.name {
            case "FN":
                let text = Self.trimmed(property.text)
                if name == nil, !text.isEmpty { name = (text, lines.count) }
                search(text)
            case "N":
                // Given and additional names first, the way a person says the name.
                let text = Self.joinedComponents(of: property.rawValue, order: Self.spokenNameOrder)
                if structuredName == nil, !text.isEmpty { structuredName = (text, lines.count) }
                search(text)
            case "ORG":
                let text = Self.joinedComponents(of: property.rawValue, order: nil)
                if organization == nil, !text.isEmpty { organization = (text, lines.count) }
                search(text)
            case "EMAIL":
                let text = property.text
                if email == nil, !text.isEmpty { email = (text, lines.count) }
                search(text)
            case "TEL":
                let value = property.text
                let text = value.hasPrefix("tel:") ? String(value.dropFirst(4)) : value
                if phone == nil, !text.isEmpty { phone = (text, lines.count) }
                search(text)
                search(Self.digits(text))
            case "NICKNAME":
                for nickname in property.listValues { search(nickname) }
            case "CATEGORIES":
                for category in property.listValues where !category.isEmpty { search(String(Self.categoryMark) + category) }
            case "PHOTO":
                hasPhoto = hasPhoto || Self.isInlineImage(property)
            default:
                break
            }
        }
        let display = name ?? structuredName ?? organization ?? email ?? phone
        let displayName = display?.text ?? ""
        let searchText = Self.searchText(lines)
        let foldedName = display.flatMap { Self.foldedLine($0.line, of: lines, in: searchText) } ?? CaseFolding.search(displayName)
        self.init(displayName: displayName, sortKey: Self.sortKey(folded: foldedName), organization: organization?.text,
                  email: email?.text, phone: phone?.text, hasPhoto: hasPhoto, searchText: searchText)
    }

    /// N's components in the order a person says the name: given, additional, family,
    /// prefixes, suffixes.
    static let spokenNameOrder = [1, 2, 0, 3, 4]

    /// The non-empty components of a structured value (`VCardProperty.components`), in
    /// `order` (by their index; nil: as written), unescaped and joined by spaces. Only the
    /// parts used are unescaped, into one string: the array of parts, reordered, filtered
    /// and joined, was a seventh of the row.
    static func joinedComponents(of rawValue: String, order: [Int]?) -> String {
        let parts = VCardEscaping.splitEscaped(rawValue, on: UInt8(ascii: ";"))
        var text = ""
        // An escaped part is empty exactly when its unescaped text is.
        func append(_ part: Substring) {
            guard !part.isEmpty else { return }
            if !text.isEmpty { text += " " }
            text += VCardEscaping.unescape(part)
        }
        if let order {
            for index in order where index < parts.count { append(parts[index]) }
        } else {
            for part in parts { append(part) }
        }
        return text
    }

    /// The fold of `lines[index]` read out of `searchText` (the fold of `lines`, one per
    /// line): each line folds alone, so these are the bytes `CaseFolding.search` gives that
    /// line, without folding the display name twice (a seventh of the row, issue 34). nil when
    /// a line break inside that line or an earlier one would shift the count.
    static func foldedLine(_ index: Int, of lines: [String], in searchText: String) -> String? {
        guard lines.indices.contains(index), !lines[...index].contains(where: { $0.utf8Contains(0x0A) }) else { return nil }
        let text = searchText.utf8
        var start = text.startIndex
        for _ in 0..<index {
            guard let lineBreak = text[start...].firstIndex(of: 0x0A) else { return nil }
            start = text.index(after: lineBreak)
        }
        let end = text[start...].firstIndex(of: 0x0A) ?? text.endIndex
        return String(searchText[start..<end])
    }

    /// The lines folded and joined. Folded as one text by the table when it folds them all: the
    /// fold maps each line alone, as a line break is neither cased nor a combining mark, so no
    /// rule (final sigma, NFKD's reordering) reaches across it (`theSearchTextFoldsAsItsLinesFoldAlone`).
    /// Otherwise line by line, so that only the lines that need Foundation's fold get it.
    static func searchText(_ lines: [String]) -> String {
        CaseFolding.searchByTable(lines.joined(separator: "\n")) ?? lines.map(CaseFolding.search).joined(separator: "\n")
    }

    /// The numbers of `text` (`Character.isNumber`), read byte by byte when it is ASCII,
    /// as phone numbers are: Character by Character it cost a tenth of the row.
    static func digits(_ text: String) -> String {
        guard text.utf8IsASCII else { return text.filter(\.isNumber) }
        return String(decoding: text.utf8.filter { $0 >= 0x30 && $0 <= 0x39 }, as: UTF8.self)
    }

    /// `text` without the white space at its ends, as Foundation's
    /// `trimmingCharacters(in: .whitespacesAndNewlines)` gives it, which cost a fifth of the
    /// row (issue 34): most names have none, and then `text` is the answer as it is. Its set is
    /// Unicode's White_Space and U+200B, the zero-width space (`aNameIsTrimmedAsFoundationTrimsIt`).
    static func trimmed(_ text: String) -> String {
        // Unicode's White_Space, a closed set, written out: no property lookup for the
        // first and last letter of every name.
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200B, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
            default: false
            }
        }
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last,
              isSpace(first) || isSpace(last) else { return text }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The folded name without leading punctuation or spaces ("'Bob" sorts with B); a card
    /// without any name sorts last.
    public static func sortKey(_ displayName: String) -> String {
        sortKey(folded: CaseFolding.search(displayName))
    }

    /// `sortKey` of a name already folded by `CaseFolding.search`.
    static func sortKey(folded: String) -> String {
        // Most names begin with a letter or a digit: nothing to drop, and no Character to form
        // (a Character is a letter or a number by its first scalar).
        if let first = folded.unicodeScalars.first, first.properties.isAlphabetic || first.properties.numericType != nil {
            return folded
        }
        let key = folded.drop { !($0.isLetter || $0.isNumber) }
        return key.isEmpty ? "\u{10FFFF}" : String(key)
    }

    /// An inline photo (a `data:` URI or base64), the only kind the web UI shows: a remote
    /// URI is never fetched.
    static func isInlineImage(_ property: VCardProperty) -> Bool {
        if property.rawValue.prefix(5).lowercased() == "data:" { return true }
        let encoding = property.parameters.first { $0.name == "ENCODING" }?.values.first?.uppercased()
        return encoding == "B" || encoding == "BASE64"
    }
}
