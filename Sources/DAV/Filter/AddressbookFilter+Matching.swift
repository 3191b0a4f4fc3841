import VCard

/// RFC 6352 §10.5 matching. A prop-filter holds when some property of that name satisfies
/// its text-matches and param-filters together (combined by its `test`); text-matches see
/// the property's whole value unescaped as text (structured N/ADR values included).
extension AddressbookFilter {
    public func matches(_ card: VCard) -> Bool {
        if propFilters.isEmpty { return true }
        return test.combine(propFilters) { $0.matches(card) }
    }
}

/// Free-function spelling of `filter.matches(card)`.
public func matches(_ filter: AddressbookFilter, card: VCard) -> Bool {
    filter.matches(card)
}

extension PropFilter {
    public func matches(_ card: VCard) -> Bool {
        let properties = card.properties.lazy.filter { $0.name == name }
        if isNotDefined { return properties.isEmpty }
        if textMatches.isEmpty && paramFilters.isEmpty { return !properties.isEmpty }
        return properties.contains { matches($0) }
    }

    /// Whether this one property satisfies the filter's tests.
    public func matches(_ property: VCardProperty) -> Bool {
        if isNotDefined { return false }
        switch test {
        case .anyOf:
            return textMatches.contains { $0.matches(property.text) } || paramFilters.contains { $0.matches(property) }
        case .allOf:
            return textMatches.allSatisfy { $0.matches(property.text) } && paramFilters.allSatisfy { $0.matches(property) }
        }
    }
}

extension ParamFilter {
    /// Defined-ness, or some value of the parameter satisfying the text-match.
    public func matches(_ property: VCardProperty) -> Bool {
        let parameters = property.parameters.filter { $0.name == name }
        if isNotDefined { return parameters.isEmpty }
        guard !parameters.isEmpty else { return false }
        guard let textMatch else { return true }
        return parameters.contains { parameter in parameter.values.contains { textMatch.matches($0) } }
    }
}

extension FilterTest {
    func combine<T>(_ items: [T], _ test: (T) -> Bool) -> Bool {
        switch self {
        case .anyOf: items.contains(where: test)
        case .allOf: items.allSatisfy(test)
        }
    }
}
