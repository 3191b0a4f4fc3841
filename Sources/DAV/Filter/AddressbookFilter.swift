import RoloStore

/// The `CARDDAV:filter` of an addressbook-query (RFC 6352 §10.5) as plain values, so that
/// matching is a pure function of a filter and a card, testable without a server.
public struct AddressbookFilter: Sendable, Hashable {
    /// `anyof` (default) or `allof` over the prop-filters. No prop-filter matches every card.
    public var test: FilterTest
    public var propFilters: [PropFilter]

    public init(test: FilterTest = .anyOf, propFilters: [PropFilter] = []) {
        self.test = test; self.propFilters = propFilters
    }
}

/// How several tests combine: any of them (logical OR) or all of them (logical AND).
public enum FilterTest: String, Sendable, Hashable {
    case anyOf = "anyof"
    case allOf = "allof"
}

/// `CARDDAV:prop-filter`: a condition on the vCard properties called `name` (group
/// prefixes such as `item1.` are not part of the name).
public struct PropFilter: Sendable, Hashable {
    /// Upper-cased property name (`EMAIL`).
    public var name: String
    public var test: FilterTest
    /// `is-not-defined`: the card matches when it has no such property (other tests ignored).
    public var isNotDefined: Bool
    public var textMatches: [TextMatch]
    public var paramFilters: [ParamFilter]

    public init(name: String, test: FilterTest = .anyOf, isNotDefined: Bool = false,
                textMatches: [TextMatch] = [], paramFilters: [ParamFilter] = []) {
        self.name = name.uppercased(); self.test = test; self.isNotDefined = isNotDefined
        self.textMatches = textMatches; self.paramFilters = paramFilters
    }
}

/// `CARDDAV:param-filter`: a condition on one parameter (`TYPE`) of a property.
public struct ParamFilter: Sendable, Hashable {
    /// Upper-cased parameter name.
    public var name: String
    public var isNotDefined: Bool
    public var textMatch: TextMatch?

    public init(name: String, isNotDefined: Bool = false, textMatch: TextMatch? = nil) {
        self.name = name.uppercased(); self.isNotDefined = isNotDefined; self.textMatch = textMatch
    }
}

/// `CARDDAV:text-match`: compares a value with `text` under a collation (RFC 4790).
public struct TextMatch: Sendable, Hashable {
    public typealias Collation = IndexPredicate.Collation
    public typealias MatchType = IndexPredicate.MatchType

    public var text: String
    public var collation: Collation
    public var matchType: MatchType
    /// `negate-condition="yes"`: the value matches when the comparison fails.
    public var negate: Bool
    /// `text` folded for `collation`, as UTF-8: computed once, compared with every value.
    let foldedText: [UInt8]

    public init(_ text: String, collation: Collation = .unicodeCasemap, matchType: MatchType = .contains,
                negate: Bool = false) {
        self.text = text; self.collation = collation; self.matchType = matchType; self.negate = negate
        self.foldedText = collation.fold(text)
    }
}

/// Why a filter cannot be run; `precondition` names the CardDAV condition to report.
public enum FilterError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A collation other than i;unicode-casemap, i;ascii-casemap, i;octet:
    /// `CARDDAV:supported-collation` (403).
    case unsupportedCollation(String)
    /// An unknown match-type or test: `CARDDAV:supported-filter` (403).
    case unsupportedFilter(String)
    /// A malformed filter (no `name`, bad `negate-condition`…): 400 Bad Request.
    case invalid(String)

    /// The CARDDAV: precondition element name (`supported-collation`, `supported-filter`),
    /// nil when the request is simply malformed.
    public var precondition: String? {
        switch self {
        case .unsupportedCollation: "supported-collation"
        case .unsupportedFilter: "supported-filter"
        case .invalid: nil
        }
    }

    public var description: String {
        switch self {
        case .unsupportedCollation(let name): "unsupported collation \"\(name)\""
        case .unsupportedFilter(let message), .invalid(let message): message
        }
    }
}
