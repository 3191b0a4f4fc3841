/// vCard 3.0 -> 4.0. Apple `itemN` groups and their `X-ABLabel` are kept as they are, so
/// every label survives; standard 4.0 forms are added where 4.0 has one (KIND, MEMBER,
/// ANNIVERSARY, RELATED, PREF=1, data: URIs, ADR LABEL parameter, `--MMDD`).
enum V30ToV40 {
    static func convert(_ card: VCard) -> VCard {
        let labels = AppleLabels(card.properties)
        let addressLabels = attachAddressLabels(card.properties)
        let hasKind = card.properties.contains { $0.name == "KIND" || $0.name == "X-ADDRESSBOOKSERVER-KIND" }
        var sawAnniversary = card.properties.contains { $0.name == "ANNIVERSARY" }

        var properties: [VCardProperty] = []
        properties.reserveCapacity(card.properties.count + 1)
        var version = VCardProperty(group: nil, upperName: "VERSION", parameters: [], rawValue: "4.0", line: 0)
        for (index, original) in card.properties.enumerated() {
            var property = original
            switch property.name {
            case "VERSION":
                version.line = property.line
                continue
            case "LABEL" where addressLabels.consumed.contains(index):
                continue
            case "ADR":
                if let label = addressLabels.byAddress[index] {
                    property.parameters.append(VCardParameter(upperName: "LABEL", values: [label]))
                }
            case "X-ADDRESSBOOKSERVER-KIND":
                property.name = "KIND"
                property.rawValue = property.rawValue.lowercased()
            case "X-ADDRESSBOOKSERVER-MEMBER":
                property.name = "MEMBER"
            case "X-ABSHOWAS" where !hasKind && property.rawValue.uppercased() == "COMPANY":
                properties.append(property)
                property = VCardProperty(group: nil, upperName: "KIND", parameters: [], rawValue: "org", line: property.line)
            case "X-ABDATE":
                if !sawAnniversary, let label = labels.label(of: property), AppleLabels.builtinName(label) == "Anniversary" {
                    property.name = "ANNIVERSARY"
                    sawAnniversary = true
                }
            case "X-ABRELATEDNAMES":
                property.name = "RELATED"
                if property.parameter("VALUE") == nil {
                    property.parameters.append(VCardParameter(upperName: "VALUE", values: ["text"]))
                }
                if let label = labels.label(of: property), let builtin = AppleLabels.builtinName(label),
                   let type = AppleLabels.relatedType(forBuiltin: builtin) {
                    property.parameters.insert(VCardParameter(upperName: "TYPE", values: [type]), at: 0)
                }
            default:
                break
            }
            if VersionConversion.inlineBinaryProperties.contains(property.name) {
                convertInlineBinary(&property)
            }
            if VersionConversion.dateProperties.contains(property.name) {
                DateConversion.toV40(&property)
            }
            VersionConversion.convertTypes(&property, to: .v40)
            properties.append(property)
        }
        properties.insert(version, at: 0)
        return VCard(version: .v40, properties: properties, line: card.line)
    }

    /// `PHOTO;ENCODING=b;TYPE=JPEG:<base64>` -> `PHOTO:data:image/jpeg;base64,<base64>`.
    private static func convertInlineBinary(_ property: inout VCardProperty) {
        guard let encoding = property.parameter("ENCODING")?.first?.uppercased(), encoding == "B" || encoding == "BASE64" else {
            return
        }
        let mediaType = MediaTypes.mediaType(forTypeParameter: property.parameter("TYPE")?.first, property: property.name) ?? ""
        let raw = property.rawValue
        let payload = raw.utf8.contains { $0 == Byte.space || $0 == Byte.tab } ? raw.filter { $0 != " " && $0 != "\t" } : raw
        property.rawValue = "data:" + mediaType + ";base64," + payload
        VersionConversion.removeParameters(&property, named: ["ENCODING", "TYPE"])
    }

    /// 3.0 LABEL properties -> the 4.0 LABEL parameter of their ADR: same group, else the
    /// nearest ADR with the same TYPE tokens (PREF ignored) that has no label yet.
    private static func attachAddressLabels(_ properties: [VCardProperty]) -> (byAddress: [Int: String], consumed: Set<Int>) {
        var byAddress: [Int: String] = [:]
        var consumed: Set<Int> = []
        guard properties.contains(where: { $0.name == "LABEL" }) else { return ([:], []) }
        let addresses = properties.indices.filter { properties[$0].name == "ADR" && properties[$0].parameter("LABEL") == nil }
        func typeKey(_ property: VCardProperty) -> Set<String> {
            Set(property.types.filter { $0 != "PREF" })
        }
        for (index, label) in properties.enumerated() where label.name == "LABEL" {
            let candidates = addresses.filter { byAddress[$0] == nil }
            let match: Int?
            if let group = label.groupKey {
                match = candidates.first { properties[$0].groupKey == group }
            } else {
                let key = typeKey(label)
                let sameType = candidates.filter { properties[$0].groupKey == nil && typeKey(properties[$0]) == key }
                match = sameType.last { $0 < index } ?? sameType.first
            }
            guard let match else { continue }
            // The parameter holds the label escaped as text, as 4.0 writes it and the way back
            // (`V40ToV30`) reads it: a backslash as `\\`, else `C:\new` came back with a
            // line break (found by fuzzing).
            byAddress[match] = label.text.replacingOccurrences("\\", with: "\\\\").replacingNewlines(with: "\\n")
            consumed.insert(index)
        }
        return (byAddress, consumed)
    }
}

extension String {
    func replacingNewlines(with replacement: String) -> String {
        guard contains(where: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) else { return self }
        var out = ""
        for character in self {
            if character == "\n" || character == "\r\n" || character == "\r" { out += replacement } else { out.append(character) }
        }
        return out
    }
}
