/// Apple's `itemN.X-ABLabel` convention: a label applies to every property of its group;
/// built-in labels are written `_$!<Name>!$_`.
struct AppleLabels {
    /// Label text (still escaped) per lower-cased group.
    private(set) var labelsByGroup: [String: String] = [:]
    private var nextItemNumber = 1

    init(_ properties: [VCardProperty]) {
        var highest = 0
        for property in properties {
            if let key = property.groupKey {
                if key.hasPrefix("item"), let number = Int(key.dropFirst(4)) { highest = max(highest, number) }
                if property.name == "X-ABLABEL", labelsByGroup[key] == nil { labelsByGroup[key] = property.rawValue }
            }
        }
        nextItemNumber = highest + 1
    }

    func label(of property: VCardProperty) -> String? {
        property.groupKey.flatMap { labelsByGroup[$0] }
    }

    /// The `Name` of a built-in label `_$!<Name>!$_`, or nil for custom text.
    static func builtinName(_ label: String) -> String? {
        guard label.hasPrefix("_$!<"), label.hasSuffix(">!$_"), label.count >= 8 else { return nil }
        return String(label.dropFirst(4).dropLast(4))
    }

    static func builtin(_ name: String) -> String { "_$!<\(name)>!$_" }

    /// A fresh `itemN` group that no property of the card uses.
    mutating func newGroup() -> String {
        defer { nextItemNumber += 1 }
        return "item\(nextItemNumber)"
    }

    mutating func register(label: String, group: String) {
        labelsByGroup[group.lowercased()] = label
    }

    static func labelProperty(_ label: String, group: String) -> VCardProperty {
        VCardProperty(group: group, upperName: "X-ABLABEL", parameters: [], rawValue: label, line: 0)
    }

    /// Apple related-name labels <-> RFC 6350 RELATED TYPE values.
    static func relatedType(forBuiltin name: String) -> String? {
        switch name.lowercased() {
        case "spouse": return "spouse"
        case "child": return "child"
        case "mother", "father", "parent": return "parent"
        case "brother", "sister": return "sibling"
        case "friend": return "friend"
        default: return nil
        }
    }

    static func builtinName(forRelatedType type: String) -> String? {
        switch type.lowercased() {
        case "spouse": return "Spouse"
        case "child": return "Child"
        case "parent": return "Parent"
        case "friend": return "Friend"
        default: return nil
        }
    }

    /// TYPE values of RFC 6350 §6.6.6 RELATED.
    static let relatedTypes: Set<String> = [
        "contact", "acquaintance", "friend", "met", "co-worker", "colleague", "co-resident", "neighbor",
        "child", "parent", "sibling", "spouse", "kin", "muse", "crush", "date", "sweetheart", "me", "agent", "emergency",
    ]
}
