import Foundation
import Testing
@testable import RoloStore

/// `CaseFolding`'s table fold of Latin text (`LatinFold`, issue 34) gives exactly Foundation's
/// bytes: for every character up to U+024F alone, next to every other, and in text; other
/// scripts and combining marks are left to Foundation.
@Suite struct LatinFoldTests {
    static let latin: [String] = (0x80..<Int(LatinFold.end)).map { String(Unicode.Scalar(UInt32($0))!) }

    /// Byte for byte, as SQLite compares them ("é" and "e\u{301}" are equal Strings).
    static func expectSameFold(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Array(CaseFolding.unicode(text).utf8) == Array(CaseFolding.foundationUnicode(text).utf8),
                "unicode \(text.unicodeScalars.map { String($0.value, radix: 16) })", sourceLocation: sourceLocation)
        #expect(Array(CaseFolding.search(text).utf8) == Array(CaseFolding.foundationSearch(text).utf8),
                "search \(text.unicodeScalars.map { String($0.value, radix: 16) })", sourceLocation: sourceLocation)
    }

    @Test func everyLatinCharacterFoldsAsFoundationFoldsIt() {
        for character in Self.latin {
            #expect(LatinFold.unicode.fold(character) != nil)
            for text in [character, "A\(character)b", "\(character)\(character)", "\(character)Z", "ÉLODIE \(character) Müller"] {
                Self.expectSameFold(text)
            }
        }
    }

    /// Why the pieces join: each character's fold starts with a base character, so NFKD
    /// never reorders combining marks across two characters.
    @Test func everyLatinCharactersFoldStartsWithABaseCharacter() throws {
        for character in Self.latin {
            let first = try #require(CaseFolding.foundationUnicode(character).unicodeScalars.first)
            #expect(first.properties.canonicalCombiningClass == .notReordered, "U+\(String(character.unicodeScalars.first!.value, radix: 16))")
        }
    }

    @Test func everyPairOfLatinCharactersFoldsAsFoundationFoldsIt() {
        for first in Self.latin {
            for second in Self.latin { Self.expectSameFold(first + second) }
        }
    }

    /// Other scripts and combining marks go to Foundation, alone and mixed with Latin.
    @Test func otherTextIsFoldedByFoundation() {
        let samples = [
            "ΟΔΥΣΣΕΥΣ Ἀθῆναι ς ΐ", "Σωκράτης", "ДМИТРИЙ Йошкар-Ола Ёлка", "Щука ЇЖАК ґ",
            "東京都 渋谷区 山田太郎", "김철수 서울", "ｶﾀｶﾅ ＡＢＣ", "محمد عبد الله", "ﻻ ﷺ",
            "e\u{301}", "A\u{30A}\u{323}", "o\u{308}\u{304}", "\u{301}leading", "ﬁ ﬂ ß ẞ", "Ǆ ǅ ǆ İ ı",
            "Ⅻ ① ㎏", "Nguyễn Văn Ánh", "Ελένη Müller", "Юлия Weiß", "😀 Émilie",
        ]
        for sample in samples {
            Self.expectSameFold(sample)
            if sample.unicodeScalars.contains(where: { $0.value >= LatinFold.end }) {
                #expect(LatinFold.search.fold(sample) == nil, "\(sample)")
            }
            for latin in ["Émilie", "ŁÓDŹ", "Ǆemal"] { Self.expectSameFold(latin + sample + latin) }
        }
    }

    /// The non-ASCII values of /work/shared/vcards, the corpus of real clients' cards.
    @Test func theCorpusFoldsAsFoundationFoldsIt() {
        let corpus = [
            " 10969\":;;Lindenstraße 5\\; Hinterhau", "52.4986,13.4161\";LABEL=\"Hannah Weiß, c/o Atelier 3\\",
            ";;Calle de Alcalá 45\\, 3º B;Madrid;;28014;España", ";;Sveavägen 12\\nLägenhet 1102;Stockholm;;11",
            ";;ul. Marszałkowska 84/92 m. 15;Warszawa;;00-514;Polska", "Atelier Lumière;Restauration;",
            "Byrne-Ó Dálaigh\\, Jr.;Róisín\\;Anne;;;", "Działka (summer house)", "Fernández;Lucía;;;", "Hannah Weiß",
            "Horváth;Marek;;;", "Hélène Garnier", "Lucía Fernández", "Marek Horváth", "Met at the Wrocław meetup.",
            "Róisín\\;Anne Byrne-Ó Dálaigh\\, Jr.", "Tomasz Wiśniewski", "Weiß;Hannah;;;", "Wiśniewski;Tomasz;;;",
        ]
        for value in corpus {
            #expect(LatinFold.search.fold(value) != nil)
            Self.expectSameFold(value)
        }
    }
}
