/// A structured postal address: the seven ADR components, plus the ISO country code Apple
/// keeps beside it (`X-ABADR`).
public struct PostalAddress: Sendable, Hashable {
    public var poBox: String
    public var extended: String
    public var street: String
    public var locality: String
    public var region: String
    public var postalCode: String
    public var country: String
    /// ISO 3166 country code from Apple's `X-ABADR` in the same item group (`se`).
    public var isoCountryCode: String?

    public init(poBox: String = "", extended: String = "", street: String = "", locality: String = "",
                region: String = "", postalCode: String = "", country: String = "", isoCountryCode: String? = nil) {
        self.poBox = poBox
        self.extended = extended
        self.street = street
        self.locality = locality
        self.region = region
        self.postalCode = postalCode
        self.country = country
        self.isoCountryCode = isoCountryCode
    }

    /// The ADR components in vCard order.
    public var components: [String] { [poBox, extended, street, locality, region, postalCode, country] }

    /// Reads ADR components; missing trailing ones are empty. Components past the seventh are
    /// folded into the country so nothing is dropped.
    init(components: [String], isoCountryCode: String?) {
        var parts = components
        if parts.count > 7 { parts = Array(parts[0..<6]) + [parts[6...].joined(separator: ";")] }
        while parts.count < 7 { parts.append("") }
        self.init(poBox: parts[0], extended: parts[1], street: parts[2], locality: parts[3],
                  region: parts[4], postalCode: parts[5], country: parts[6], isoCountryCode: isoCountryCode)
    }
}
