import RoloStore

/// Answering a filter from the store's search index instead of parsing every card.
extension AddressbookFilter {
    /// The index predicate equivalent to this filter, or nil when the index cannot answer it
    /// exactly, and the caller must scan cards with `matches`: a param-filter (parameters
    /// are not indexed), a property outside `indexedProperties` (the index would wrongly
    /// say it is absent), or an `allof` prop-filter with several text-matches (the index
    /// cannot tell that one and the same property satisfied them all).
    ///
    /// - Parameter indexedProperties: upper-cased names of the properties whose values the
    ///   engine hands to the store as `CardMetadata.indexEntries`.
    public func indexPredicate(indexedProperties: Set<String>) -> IndexPredicate? {
        var parts: [IndexPredicate] = []
        for propFilter in propFilters {
            guard let part = propFilter.indexPredicate(indexedProperties: indexedProperties) else { return nil }
            parts.append(part)
        }
        if parts.isEmpty { return .all([]) }
        if parts.count == 1 { return parts[0] }
        return test == .allOf ? .all(parts) : .any(parts)
    }
}

/// Free-function spelling of `filter.indexPredicate(indexedProperties:)`.
public func indexPredicate(for filter: AddressbookFilter, indexedProperties: Set<String>) -> IndexPredicate? {
    filter.indexPredicate(indexedProperties: indexedProperties)
}

extension PropFilter {
    func indexPredicate(indexedProperties: Set<String>) -> IndexPredicate? {
        guard indexedProperties.contains(name), paramFilters.isEmpty else { return nil }
        if isNotDefined { return .notDefined(property: name) }
        if textMatches.isEmpty { return .defined(property: name) }
        if test == .allOf && textMatches.count > 1 { return nil }
        let parts = textMatches.map { match in
            IndexPredicate.textMatch(property: name, text: match.text, collation: match.collation,
                                     match: match.matchType, negate: match.negate)
        }
        return parts.count == 1 ? parts[0] : .any(parts)
    }
}

/// Narrowing a filter the index cannot answer exactly to the cards that may match, which are
/// then parsed and matched (`MatchingCardPages`), instead of parsing every card of the book.
extension AddressbookFilter {
    /// A predicate whose matches include every card this filter matches (and maybe more),
    /// or nil when none narrows the book enough to beat reading it in order: only
    /// predicates holding a text-match that must be found (`isSelective`) are returned.
    /// `anyof` needs one for every prop-filter; `allof` keeps those it has.
    public func candidatePredicate(indexedProperties: Set<String>) -> IndexPredicate? {
        let parts = propFilters.map { $0.candidatePredicate(indexedProperties: indexedProperties) }
        let predicate: IndexPredicate
        switch test {
        case .anyOf:
            let known = parts.compactMap { $0 }
            guard !known.isEmpty, known.count == parts.count else { return nil }
            predicate = known.count == 1 ? known[0] : .any(known)
        case .allOf:
            let known = parts.compactMap { $0 }.filter(\.isSelective)
            guard !known.isEmpty else { return nil }
            predicate = known.count == 1 ? known[0] : .all(known)
        }
        return predicate.isSelective ? predicate : nil
    }
}

extension PropFilter {
    /// What a card matching this prop-filter must satisfy in the index: the exact predicate
    /// where there is one; with param-filters (parameters are not indexed) under `anyof`,
    /// the property being there; under `allof`, each text-match held by some value (one and
    /// the same property must hold them all, which only the card can tell).
    func candidatePredicate(indexedProperties: Set<String>) -> IndexPredicate? {
        guard indexedProperties.contains(name) else { return nil }
        if let exact = indexPredicate(indexedProperties: indexedProperties) { return exact }
        if isNotDefined { return .notDefined(property: name) }
        let parts = textMatches.map { match in
            IndexPredicate.textMatch(property: name, text: match.text, collation: match.collation,
                                     match: match.matchType, negate: match.negate)
        }
        if test == .allOf && !parts.isEmpty { return parts.count == 1 ? parts[0] : .all(parts) }
        return .defined(property: name)
    }
}

extension IndexPredicate {
    /// Whether its matches must contain some given text: a non-negated, non-empty text-match
    /// in every branch. `defined` and negations match most of a book, whose cards are
    /// cheaper read in order than looked up by name.
    var isSelective: Bool {
        switch self {
        case .textMatch(_, let text, _, _, let negate): !negate && !text.isEmpty
        case .defined, .notDefined: false
        case .all(let parts): parts.contains { $0.isSelective }
        case .any(let parts): !parts.isEmpty && parts.allSatisfy { $0.isSelective }
        }
    }
}
