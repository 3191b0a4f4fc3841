/// Entry point of `VCardConverter`: 2.1 is first raised to 3.0, then 3.0 <-> 4.0. A card
/// that changes version and has no FN gets one derived from its other properties.
enum VersionConversion {
    static func convert(_ card: VCard, to target: VCardVersion) -> VCard {
        if target == .v21 || card.version == target { return card }
        var card = card
        if card.version == .v21 { card = Upgrade21.toV30(card) }
        if card.version != target {
            card = target == .v40 ? V30ToV40.convert(card) : V40ToV30.convert(card)
        }
        return FormattedName.ensure(card)
    }

    /// Properties whose binary value is base64 in 3.0 and a `data:` URI in 4.0.
    static let inlineBinaryProperties: Set<String> = ["PHOTO", "LOGO", "SOUND", "KEY"]

    /// Properties holding a date (or date-time) that Apple writes in extended form in 3.0.
    static let dateProperties: Set<String> = ["BDAY", "ANNIVERSARY", "X-ABDATE", "DEATHDATE"]

    /// Rewrites the TYPE parameters of a property: case per version, `pref` token <-> `PREF=1`.
    static func convertTypes(_ property: inout VCardProperty, to target: VCardVersion) {
        let changeCase = !property.name.hasPrefix("X-")
        var converted: [VCardParameter] = []
        converted.reserveCapacity(property.parameters.count + 1)
        var hasPrefParameter = property.parameters.contains { $0.name == "PREF" }
        for parameter in property.parameters {
            switch (parameter.name, target) {
            case ("TYPE", .v40):
                var values: [String] = []
                var sawPref = false
                for value in parameter.values {
                    for token in value.split(separator: ",", omittingEmptySubsequences: false) {
                        if token.lowercased() == "pref" && !hasPrefParameter {
                            // Kept as a TYPE token when a PREF parameter already says something else.
                            sawPref = true
                        } else {
                            values.append(changeCase ? token.lowercased() : String(token))
                        }
                    }
                }
                if !values.isEmpty { converted.append(VCardParameter(upperName: "TYPE", values: values)) }
                if sawPref {
                    converted.append(VCardParameter(upperName: "PREF", values: ["1"]))
                    hasPrefParameter = true
                }
            case ("TYPE", _):
                let values = parameter.values.map { changeCase ? $0.uppercased() : $0 }
                converted.append(VCardParameter(upperName: "TYPE", values: values))
            case ("PREF", .v30) where parameter.values == ["1"]:
                converted.append(VCardParameter(upperName: "TYPE", values: ["PREF"]))
            default:
                converted.append(parameter)
            }
        }
        property.parameters = converted
    }

    static func removeParameters(_ property: inout VCardProperty, named names: Set<String>) {
        property.parameters.removeAll { names.contains($0.name) }
    }
}

extension VCardProperty {
    /// The group compared case-insensitively (`item1` = `ITEM1`).
    var groupKey: String? { group.map { $0.lowercased() } }
}
