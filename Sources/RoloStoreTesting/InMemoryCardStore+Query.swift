import Foundation
import RoloStore

extension InMemoryCardStore {
    /// Every card of the book tested against `predicate` on its folded index entries, names
    /// in UTF-8 byte order; no index, since a double's books are small.
    public func query(collectionID: Int64, predicate: IndexPredicate, limit: Int?) -> [String] {
        guard let book = state.collections[collectionID] else { return [] }
        let names = book.sortedResources.filter { predicate.matches($0.entries) }.map(\.info.name)
        guard let limit, limit >= 0 else { return names }
        return Array(names.prefix(limit))
    }
}

extension IndexPredicate {
    /// RFC 6352 text-match on one card's entries, on the bytes of the collation's folds (the
    /// core's `CaseFolding`, which the back ends store and compare): a text-match holds when
    /// some value of the property matches, or negated, when some value does not match; a
    /// card without the property matches neither.
    func matches(_ entries: [FoldedIndexEntry]) -> Bool {
        switch self {
        case .all(let parts): parts.allSatisfy { $0.matches(entries) }
        case .any(let parts): parts.contains { $0.matches(entries) }
        case .defined(let property): entries.contains { $0.property.isExactly(property.uppercased()) }
        case .notDefined(let property): !entries.contains { $0.property.isExactly(property.uppercased()) }
        case let .textMatch(property, text, collation, match, negate):
            entries.contains { entry in
                guard entry.property.isExactly(property.uppercased()) else { return false }
                let found = switch collation {
                case .unicodeCasemap: Self.test(Array(entry.unicode.utf8), match, Array(CaseFolding.unicode(text).utf8))
                case .asciiCasemap: Self.test(Array(entry.asciiFold.utf8), match, Array(CaseFolding.ascii(text).utf8))
                case .octet: Self.test(Array(entry.value.utf8), match, Array(text.utf8))
                }
                return found != negate
            }
        }
    }

    /// Bytes, not `String` comparison: Swift calls "é" and "e\u{301}" equal, the collations
    /// do not. Valid UTF-8 needles match only on character boundaries, so this is SQL's
    /// character-wise `instr` and `substr` too. Every value contains, starts and ends with "".
    private static func test(_ value: [UInt8], _ match: MatchType, _ needle: [UInt8]) -> Bool {
        switch match {
        case .equals: value == needle
        case .startsWith: value.starts(with: needle)
        case .endsWith: value.count >= needle.count && value.suffix(needle.count).elementsEqual(needle)
        case .contains:
            needle.isEmpty || (needle.count <= value.count
                && (0...(value.count - needle.count)).contains { value[$0..<$0 + needle.count].elementsEqual(needle) })
        }
    }
}
