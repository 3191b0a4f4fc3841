@testable import VCard

/// Reads a card the way `shared/vcards/expected.json` (`conventions`) does, so tests can
/// compare a card, or its conversion, with the oracle.
enum OracleReader {
    struct Labeled: Equatable, CustomStringConvertible {
        var label: String?
        var value: String
        var preferred: Bool
        var description: String { "\(label ?? "nil")=\(value)\(preferred ? "*" : "")" }
    }

    private static let ignoredTypes: Set<String> = ["PREF", "VOICE", "INTERNET", "MSG", "TEXT", "VIDEO", "POSTAL", "PARCEL", "DOM", "INTL", "X400"]

    static func labeled(_ card: VCard, _ names: Set<String>) -> [Labeled] {
        var labels: [String: String] = [:]
        for property in card.properties where property.name == "X-ABLABEL" {
            if let group = property.group?.lowercased(), labels[group] == nil { labels[group] = property.text }
        }
        return card.properties.filter { names.contains($0.name) }.map { property in
            Labeled(label: label(property, labels), value: value(property), preferred: preferred(property))
        }
    }

    static func label(_ property: VCardProperty, _ labels: [String: String]) -> String? {
        if let group = property.group?.lowercased(), let label = labels[group], !label.isEmpty {
            if label.hasPrefix("_$!<"), label.hasSuffix(">!$_") {
                var name = String(label.dropFirst(4).dropLast(4))
                if name.hasSuffix("FAX") { name = String(name.dropLast(3)) + "Fax" }
                return name.prefix(1).lowercased() + name.dropFirst()
            }
            return label
        }
        if property.name == "ANNIVERSARY" { return "anniversary" }
        let types = Set(property.types).subtracting(ignoredTypes)
        if property.name == "RELATED" { return property.parameter("TYPE")?.first?.lowercased() }
        if types.contains("IPHONE") { return "iPhone" }
        if types.contains("FAX") {
            if types.contains("HOME") { return "homeFax" }
            if types.contains("WORK") { return "workFax" }
            return "otherFax"
        }
        for (type, label) in [("CELL", "mobile"), ("MAIN", "main"), ("PAGER", "pager"), ("HOME", "home"), ("WORK", "work"), ("OTHER", "other")]
        where types.contains(type) {
            return label
        }
        return nil
    }

    static func preferred(_ property: VCardProperty) -> Bool {
        property.types.contains("PREF") || property.parameter("PREF") == ["1"]
    }

    static func value(_ property: VCardProperty) -> String {
        switch property.name {
        case "ADR": return property.components.joined(separator: "|")
        case "BDAY", "ANNIVERSARY", "X-ABDATE": return date(property) ?? property.text
        default: return property.text
        }
    }

    /// Birthday format: YYYY-MM-DD or --MM-DD; nil for anything else.
    static func date(_ property: VCardProperty) -> String? {
        let raw = property.rawValue
        let digits = raw.filter(\.isNumber)
        if let omit = property.parameter("X-APPLE-OMIT-YEAR")?.first, raw.hasPrefix(omit), digits.count == 8 {
            let md = Array(digits.suffix(4))
            return "--\(String(md[0..<2]))-\(String(md[2..<4]))"
        }
        if raw.hasPrefix("--"), digits.count == 4 {
            let md = Array(digits)
            return "--\(String(md[0..<2]))-\(String(md[2..<4]))"
        }
        if digits.count == 8, raw.count == 8 || raw.count == 10 {
            let d = Array(digits)
            return "\(String(d[0..<4]))-\(String(d[4..<6]))-\(String(d[6..<8]))"
        }
        return nil
    }

    static func kind(_ card: VCard) -> String {
        for property in card.properties {
            let value = property.text.lowercased()
            if (property.name == "KIND" || property.name == "X-ADDRESSBOOKSERVER-KIND") && value == "group" { return "group" }
            if (property.name == "KIND" && value == "org") || (property.name == "X-ABSHOWAS" && value == "company") { return "organization" }
        }
        return "person"
    }

    static func members(_ card: VCard) -> [String] {
        card.properties.filter { $0.name == "MEMBER" || $0.name == "X-ADDRESSBOOKSERVER-MEMBER" }.map {
            let value = $0.text
            return value.lowercased().hasPrefix("urn:uuid:") ? String(value.dropFirst(9)) : value
        }
    }

    static func categories(_ card: VCard) -> [String] {
        card.properties(named: "CATEGORIES").flatMap { $0.rawValue.isEmpty ? [] : $0.listValues }
    }

    static let labeledNames: [(key: String, names: Set<String>)] = [
        ("phones", ["TEL"]), ("emails", ["EMAIL"]), ("urls", ["URL"]), ("addresses", ["ADR"]),
        ("dates", ["X-ABDATE", "ANNIVERSARY"]), ("related_names", ["X-ABRELATEDNAMES", "RELATED"]),
    ]
}
