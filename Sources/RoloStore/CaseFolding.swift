import Foundation

/// The folds behind RFC 4790 collations, applied to indexed values and query text alike so
/// that SQLite compares plain bytes.
public enum CaseFolding {
    /// `i;ascii-casemap`: only A-Z become a-z; every other character stays as it is.
    public static func ascii(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
        var bytes = Array(text.utf8)
        for index in bytes.indices where bytes[index] >= 0x41 && bytes[index] <= 0x5A {
            bytes[index] |= 0x20
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `i;unicode-casemap` (RFC 5051 in spirit): full lower-casing, then compatibility
    /// decomposition (NFKD), so "ÉLODIE" and "élodie" fold to the same bytes whatever their
    /// normalisation form.
    public static func unicode(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return ascii(text) }
        return text.lowercased().decomposedStringWithCompatibilityMapping
    }

    /// What a person's search compares: the Unicode fold without its combining marks, so
    /// "jose" finds "José" and "muller" finds "Müller" (the fold decomposed them). Used for
    /// `CardListingFields.searchText` and the words searched in it, never for DAV collations.
    public static func search(_ text: String) -> String {
        let folded = unicode(text)
        guard !folded.utf8.allSatisfy({ $0 < 0x80 }) else { return folded }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: folded.unicodeScalars.filter { $0.properties.generalCategory != .nonspacingMark })
        return String(scalars)
    }
}
