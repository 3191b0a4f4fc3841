import Foundation
import Testing
@testable import RoloStore

/// `CaseFolding`'s table fold (`TableFold`, issue 34) gives exactly Foundation's bytes: for
/// every character the table folds, alone and next to others (every pair in the Latin
/// blocks), in text of other scripts and with combining marks, and for the corpus' names.
/// Every kana and every Hangul syllable too.
@Suite struct TableFoldTests {
    static func characters(_ range: Range<UInt32>) -> [String] { range.compactMap(Unicode.Scalar.init).map { String($0) } }
    /// Latin-1 Supplement, Latin Extended-A and -B.
    static let latin = characters(0x80..<0x250)
    static let twoBytes = characters(0x80..<TableFold.end)
    /// Neighbours of every character: letters of each script, a capital sigma, combining
    /// marks (which Foundation folds), an ideograph and a Hangul syllable.
    static let neighbours = ["A", "z", "É", "ǅ", "ß", "İ", "Σ", "σ", "ΐ", "Ё", "й", "ع", "\u{64E}", "א", "\u{301}", "\u{308}\u{301}",
                             "\u{345}", "山", "김", " ", "1"]

    /// Byte for byte, as SQLite compares them ("é" and "e\u{301}" are equal Strings).
    static func expectSameFold(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Array(CaseFolding.unicode(text).utf8) == Array(CaseFolding.foundationUnicode(text).utf8),
                "unicode \(text.unicodeScalars.map { String($0.value, radix: 16) })", sourceLocation: sourceLocation)
        #expect(Array(CaseFolding.search(text).utf8) == Array(CaseFolding.foundationSearch(text).utf8),
                "search \(text.unicodeScalars.map { String($0.value, radix: 16) })", sourceLocation: sourceLocation)
    }

    @Test func everyPairOfLatinCharactersFoldsAsFoundationFoldsIt() {
        for first in Self.latin {
            #expect(TableFold.unicode.fold(first) != nil)
            for second in Self.latin { Self.expectSameFold(first + second) }
        }
    }

    @Test func everyCharacterOfTwoBytesFoldsAsFoundationFoldsItBesideEachNeighbour() {
        for character in Self.twoBytes {
            Self.expectSameFold(character)
            for neighbour in Self.neighbours {
                Self.expectSameFold(neighbour + character)
                Self.expectSameFold(character + neighbour + character)
            }
        }
    }

    @Test func everyIdeographFoldsToItself() {
        for character in Self.characters(TableFold.ideographs.lowerBound..<(TableFold.ideographs.upperBound + 1)) {
            #expect(TableFold.search.fold(character) == character)
            Self.expectSameFold(character)
            Self.expectSameFold("Émile " + character + "ΆΝΝΑ")
        }
    }

    @Test func everyKanaFoldsAsFoundationFoldsItBesideEachNeighbour() {
        let kana = Self.characters(TableFold.kana)
        for character in kana {
            Self.expectSameFold(character)
            for neighbour in Self.neighbours + ["\u{3099}", "\u{309A}", "カ", "ー"] {
                Self.expectSameFold(neighbour + character)
                Self.expectSameFold(character + neighbour + character)
            }
        }
        // The voiced and semi-voiced kana are in the table, not left to Foundation.
        for character in ["ガ", "プ", "ぱ", "ヴ", "ー", "サンプル"] {
            #expect(TableFold.unicode.fold(character) != nil && TableFold.search.fold(character) != nil, "\(character)")
        }
    }

    @Test func everyHangulSyllableFoldsToItsJamoAsFoundationFoldsIt() {
        for character in Self.characters(TableFold.hangul.lowerBound..<(TableFold.hangul.upperBound + 1)) {
            #expect(TableFold.unicode.fold(character) != nil)
            Self.expectSameFold(character)
            Self.expectSameFold("Émile " + character + "ΆΝΝΑ 山")
        }
    }

    /// What the table leaves to Foundation: combining marks and the scripts outside it
    /// (half-width kana among them). The letters of the names a list shows are all in it,
    /// capital sigma too: Foundation's fold (Swift's `lowercased()`) gives σ wherever it stands.
    @Test func theTableCoversTheLettersOfCommonScriptsAndLeavesCombiningMarksToFoundation() {
        for text in ["ΟΔΥΣΣΕΥΣ", "ΑΣ", "ΑΣ'", "Σ"] {
            #expect(TableFold.search.fold(text) == CaseFolding.foundationSearch(text), "\(text)")
        }
        #expect(TableFold.search.fold("ΟΔΥΣΣΕΥΣ") == "οδυσσευσ")
        for range in [0x80..<0x250, 0x386..<0x3CF, 0x400..<0x483, 0x48A..<0x530, 0x621..<0x64B] as [Range<UInt32>] {
            for scalar in range.compactMap(Unicode.Scalar.init) {
                #expect(TableFold.unicode.covers(scalar), "U+\(String(scalar.value, radix: 16))")
            }
        }
        for mark in ["\u{300}", "\u{308}", "\u{345}", "\u{483}", "\u{64E}", "\u{5B4}", "\u{3099}", "ｶ", "ﬁ", "😀"] {
            #expect(TableFold.unicode.fold(mark) == nil && TableFold.search.fold("a" + mark) == nil, "\(mark)")
        }
    }

    /// Other scripts and combining marks go to Foundation, alone and mixed with table text.
    @Test func otherTextIsFoldedByFoundation() {
        let samples = [
            "ΟΔΥΣΣΕΥΣ Ἀθῆναι ς ΐ", "Σωκράτης", "ΑΣ ΑΣΑ", "ДМИТРИЙ Йошкар-Ола Ёлка", "Щука ЇЖАК ґ", "Ѝ Ӂ", "и\u{306}",
            "東京都 渋谷区 山田太郎", "김철수 서울", "ｶﾀｶﾅ ＡＢＣ", "محمد عبد الله", "مُحَمَّد", "ﻻ ﷺ", "שָׁלוֹם",
            "e\u{301}", "A\u{30A}\u{323}", "o\u{308}\u{304}", "\u{301}leading", "ﬁ ﬂ ß ẞ", "Ǆ ǅ ǆ İ ı",
            "Ⅻ ① ㎏", "Nguyễn Văn Ánh", "Ελένη Müller", "Юлия Weiß", "😀 Émilie",
        ]
        for sample in samples {
            Self.expectSameFold(sample)
            for text in ["Émilie", "ŁÓDŹ", "Ǆemal", "Νίκος", "Ольга", "فاطمة", "太郎"] { Self.expectSameFold(text + sample + text) }
        }
    }

    /// The non-ASCII values of /work/shared/vcards, the corpus of real clients' cards, and
    /// carddav-bench's names.
    @Test func theCorpusFoldsAsFoundationFoldsIt() {
        let corpus = [
            " 10969\":;;Lindenstraße 5\\; Hinterhau", "52.4986,13.4161\";LABEL=\"Hannah Weiß, c/o Atelier 3\\",
            ";;Calle de Alcalá 45\\, 3º B;Madrid;;28014;España", ";;Sveavägen 12\\nLägenhet 1102;Stockholm;;11",
            ";;ul. Marszałkowska 84/92 m. 15;Warszawa;;00-514;Polska", "Atelier Lumière;Restauration;",
            "Byrne-Ó Dálaigh\\, Jr.;Róisín\\;Anne;;;", "Działka (summer house)", "Fernández;Lucía;;;", "Hannah Weiß",
            "Horváth;Marek;;;", "Hélène Garnier", "Lucía Fernández", "Marek Horváth", "Met at the Wrocław meetup.",
            "Róisín\\;Anne Byrne-Ó Dálaigh\\, Jr.", "Tomasz Wiśniewski", "Weiß;Hannah;;;", "Wiśniewski;Tomasz;;;",
            "Élodie Müller", "Søren García", "Zoë Kowalski", "Анна Иванова", "Дмитрий Петров", "Αλέξανδρος Παπαδόπουλος",
            "Ελένη Γεωργίου", "太郎 山田", "伟 王", "محمد الحسن", "ليلى العلي", "민준 김", "株式会社サンプル Research",
        ]
        for value in corpus {
            #expect(TableFold.search.fold(value) != nil, "\(value)")
            Self.expectSameFold(value)
        }
    }

    /// The byte tests the folds use, read in place.
    @Test func theUTF8ByteTestsReadEveryByte() {
        let long = String(repeating: "abcdefgh", count: 5)
        #expect("".utf8IsASCII && long.utf8IsASCII && !(long + "é").utf8IsASCII && !("é" + long).utf8IsASCII)
        #expect(!long.utf8ContainsUppercaseASCII && (long + "Z").utf8ContainsUppercaseASCII && ("A" + long).utf8ContainsUppercaseASCII)
        #expect(!"@[`{é".utf8ContainsUppercaseASCII)
        #expect("".isExactly("") && long.isExactly(String(repeating: "abcdefgh", count: 5)))
        #expect(!"é".isExactly("e\u{301}") && "é" == "e\u{301}")
        #expect(!long.isExactly(long + "a") && !"abc".isExactly("abd") && !"".isExactly("a"))
    }
}
