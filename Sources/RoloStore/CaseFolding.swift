import Foundation

/// The folds behind RFC 4790 collations, applied to indexed values and query text alike so
/// that SQLite compares plain bytes.
public enum CaseFolding {
    /// `i;ascii-casemap`: only A-Z become a-z; every other character stays as it is.
    public static func ascii(_ text: String) -> String {
        guard text.utf8ContainsUppercaseASCII else { return text }
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
        if text.utf8IsASCII { return ascii(text) }
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
        searchByTable(text) ?? foundationSearch(text)
    }

    /// `search` when the table folds every character of `text` (`TableFold`); nil when one
    /// needs Foundation, whose fold of a long text is dearer than the table's.
    public static func searchByTable(_ text: String) -> String? {
        if text.utf8IsASCII { return ascii(text) }
        return TableFold.search.fold(text)
    }

    /// `search` by Foundation, for any text: what `TableFold` must give byte for byte.
    static func foundationSearch(_ text: String) -> String {
        withoutNonspacingMarks(foundationUnicode(text))
    }

    /// The search fold of a text from its Unicode fold: the fold's combining marks dropped.
    static func withoutNonspacingMarks(_ folded: String) -> String {
        guard !folded.utf8IsASCII else { return folded }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: folded.unicodeScalars.filter { $0.properties.generalCategory != .nonspacingMark })
        return String(scalars)
    }

    /// Builds the folds' tables now rather than on the first text that needs one. Foundation
    /// fills them (about 3 ms), and whatever request got there first waited for it, with any
    /// other thread that needed a fold meanwhile: `rolo serve` calls this while it starts.
    public static func prepareTables() {
        _ = (TableFold.unicode, TableFold.search)
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
/// reorder across two of them; a character whose fold does not (a combining mark) and
/// anything else: nil, for Foundation to fold. Capital sigma is in the table: Swift's
/// `lowercased()` maps each scalar alone (Σ is σ even at a word's end, where NSString would
/// give ς), and Greek names were a fifth of the list row's fold through Foundation.
/// TableFoldTests compares the two byte for byte.
struct TableFold: Sendable {
    // Stored, not computed from `tables`: a fold then borrows its table instead of copying it
    // (and retaining its two arrays) on every call.
    static let unicode = tables.unicode
    static let search = tables.search
    /// Both tables from one pass: the search fold is the Unicode fold without its combining
    /// marks, so each character goes through Foundation once, not four times: 3 ms instead of
    /// 6.5 at the first fold of a process (issue 34).
    private static let tables: (unicode: TableFold, search: TableFold) = {
        var unicode = Builder(), search = Builder()
        for range in [0x80..<Self.end, Self.kana] {
            for value in range {
                let text = Unicode.Scalar(value).map(String.init)
                guard let text, case let folded = CaseFolding.foundationUnicode(text),
                      let first = folded.unicodeScalars.first, first.properties.canonicalCombiningClass == .notReordered else {
                    unicode.leaveToFoundation(); search.leaveToFoundation()
                    continue
                }
                unicode.add(fold: folded, of: text)
                search.add(fold: CaseFolding.withoutNonspacingMarks(folded), of: text)
            }
        }
        return (TableFold(unicode), TableFold(search))
    }()

    /// Past the last character of two UTF-8 bytes.
    static let end: UInt32 = 0x800
    /// Hiragana and Katakana, three UTF-8 bytes each, folded by `kanaFolds`.
    static let kana: Range<UInt32> = 0x3040..<0x3100
    /// CJK Unified Ideographs, three UTF-8 bytes each, no case and no decomposition.
    static let ideographs: ClosedRange<UInt32> = 0x4E00...0x9FFF
    /// Hangul syllables, three UTF-8 bytes each, decomposed by `appendJamo`.
    static let hangul: ClosedRange<UInt32> = 0xAC00...0xD7A3
    /// Where the fold of U+0080 + index is in `foldBytes` (start << 8 | length), and after them
    /// each kana's (`kana.lowerBound` + index); `foundation` where Foundation must fold. One
    /// flat table rather than an array per character: the fold copies bytes, no array's
    /// reference count.
    private let foldSpans: [UInt32]
    private let foldBytes: [UInt8]
    /// The most bytes a fold gives per byte of its text, for the fold's buffer.
    private let growth: Int
    private static let foundation = UInt32.max
    private static let kanaStart = Int(end) - 0x80

    /// A table's spans and bytes, one character after the other in `tables`' order.
    struct Builder {
        var spans: [UInt32] = [], bytes: [UInt8] = [], growth = 3 // a Hangul syllable's three jamo

        /// A character whose fold does not start with a base character: Foundation folds it.
        mutating func leaveToFoundation() { spans.append(TableFold.foundation) }

        mutating func add(fold: String, of text: String) {
            let fold = Array(fold.utf8)
            spans.append(UInt32(bytes.count) << 8 | UInt32(fold.count))
            bytes += fold
            let length = text.utf8.count
            growth = max(growth, (fold.count + length - 1) / length)
        }
    }

    private init(_ built: Builder) {
        foldSpans = built.spans
        foldBytes = built.bytes
        growth = built.growth
    }

    /// Whether the table folds this character itself.
    func covers(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x80 || Self.ideographs.contains(value) || Self.hangul.contains(value)
            || (value < Self.end && foldSpans[Int(value) - 0x80] != Self.foundation)
            || (Self.kana.contains(value) && foldSpans[Self.kanaStart + Int(value - Self.kana.lowerBound)] != Self.foundation)
    }

    /// A Hangul syllable's canonical decomposition (Unicode 3.12): its leading consonant,
    /// vowel and trailing consonant (if any) as conjoining jamo, which neither case nor NFKD
    /// change further, so both folds give it. Each jamo is three UTF-8 bytes.
    static func appendJamo(of syllable: UInt32, to out: UnsafeMutableBufferPointer<UInt8>, at written: inout Int) {
        let index = syllable - hangul.lowerBound
        let vowelsAndTrailing: UInt32 = 21 * 28
        func append(_ jamo: UInt32) {
            out[written] = 0xE0 | UInt8(jamo >> 12); out[written + 1] = 0x80 | UInt8(jamo >> 6 & 0x3F)
            out[written + 2] = 0x80 | UInt8(jamo & 0x3F)
            written += 3
        }
        append(0x1100 + index / vowelsAndTrailing)
        append(0x1161 + index % vowelsAndTrailing / 28)
        if index % 28 != 0 { append(0x11A7 + index % 28) }
    }

    /// A character the table leaves to Foundation: the fold gives up.
    private struct NeedsFoundation: Error {}

    func fold(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            foldBytes.withUnsafeBufferPointer { table in
                try? String(unsafeUninitializedCapacity: bytes.count * growth) { out in
                    var written = 0
                    func copy(span: UInt32) throws {
                        guard span != Self.foundation else { throw NeedsFoundation() }
                        let start = Int(span >> 8), length = Int(span & 0xFF)
                        for offset in 0..<length { out[written + offset] = table[start + offset] }
                        written += length
                    }
                    var index = 0
                    while index < bytes.count {
                        let byte = bytes[index]
                        if byte < 0x80 {
                            out[written] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                            written += 1
                            index += 1
                        } else if byte >= 0xC2, byte <= 0xDF, index + 1 < bytes.count, bytes[index + 1] & 0xC0 == 0x80 {
                            try copy(span: foldSpans[Int(UInt32(byte & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F)) - 0x80])
                            index += 2
                        } else if byte >= 0xE3, byte <= 0xED, index + 2 < bytes.count, bytes[index + 1] & 0xC0 == 0x80,
                                  bytes[index + 2] & 0xC0 == 0x80 {
                            let value = UInt32(byte & 0x0F) << 12 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
                            if Self.ideographs.contains(value) {
                                out[written] = byte; out[written + 1] = bytes[index + 1]; out[written + 2] = bytes[index + 2]
                                written += 3
                            } else if Self.hangul.contains(value) {
                                Self.appendJamo(of: value, to: out, at: &written)
                            } else if Self.kana.contains(value) {
                                try copy(span: foldSpans[Self.kanaStart + Int(value - Self.kana.lowerBound)])
                            } else {
                                throw NeedsFoundation()
                            }
                            index += 3
                        } else {
                            throw NeedsFoundation()
                        }
                    }
                    return written
                }
            }
        }
    }
}

/// Byte tests of a string's UTF-8 read in place: the generic `utf8` sequence algorithms
/// (`allSatisfy`, `elementsEqual`) iterate the view scalar by scalar, and ran to a third of a
/// card's index-entry folds on every PUT (issue 34).
extension String {
    /// Whether every byte is ASCII.
    package var utf8IsASCII: Bool {
        var text = self
        return text.withUTF8 { bytes in
            var any: UInt8 = 0
            for byte in bytes { any |= byte }
            return any < 0x80
        }
    }

    /// Whether a byte is A-Z.
    package var utf8ContainsUppercaseASCII: Bool {
        var text = self
        return text.withUTF8 { bytes in bytes.contains { $0 &- 0x41 < 26 } }
    }
}
