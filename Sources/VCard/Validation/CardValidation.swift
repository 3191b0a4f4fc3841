/// The checks behind `VCardValidator`: what a CardDAV server must refuse as
/// `valid-address-data` once the stream itself parsed.
enum CardValidation {
    static func validate(_ card: VCard, requireUID: Bool) throws(VCardError) {
        let versions = card.properties.filter { $0.name == "VERSION" }
        if let first = versions.first {
            let declared = first.rawValue.trimmingASCIISpaces()
            if let other = versions.dropFirst().first(where: { $0.rawValue.trimmingASCIISpaces() != declared }) {
                throw VCardError("VERSION appears twice with different values (\(declared) and \(other.rawValue))", line: lineOrNil(other.line))
            }
            if declared != card.version.rawValue {
                throw VCardError("VERSION:\(declared) does not match the card's version \(card.version.rawValue)", line: lineOrNil(first.line))
            }
        }
        if card.version != .v21, !card.properties.contains(where: { $0.name == "FN" }) {
            throw VCardError("missing FN property: vCard \(card.version.rawValue) requires a formatted name (FN)")
        }
        if requireUID {
            let uids = card.properties.filter { $0.name == "UID" }
            guard let uid = uids.first, !uid.text.trimmingASCIISpaces().isEmpty else {
                throw VCardError("missing UID property: a CardDAV address object must carry a UID")
            }
            if uids.count > 1 {
                throw VCardError("UID appears more than once", line: lineOrNil(uids[1].line))
            }
        }
        for property in card.properties where property.name.isEmpty {
            throw VCardError("property without a name", line: lineOrNil(property.line))
        }
    }

    private static func lineOrNil(_ line: Int) -> Int? { line > 0 ? line : nil }
}
