import RoloStore

/// Collations (RFC 4790) applied exactly as the store folds its index (`CaseFolding`), so a
/// query answered from the index and one answered by scanning cards agree:
/// - `i;octet`: bytes as they are;
/// - `i;ascii-casemap`: only A-Z folded to a-z;
/// - `i;unicode-casemap`: full lower-casing then compatibility decomposition (NFKD).
/// Values are then compared as UTF-8 bytes. Lower-casing is not full case folding: `ß`
/// stays `ß` (does not match `SS`), exactly as in the index.
extension IndexPredicate.Collation {
    func fold(_ text: String) -> [UInt8] {
        switch self {
        case .octet: Array(text.utf8)
        case .asciiCasemap: Array(CaseFolding.ascii(text).utf8)
        case .unicodeCasemap: Array(CaseFolding.unicode(text).utf8)
        }
    }
}

extension TextMatch {
    /// Whether `value` satisfies this text-match, negation included.
    public func matches(_ value: String) -> Bool {
        let folded = collation.fold(value)
        let found: Bool = switch matchType {
        case .equals: folded == foldedText
        case .startsWith: folded.starts(with: foldedText)
        case .endsWith: folded.count >= foldedText.count && folded.suffix(foldedText.count).elementsEqual(foldedText)
        case .contains: folded.containsSubsequence(foldedText)
        }
        return found != negate
    }
}

extension Array where Element == UInt8 {
    /// Byte substring search; the empty needle is found everywhere.
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard needle.count <= count else { return false }
        let lastStart = count - needle.count
        var index = 0
        while index <= lastStart {
            if self[index] == first && self[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
