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
