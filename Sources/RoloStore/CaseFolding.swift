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
        return LatinFold.unicode.fold(text) ?? foundationUnicode(text)
    }

    /// `unicode` by Foundation, for any text: what `LatinFold` must give byte for byte.
    static func foundationUnicode(_ text: String) -> String {
        text.lowercased().decomposedStringWithCompatibilityMapping
    }

    /// What a person's search compares: the Unicode fold without its combining marks, so
    /// "jose" finds "José" and "muller" finds "Müller" (the fold decomposed them). Used for
    /// `CardListingFields.searchText` and the words searched in it, never for DAV collations.
    public static func search(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return ascii(text) }
        return LatinFold.search.fold(text) ?? foundationSearch(text)
    }

    /// `search` by Foundation, for any text: what `LatinFold` must give byte for byte.
    static func foundationSearch(_ text: String) -> String {
        let folded = foundationUnicode(text)
        guard !folded.utf8.allSatisfy({ $0 < 0x80 }) else { return folded }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: folded.unicodeScalars.filter { $0.properties.generalCategory != .nonspacingMark })
        return String(scalars)
    }
}

/// A fold of text in the Latin blocks (up to U+024F: Latin-1 Supplement, Latin Extended-A
/// and -B) without Foundation's NFKD, which was half the cost of a card's list row (issue
/// 34): each character's fold looked up in a table that Foundation's fold filled, once. The
/// pieces join to the fold of the whole text because no character there lower-cases to
/// anything context-dependent and each one's fold starts with a base character, so NFKD
/// has no combining marks to reorder across two of them (CaseFoldingTests proves it, and
/// compares the two over every such character and mixed text). Other text: nil, for
/// Foundation to fold.
struct LatinFold: Sendable {
    static let unicode = LatinFold(CaseFolding.foundationUnicode)
    static let search = LatinFold(CaseFolding.foundationSearch)

    /// The last scalar folded here, U+024F: two UTF-8 bytes led by 0xC2...0xC9.
    static let end: UInt32 = 0x250
    /// UTF-8 of the fold of U+0080 + index.
    private let folds: [[UInt8]]

    init(_ foundation: (String) -> String) {
        folds = (0x80..<Self.end).map { Array(foundation(String(Unicode.Scalar($0)!)).utf8) }
    }

    func fold(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + bytes.count / 2)
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte < 0x80 {
                    out.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
                    index += 1
                    continue
                }
                guard byte >= 0xC2, byte <= 0xC9, index + 1 < bytes.count, bytes[index + 1] & 0xC0 == 0x80 else { return nil }
                let scalar = UInt32(byte & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F)
                guard scalar < Self.end else { return nil }
                out.append(contentsOf: folds[Int(scalar) - 0x80])
                index += 2
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}
