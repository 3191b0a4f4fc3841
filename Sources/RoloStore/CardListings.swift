import Foundation

/// What a list row shows of a card, and the text a list search looks in. The caller
/// computes it from the vCard when it writes the card (the store never parses vCards), and
/// the store keeps it beside the card: a list page of 50 rows reads 50 of these rows, in
/// order, and no card (issue 19: the web UI at 50 000 contacts).
public struct CardListingFields: Sendable, Hashable {
    /// FN, or a name made of N, ORG or EMAIL when the card has no FN.
    public var displayName: String
    /// What the list sorts by and jumps to a letter by: the display name case-folded
    /// (`CaseFolding.search`), with leading punctuation dropped.
    public var sortKey: String
    public var organization: String?
    /// The first e-mail address and phone number, as written.
    public var email: String?
    public var phone: String?
    /// The card has an inline photo (the list then asks for a thumbnail; never a remote one).
    public var hasPhoto: Bool
    /// Names, nickname, organisation, e-mail addresses, phone numbers and their digits
    /// alone, and categories (each line marked `categoryMark`), folded by
    /// `CaseFolding.search`, one per line: what a list search finds substrings in, and
    /// how a category filter finds a category's cards without mistaking a name for one.
    public var searchText: String

    /// Starts a category's line in `searchText`: no one types it, so a search never depends on it.
    public static let categoryMark: Character = "\u{1E}"

    /// A category's line in `searchText`, with the line break that ends it.
    public static func searchLine(category: String) -> String {
        String(categoryMark) + CaseFolding.search(category) + "\n"
    }

    public init(displayName: String, sortKey: String, organization: String?, email: String?, phone: String?,
                hasPhoto: Bool, searchText: String) {
        self.displayName = displayName; self.sortKey = sortKey; self.organization = organization
        self.email = email; self.phone = phone; self.hasPhoto = hasPhoto; self.searchText = searchText
    }
}

/// A card as a list shows it.
public struct CardListing: Sendable, Hashable {
    public var name: String
    public var uid: String
    /// "individual", "group", "org"... as in `CardMetadata.kind`.
    public var kind: String
    public var etag: String
    public var fields: CardListingFields

    public init(name: String, uid: String, kind: String, etag: String, fields: CardListingFields) {
        self.name = name; self.uid = uid; self.kind = kind; self.etag = etag; self.fields = fields
    }
}

/// A place in a book's list: rows sort by (sortKey, name), so a page starts strictly after
/// (or, going back, ends strictly before) a cursor and no row is skipped or shown twice
/// however the book changes between pages. A letter jump is the cursor ("m", "").
public struct ListingCursor: Sendable, Hashable {
    public var sortKey: String
    public var name: String
    public init(sortKey: String, name: String) { self.sortKey = sortKey; self.name = name }
}

/// Which cards of a book a list shows.
public enum ListingFilter: Sendable, Hashable {
    /// Every card that is not a group.
    case contacts
    /// The group cards (`KIND:group`, `X-ADDRESSBOOKSERVER-KIND:group`).
    case groups
    /// Members of the group card `name` (by the UIDs its MEMBER properties list).
    case groupMembers(name: String)
    /// Cards whose CATEGORIES hold this value (case-insensitively).
    case category(String)
}

/// One page of a list, with the cursors of the pages on either side (nil at an end).
public struct ListingPage: Sendable, Hashable {
    public var rows: [CardListing]
    public var previous: ListingCursor?
    public var next: ListingCursor?
    public init(rows: [CardListing], previous: ListingCursor?, next: ListingCursor?) {
        self.rows = rows; self.previous = previous; self.next = next
    }
}

extension ListingPage {
    /// A page from the rows a back end read walking away from `position` (backwards for
    /// `.before`), one more than `limit` when more follow: the extra row is dropped, the rows
    /// put in list order, and the links set. The same on every back end.
    package init(scanned scannedRows: [CardListing], limit: Int, position: ListingPosition) {
        var rows = scannedRows
        let more = rows.count > limit
        if more { rows.removeLast() }
        if case .before = position { rows.reverse() }
        let first = rows.first.map { ListingCursor(sortKey: $0.fields.sortKey, name: $0.name) }
        let last = rows.last.map { ListingCursor(sortKey: $0.fields.sortKey, name: $0.name) }
        switch position {
        case .first: self.init(rows: rows, previous: nil, next: more ? last : nil)
        case .after: self.init(rows: rows, previous: first, next: more ? last : nil)
        case .before: self.init(rows: rows, previous: more ? first : nil, next: last)
        }
    }
}

/// Where a page of a list starts.
public enum ListingPosition: Sendable, Hashable {
    case first
    /// The rows after the cursor.
    case after(ListingCursor)
    /// The rows before the cursor (a "previous page" link).
    case before(ListingCursor)
}

extension CardListingFields {
    /// The folded, trimmed words of a list search, for `RoloStore.cardListings`; the store
    /// looks for each one in `searchText`. Digits of a phone-looking word are searched
    /// without its punctuation, the way `searchText` keeps phone numbers.
    public static func searchWords(_ text: String) -> [String] {
        text.split(whereSeparator: \.isWhitespace).map { word in
            let folded = CaseFolding.search(String(word))
            let isPhoneLike = folded.allSatisfy { $0.isNumber || "+-().".contains($0) } && folded.contains(where: \.isNumber)
            return isPhoneLike ? folded.filter(\.isNumber) : folded
        }.filter { !$0.isEmpty }
    }
}

/// How `RoloStore.duplicateCandidates` groups a book's cards, the same on every backend:
/// (key, name) pairs, a folded e-mail address, a phone number's last 9 digits (so
/// "+44 20 7946 0958" and "020 7946 0958" meet), a normalised name; cards sharing any key
/// are one group.
public enum DuplicateCandidates {
    /// The key of an index entry (`value` Unicode-folded), nil for none.
    public static func key(property: String, value: String) -> String? {
        if property == "EMAIL" {
            let address = value.trimmingCharacters(in: .whitespaces)
            return address.contains("@") ? "e:" + address : nil
        }
        guard property == "TEL" else { return nil }
        let digits = value.filter(\.isNumber)
        return digits.count >= 7 ? "t:" + String(digits.suffix(9)) : nil
    }

    /// The key of a list row's sort key, nil for none.
    public static func key(sortKey: String) -> String? {
        let words = sortKey.split(whereSeparator: { !($0.isLetter || $0.isNumber) })
        return !words.isEmpty && sortKey != "\u{10FFFF}" ? "n:" + words.joined(separator: " ") : nil
    }

    /// Names linked by any shared key, as groups of two or more (union-find), each sorted,
    /// the groups in order of their first name.
    public static func connectedGroups(_ pairs: [(key: String, name: String)], limit: Int) -> [[String]] {
        var parent: [String: String] = [:]
        func root(_ name: String) -> String {
            var current = name
            while let next = parent[current], next != current { current = next }
            parent[name] = current
            return current
        }
        var firstByKey: [String: String] = [:]
        for (key, name) in pairs {
            if parent[name] == nil { parent[name] = name }
            if let first = firstByKey[key] {
                let a = root(first), b = root(name)
                if a != b { parent[max(a, b)] = min(a, b) }
            } else {
                firstByKey[key] = name
            }
        }
        var groups: [String: [String]] = [:]
        for name in parent.keys { groups[root(name), default: []].append(name) }
        return groups.values.filter { $0.count > 1 }.map { $0.sorted() }
            .sorted { $0[0].precedesInBytes($1[0]) }.prefix(max(limit, 0)).map { $0 }
    }
}
