/// An index entry as `card_index` stores it: the Unicode fold always, the ASCII fold and the
/// verbatim value only where they differ from it (nil otherwise). Most values are ASCII or
/// already folded, so most rows stay short and out of the ASCII index: one b-tree insert
/// fewer per entry on import.
package struct FoldedIndexEntry: Sendable {
    package var property: String
    /// `i;unicode-casemap` fold.
    package var unicode: String
    /// `i;ascii-casemap` fold, nil when byte-equal to `unicode`.
    package var ascii: String?
    /// The value verbatim, nil when byte-equal to its ASCII fold.
    package var verbatim: String?

    package init(_ entry: IndexEntry) {
        let ascii = CaseFolding.ascii(entry.value)
        let unicode = CaseFolding.unicode(entry.value)
        property = entry.property
        self.unicode = unicode
        // Bytes, not String equality: Swift calls "é" and "e\u{301}" equal, SQLite does not.
        self.ascii = ascii.isExactly(unicode) ? nil : ascii
        verbatim = entry.value.isExactly(ascii) ? nil : entry.value
    }

    /// The `i;ascii-casemap` fold, stored or not.
    package var asciiFold: String { ascii ?? unicode }

    /// The value verbatim, stored or not.
    package var value: String { verbatim ?? ascii ?? unicode }
}
