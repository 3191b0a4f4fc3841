/// vCard 4.0 -> 3.0 in the shape Apple clients read: X-ADDRESSBOOKSERVER-KIND/-MEMBER,
/// `itemN.X-ABDATE` + `_$!<Anniversary>!$_`, `itemN.X-ABRELATEDNAMES` + `_$!<Spouse>!$_`,
/// `TYPE=PREF`, `ENCODING=b` photos, X-APPLE-OMIT-YEAR, LABEL properties for ADR labels.
enum V40ToV30 {
    static func convert(_ card: VCard) -> VCard {
        var labels = AppleLabels(card.properties)
        // KIND:org is Apple's X-ABShowAs:COMPANY, unless the card already says that (another
        // X-ABShowAs, such as PERSON, does not: found by fuzzing, the org was lost).
        let showsAsCompany = card.properties.contains { $0.name == "X-ABSHOWAS" && $0.rawValue.uppercased() == "COMPANY" }

        var properties: [VCardProperty] = []
        properties.reserveCapacity(card.properties.count + 4)
        for original in card.properties {
            var property = original
            var trailing: [VCardProperty] = []
            switch property.name {
            case "VERSION":
                property.rawValue = VCardVersion.v30.rawValue
                properties.append(property)
                continue
            case "KIND":
                let kind = property.rawValue.lowercased()
                // Only RFC 6350's `org`: `organization` is no kind vCard defines, and came
                // back from 3.0 as `org` (found by fuzzing); it stays as written.
                if kind == "org" {
                    if showsAsCompany { continue }
                    property.name = "X-ABSHOWAS"
                    property.rawValue = "COMPANY"
                } else {
                    property.name = "X-ADDRESSBOOKSERVER-KIND"
                    property.rawValue = kind
                }
            case "MEMBER":
                property.name = "X-ADDRESSBOOKSERVER-MEMBER"
            case "ANNIVERSARY":
                property.name = "X-ABDATE"
                VersionConversion.removeParameters(&property, named: ["VALUE"])
                if labels.label(of: property) == nil {
                    let group = property.group ?? labels.newGroup()
                    property.group = group
                    let label = AppleLabels.builtin("Anniversary")
                    labels.register(label: label, group: group)
                    trailing.append(AppleLabels.labelProperty(label, group: group))
                }
            case "RELATED":
                convertRelated(&property, labels: &labels, trailing: &trailing)
            case "ADR":
                // The raw values: a label is one quoted value that may hold commas.
                if let label = property.parameterValues("LABEL")?.joined(separator: ",") {
                    VersionConversion.removeParameters(&property, named: ["LABEL"])
                    var parameters: [VCardParameter] = []
                    if let types = property.parameter("TYPE") { parameters.append(VCardParameter(upperName: "TYPE", values: types)) }
                    if let pref = property.parameter("PREF") { parameters.append(VCardParameter(upperName: "PREF", values: pref)) }
                    var labelProperty = VCardProperty(
                        group: property.group, upperName: "LABEL", parameters: parameters,
                        rawValue: VCardEscaping.escape(VCardEscaping.unescape(label[...])), line: property.line)
                    VersionConversion.convertTypes(&labelProperty, to: .v30)
                    trailing.append(labelProperty)
                }
            default:
                break
            }
            if VersionConversion.inlineBinaryProperties.contains(property.name) {
                convertInlineBinary(&property)
            }
            if VersionConversion.dateProperties.contains(property.name) {
                DateConversion.toV30(&property)
            }
            VersionConversion.convertTypes(&property, to: .v30)
            properties.append(property)
            properties.append(contentsOf: trailing)
        }
        return VCard(version: .v30, properties: properties, line: card.line)
    }

    /// RELATED -> X-ABRELATEDNAMES; a relation type Apple knows becomes its built-in label.
    private static func convertRelated(_ property: inout VCardProperty, labels: inout AppleLabels, trailing: inout [VCardProperty]) {
        property.name = "X-ABRELATEDNAMES"
        if property.parameter("VALUE") == nil {
            property.parameters.append(VCardParameter(upperName: "VALUE", values: ["uri"]))
        } else if property.parameter("VALUE")?.first?.lowercased() == "text" {
            VersionConversion.removeParameters(&property, named: ["VALUE"])
        }
        let types = property.parameter("TYPE") ?? []
        var dropped: Set<String> = []
        if labels.label(of: property) != nil {
            // The group's label already says it (it came from 3.0): drop the derived TYPE.
            dropped = Set(types.map { $0.lowercased() }.filter { AppleLabels.relatedTypes.contains($0) })
        } else if let type = types.first(where: { AppleLabels.builtinName(forRelatedType: $0) != nil }),
                  let builtin = AppleLabels.builtinName(forRelatedType: type) {
            let group = property.group ?? labels.newGroup()
            property.group = group
            let label = AppleLabels.builtin(builtin)
            labels.register(label: label, group: group)
            trailing.append(AppleLabels.labelProperty(label, group: group))
            dropped = [type.lowercased()]
        }
        if dropped.isEmpty { return }
        property.parameters = property.parameters.compactMap { parameter in
            guard parameter.name == "TYPE" else { return parameter }
            let kept = parameter.values
                .flatMap { $0.split(separator: ",").map(String.init) }
                .filter { !dropped.contains($0.lowercased()) }
            return kept.isEmpty ? nil : VCardParameter(upperName: "TYPE", values: kept)
        }
    }

    /// `PHOTO:data:image/jpeg;base64,<b64>` -> `PHOTO;ENCODING=b;TYPE=JPEG:<b64>`; other URIs get
    /// VALUE=uri, and so does a `;base64` URI whose data is not base64: taken out of the URI
    /// it would be read as escaped text and come back changed (found by fuzzing).
    private static func convertInlineBinary(_ property: inout VCardProperty) {
        guard let parts = DataURI.base64Parts(property.rawValue), Base64.isEncoded(parts.payload) else {
            if property.parameter("VALUE") == nil, property.rawValue.contains(":") {
                property.parameters.append(VCardParameter(upperName: "VALUE", values: ["uri"]))
            }
            return
        }
        VersionConversion.removeParameters(&property, named: ["MEDIATYPE", "VALUE"])
        var parameters = [VCardParameter(upperName: "ENCODING", values: ["b"])]
        if let mediaType = parts.mediaType {
            parameters.append(VCardParameter(upperName: "TYPE", values: [MediaTypes.typeParameter(forMediaType: mediaType)]))
        }
        property.parameters = parameters + property.parameters
        property.rawValue = String(parts.payload)
    }
}
