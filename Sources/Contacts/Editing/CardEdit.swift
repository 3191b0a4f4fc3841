import VCard

/// What a contact editor shows and sends back: names, organisation, birthday, note,
/// categories and the labeled phones, e-mail addresses, URLs and postal addresses. Each
/// labeled value read from a card keeps `ref`, the index of its property in the card, so
/// that `CardPatch.apply(_:)` changes exactly the lines whose values were edited. Whatever
/// else the card holds is no part of it and stays as it is.
public struct CardEdit: Sendable, Hashable {
    /// One labeled value (phone, e-mail, URL).
    public struct Value: Sendable, Hashable {
        /// The property's index in the card it was read from; nil for a new value.
        public var ref: Int?
        public var label: Label?
        public var value: String
        public init(ref: Int? = nil, label: Label?, value: String) {
            self.ref = ref; self.label = label; self.value = value
        }
    }

    public struct Address: Sendable, Hashable {
        public var ref: Int?
        public var label: Label?
        public var value: PostalAddress
        public init(ref: Int? = nil, label: Label?, value: PostalAddress) {
            self.ref = ref; self.label = label; self.value = value
        }
    }

    /// FN as the card shows it; empty: made from the names (`derivedFormattedName`).
    public var formattedName = ""
    public var namePrefix = ""
    public var givenName = ""
    public var middleName = ""
    public var familyName = ""
    public var nameSuffix = ""
    public var nickname = ""
    public var organization = ""
    public var department = ""
    public var jobTitle = ""
    /// With or without a year.
    public var birthday: ContactDate?
    public var note = ""
    public var phones: [Value] = []
    public var emails: [Value] = []
    public var urls: [Value] = []
    public var addresses: [Address] = []
    public var categories: [String] = []

    public init() {}

    /// The FN a card gets from these names: prefix, given, middle, family, suffix; else the organisation.
    public var derivedFormattedName: String {
        let personal = [namePrefix, givenName, middleName, familyName, nameSuffix]
            .map { $0.trimmingSpaces }.filter { !$0.isEmpty }
        if !personal.isEmpty { return personal.joined(separator: " ") }
        return organization.trimmingSpaces
    }

    /// Reads the editable part of a card (the first of each single-valued property).
    public init(card: VCard) {
        var seen: Set<String> = []
        for (index, property) in card.properties.enumerated() {
            let name = property.name
            switch name {
            case "TEL":
                phones.append(Value(ref: index, label: CardEdit.label(of: property, in: card), value: CardEdit.phoneText(property)))
            case "EMAIL":
                emails.append(Value(ref: index, label: CardEdit.label(of: property, in: card), value: property.text))
            case "URL":
                urls.append(Value(ref: index, label: CardEdit.label(of: property, in: card), value: property.text))
            case "ADR":
                let country = CardEdit.companion("X-ABADR", of: property, in: card)?.text
                addresses.append(Address(ref: index, label: CardEdit.label(of: property, in: card),
                                         value: PostalAddress(components: property.components, isoCountryCode: country)))
            case "CATEGORIES":
                categories += property.listValues.filter { !$0.isEmpty }
            default:
                guard seen.insertFirst(name) else { continue }
                switch name {
                case "FN": formattedName = property.text
                case "N":
                    let parts = property.components.padded(to: 5)
                    familyName = parts[0]; givenName = parts[1]; middleName = parts[2]
                    namePrefix = parts[3]; nameSuffix = parts[4]
                case "NICKNAME": nickname = property.text
                case "ORG":
                    let parts = property.components.padded(to: 2)
                    organization = parts[0]; department = parts[1]
                case "TITLE": jobTitle = property.text
                case "NOTE": note = property.text
                case "BDAY": birthday = CardEdit.date(property)
                default: break
                }
            }
        }
    }

    /// The label a phone shows for a labeled property: its item group's `X-ABLabel`, else
    /// its TYPE tokens (design.md's table).
    public static func label(of property: VCardProperty, in card: VCard) -> Label? {
        if let text = companion("X-ABLABEL", of: property, in: card)?.text, let label = Label(abLabel: text) { return label }
        return Label(typeTokens: property.typeTokensAsWritten)
    }

    static func companion(_ name: String, of property: VCardProperty, in card: VCard) -> VCardProperty? {
        guard let group = property.group?.lowercased() else { return nil }
        return card.properties.first { $0.name == name && $0.group?.lowercased() == group }
    }

    /// A phone number as a person reads it: a vCard 4 `tel:` URI without its scheme.
    static func phoneText(_ property: VCardProperty) -> String {
        let text = property.text
        return text.lowercased().hasPrefix("tel:") ? String(text.dropFirst(4)) : text
    }

    /// BDAY with Apple's X-APPLE-OMIT-YEAR read as "no year".
    static func date(_ property: VCardProperty) -> ContactDate? {
        guard var date = ContactDate(vCardText: property.text) else { return nil }
        if let omitted = property.parameter("X-APPLE-OMIT-YEAR")?.first.flatMap({ Int($0) }), omitted == date.year {
            date.year = nil
        }
        return date
    }
}
