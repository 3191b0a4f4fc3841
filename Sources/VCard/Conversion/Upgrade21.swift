/// vCard 2.1 -> 3.0: values re-escaped (2.1 text has literal commas and line breaks),
/// BASE64 -> `ENCODING=b`, TYPE tokens upper-case. QUOTED-PRINTABLE and CHARSET were
/// already decoded by the parser.
enum Upgrade21 {
    private static let structured: Set<String> = ["N", "ADR", "ORG"]
    private static let lists: Set<String> = ["CATEGORIES", "NICKNAME"]
    private static let texts: Set<String> = ["FN", "NOTE", "TITLE", "ROLE", "LABEL", "PRODID", "SORT-STRING", "CLASS"]

    static func toV30(_ card: VCard) -> VCard {
        var properties: [VCardProperty] = []
        properties.reserveCapacity(card.properties.count)
        for var property in card.properties {
            if property.name == "VERSION" {
                property.rawValue = VCardVersion.v30.rawValue
                properties.append(property)
                continue
            }
            property.parameters = property.parameters.compactMap(convertParameter)
            property.rawValue = convertValue(property.rawValue, of: property.name)
            if VersionConversion.dateProperties.contains(property.name) {
                DateConversion.toV30(&property)
            }
            properties.append(property)
        }
        return VCard(version: .v30, properties: properties, line: card.line)
    }

    private static func convertParameter(_ parameter: VCardParameter) -> VCardParameter? {
        switch parameter.name {
        case "ENCODING":
            let value = parameter.values.first?.uppercased() ?? ""
            if value == "BASE64" || value == "B" { return VCardParameter(upperName: "ENCODING", values: ["b"]) }
            return nil
        case "TYPE":
            return VCardParameter(upperName: "TYPE", values: parameter.values.map { $0.uppercased() })
        default:
            return parameter
        }
    }

    private static func convertValue(_ raw: String, of name: String) -> String {
        if structured.contains(name) {
            return split21(raw, on: Byte.semicolon).map(VCardEscaping.escape).joined(separator: ";")
        }
        if lists.contains(name) {
            return split21(raw, on: Byte.comma).map(VCardEscaping.escape).joined(separator: ",")
        }
        if texts.contains(name) {
            return VCardEscaping.escape(split21(raw, on: nil)[0])
        }
        // A 3.0 value cannot hold a raw line break (from QUOTED-PRINTABLE or joined lines).
        return raw.replacingNewlines(with: "\\n")
    }

    /// Splits 2.1 text where only `\;` (and `\\`) are escapes; other backslashes are literal.
    private static func split21(_ raw: String, on separator: UInt8?) -> [String] {
        var parts: [String] = []
        var current: [UInt8] = []
        var iterator = raw.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == Byte.backslash {
                guard let next = iterator.next() else {
                    current.append(byte)
                    break
                }
                if next == Byte.semicolon || next == Byte.backslash || (separator != nil && next == separator) {
                    current.append(next)
                } else {
                    current.append(byte)
                    current.append(next)
                }
            } else if let separator, byte == separator {
                parts.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
            } else {
                current.append(byte)
            }
        }
        parts.append(String(decoding: current, as: UTF8.self))
        return parts
    }
}
