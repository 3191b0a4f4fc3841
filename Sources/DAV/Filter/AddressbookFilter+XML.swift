import DAVXML

/// Reading `<C:filter>` from a parsed addressbook-query body (RFC 6352 §10.5).
/// Unknown child elements are ignored; attribute values are taken as RFC 6352 spells them.
extension AddressbookFilter {
    static let carddav = "urn:ietf:params:xml:ns:carddav"

    /// Reads a `{urn:ietf:params:xml:ns:carddav}filter` element.
    public init(xml filter: XMLElement) throws(FilterError) {
        guard filter.namespace == Self.carddav, filter.name == "filter" else {
            throw .invalid("expected CARDDAV:filter, found \(filter.clarkName)")
        }
        var propFilters: [PropFilter] = []
        for element in filter.children(Self.carddav, "prop-filter") {
            propFilters.append(try PropFilter(xml: element))
        }
        self.init(test: try FilterTest(attributeOf: filter), propFilters: propFilters)
    }
}

extension PropFilter {
    public init(xml element: XMLElement) throws(FilterError) {
        let name = try requiredName(of: element)
        var textMatches: [TextMatch] = []
        var paramFilters: [ParamFilter] = []
        for child in element.children where child.namespace == AddressbookFilter.carddav {
            switch child.name {
            case "text-match": textMatches.append(try TextMatch(xml: child))
            case "param-filter": paramFilters.append(try ParamFilter(xml: child))
            default: continue
            }
        }
        self.init(name: name, test: try FilterTest(attributeOf: element),
                  isNotDefined: element.child(AddressbookFilter.carddav, "is-not-defined") != nil,
                  textMatches: textMatches, paramFilters: paramFilters)
    }
}

extension ParamFilter {
    public init(xml element: XMLElement) throws(FilterError) {
        let textMatch: TextMatch? = switch element.child(AddressbookFilter.carddav, "text-match") {
        case let match?: try TextMatch(xml: match)
        case nil: nil
        }
        self.init(name: try requiredName(of: element),
                  isNotDefined: element.child(AddressbookFilter.carddav, "is-not-defined") != nil,
                  textMatch: textMatch)
    }
}

extension TextMatch {
    /// Defaults: collation `i;unicode-casemap`, match-type `contains`, negate-condition `no`.
    public init(xml element: XMLElement) throws(FilterError) {
        let collation: Collation
        if let name = element.attribute("collation") {
            guard let known = Collation(rawValue: name) else { throw .unsupportedCollation(name) }
            collation = known
        } else {
            collation = .unicodeCasemap
        }
        let matchType: MatchType
        if let name = element.attribute("match-type") {
            guard let known = MatchType(rawValue: name) else { throw .unsupportedFilter("unsupported match-type \"\(name)\"") }
            matchType = known
        } else {
            matchType = .contains
        }
        let negate: Bool
        switch element.attribute("negate-condition") {
        case nil, "no": negate = false
        case "yes": negate = true
        case let other?: throw .invalid("negate-condition must be \"yes\" or \"no\", not \"\(other)\"")
        }
        self.init(element.text, collation: collation, matchType: matchType, negate: negate)
    }
}

extension FilterTest {
    /// The element's `test` attribute, `anyof` when absent.
    init(attributeOf element: XMLElement) throws(FilterError) {
        guard let value = element.attribute("test") else { self = .anyOf; return }
        guard let test = FilterTest(rawValue: value) else {
            throw .unsupportedFilter("test must be \"anyof\" or \"allof\", not \"\(value)\"")
        }
        self = test
    }
}

private func requiredName(of element: XMLElement) throws(FilterError) -> String {
    guard let name = element.attribute("name"), !name.isEmpty else {
        throw .invalid("CARDDAV:\(element.name) needs a name attribute")
    }
    return name
}
