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
        return TableFold.unicode.fold(text) ?? foundationUnicode(text)
    }

    /// `unicode` by Foundation, for any text: what `TableFold` must give byte for byte.
    static func foundationUnicode(_ text: String) -> String {
        text.lowercased().decomposedStringWithCompatibilityMapping
    }

    /// What a person's search compares: the Unicode fold without its combining marks, so
    /// "jose" finds "José" and "muller" finds "Müller" (the fold decomposed them). Used for
    /// `CardListingFields.searchText` and the words searched in it, never for DAV collations.
    public static func search(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return ascii(text) }
        return TableFold.search.fold(text) ?? foundationSearch(text)
    }

    /// `search` by Foundation, for any text: what `TableFold` must give byte for byte.
    static func foundationSearch(_ text: String) -> String {
        let folded = foundationUnicode(text)
        guard !folded.utf8.allSatisfy({ $0 < 0x80 }) else { return folded }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: folded.unicodeScalars.filter { $0.properties.generalCategory != .nonspacingMark })
        return String(scalars)
    }
}

/// A fold without Foundation's NFKD, which was half the cost of a card's list row (issue
/// 34), for the text of the common scripts: each character of two UTF-8 bytes (U+0080 to
/// U+07FF: Latin-1, Latin Extended-A and -B, Greek, Cyrillic, Hebrew, Arabic) and each kana
/// (Hiragana and Katakana, whose voiced forms decompose) looked up in a table that
/// Foundation's fold filled, once; CJK ideographs, which fold to themselves; and Hangul
/// syllables, which decompose into their jamo by Unicode's arithmetic (a table of 11,172
/// would cost a tenth of a second to fill). The pieces join to the fold of the whole text
/// because each one starts with a base character, so NFKD has no combining marks to
/// reorder across two of them; a character whose fold does not (a combining mark), capital
/// sigma (whose lower case may depend on the next letter) and anything else: nil, for
/// Foundation to fold. TableFoldTests compares the two byte for byte.
struct TableFold: Sendable {
    static let unicode = TableFold(CaseFolding.foundationUnicode)
    static let search = TableFold(CaseFolding.foundationSearch)

    /// Past the last character of two UTF-8 bytes.
    static let end: UInt32 = 0x800
    /// Hiragana and Katakana, three UTF-8 bytes each, folded by `kanaFolds`.
    static let kana: Range<UInt32> = 0x3040..<0x3100
    /// CJK Unified Ideographs, three UTF-8 bytes each, no case and no decomposition.
    static let ideographs: ClosedRange<UInt32> = 0x4E00...0x9FFF
    /// Hangul syllables, three UTF-8 bytes each, decomposed by `appendJamo`.
    static let hangul: ClosedRange<UInt32> = 0xAC00...0xD7A3
    /// UTF-8 of the fold of U+0080 + index; nil where Foundation must fold.
    private let folds: [[UInt8]?]
    /// UTF-8 of the fold of each kana (`kana.lowerBound` + index); nil where Foundation must fold.
    private let kanaFolds: [[UInt8]?]

    init(_ foundation: (String) -> String) {
        func table(_ range: Range<UInt32>) -> [[UInt8]?] {
            range.map { value in
                guard let scalar = Unicode.Scalar(value), value != 0x3A3,
                      let first = CaseFolding.foundationUnicode(String(scalar)).unicodeScalars.first,
                      first.properties.canonicalCombiningClass == .notReordered else { return nil }
                return Array(foundation(String(scalar)).utf8)
            }
        }
        folds = table(0x80..<Self.end)
        kanaFolds = table(Self.kana)
    }

    /// Whether the table folds this character itself.
    func covers(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x80 || Self.ideographs.contains(value) || Self.hangul.contains(value)
            || (value < Self.end && folds[Int(value) - 0x80] != nil)
            || (Self.kana.contains(value) && kanaFolds[Int(value - Self.kana.lowerBound)] != nil)
    }

    /// A Hangul syllable's canonical decomposition (Unicode 3.12): its leading consonant,
    /// vowel and trailing consonant (if any) as conjoining jamo, which neither case nor NFKD
    /// change further, so both folds give it. Each jamo is three UTF-8 bytes.
    static func appendJamo(of syllable: UInt32, to out: inout [UInt8]) {
        let index = syllable - hangul.lowerBound
        let vowelsAndTrailing: UInt32 = 21 * 28
        func append(_ jamo: UInt32) {
            out.append(0xE0 | UInt8(jamo >> 12)); out.append(0x80 | UInt8(jamo >> 6 & 0x3F)); out.append(0x80 | UInt8(jamo & 0x3F))
        }
        append(0x1100 + index / vowelsAndTrailing)
        append(0x1161 + index % vowelsAndTrailing / 28)
        if index % 28 != 0 { append(0x11A7 + index % 28) }
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
                } else if byte >= 0xC2, byte <= 0xDF, index + 1 < bytes.count, bytes[index + 1] & 0xC0 == 0x80 {
                    guard let fold = folds[Int(UInt32(byte & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F)) - 0x80] else { return nil }
                    out.append(contentsOf: fold)
                    index += 2
                } else if byte >= 0xE3, byte <= 0xED, index + 2 < bytes.count, bytes[index + 1] & 0xC0 == 0x80,
                          bytes[index + 2] & 0xC0 == 0x80 {
                    let value = UInt32(byte & 0x0F) << 12 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
                    if Self.ideographs.contains(value) {
                        out.append(contentsOf: bytes[index..<(index + 3)])
                    } else if Self.hangul.contains(value) {
                        Self.appendJamo(of: value, to: &out)
                    } else if Self.kana.contains(value), let fold = kanaFolds[Int(value - Self.kana.lowerBound)] {
                        out.append(contentsOf: fold)
                    } else {
                        return nil
                    }
                    index += 3
                } else {
                    return nil
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}
