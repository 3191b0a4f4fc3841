import Foundation
import VCard

extension Contact {
    /// Reads a parsed card into the model by the corpus reading rules
    /// (expected.json `conventions`). Never fails: what the model cannot map is kept in
    /// `unmappedProperties` and written back unchanged.
    public init(vCard card: VCard) {
        var reader = ContactReader(card: card)
        self = reader.read()
    }
}

/// Property names the model maps to labeled values.
enum LabeledProperty: String, CaseIterable {
    case tel = "TEL", email = "EMAIL", adr = "ADR", url = "URL"
    case abDate = "X-ABDATE", anniversary = "ANNIVERSARY"
    case abRelatedNames = "X-ABRELATEDNAMES", related = "RELATED"
    case socialProfile = "X-SOCIALPROFILE", impp = "IMPP"
}

/// Apple's companions of a labeled property in the same item group.
enum Companion {
    static let label = "X-ABLABEL"
    static let countryCode = "X-ABADR"
}

/// One pass over a card's properties building a `Contact`.
private struct ContactReader {
    let card: VCard
    var contact = Contact.empty
    /// Lower-cased groups holding a mapped labeled property: their X-ABLabel/X-ABADR are consumed.
    var labeledGroups: Set<String> = []
    /// First X-ABLabel / X-ABADR per lower-cased group.
    var companions: [String: [String: VCardProperty]] = [:]
    var seen: Set<String> = []
    var isGroup = false
    var isOrganization = false

    init(card: VCard) { self.card = card }

    mutating func read() -> Contact {
        labeledGroups = Set(card.properties.compactMap { property in
            isMappedLabeled(property) ? property.group?.lowercased() : nil
        })
        for property in card.properties where property.name == Companion.label || property.name == Companion.countryCode {
            guard let group = property.group?.lowercased(), companions[group]?[property.name] == nil else { continue }
            companions[group, default: [:]][property.name] = property
        }
        for property in card.properties { read(property) }
        contact.kind = isGroup ? .group : isOrganization ? .organization : .person
        keepGroupsSharedWithUnmapped()
        return contact
    }

    private func isMappedLabeled(_ property: VCardProperty) -> Bool {
        guard let kind = LabeledProperty(rawValue: property.name) else { return false }
        switch kind {
        case .abDate, .anniversary: return parseDate(property) != nil
        default: return true
        }
    }

    // MARK: Properties

    private mutating func read(_ property: VCardProperty) {
        if let kind = LabeledProperty(rawValue: property.name), isMappedLabeled(property) {
            readLabeled(property, kind)
            return
        }
        if property.name == Companion.label || property.name == Companion.countryCode,
           let group = property.group?.lowercased(), labeledGroups.contains(group) {
            return
        }
        if readSingle(property) { return }
        contact.unmappedProperties.append(property.withoutLine)
    }

    /// Maps the first occurrence of a single-valued property; false when it is not one (or a repeat).
    private mutating func readSingle(_ property: VCardProperty) -> Bool {
        let name = property.name
        switch name {
        case "VERSION":
            return seen.insertFirst(name)
        case "KIND", "X-ADDRESSBOOKSERVER-KIND":
            switch property.text.lowercased() {
            case "group": isGroup = true
            case "org" where name == "KIND": isOrganization = true
            default: return false
            }
            return true
        case "X-ABSHOWAS":
            guard property.text.uppercased() == "COMPANY" else { return false }
            isOrganization = true
            return true
        case "MEMBER", "X-ADDRESSBOOKSERVER-MEMBER":
            contact.memberIdentifiers.append(MemberReference.stripped(property.text))
            return true
        case "CATEGORIES":
            contact.categories += property.listValues.filter { !$0.isEmpty }
            if seen.insertFirst(name) { keepParameters(of: property) }
            return true
        default:
            break
        }
        guard !seen.contains(name) else { return false }
        switch name {
        case "UID": contact.identifier = property.text
        case "FN": contact.formattedName = property.text
        case "N":
            let parts = property.components.padded(to: 5)
            guard property.components.count <= 5 else { return false }
            contact.familyName = parts[0]
            contact.givenName = parts[1]
            contact.middleName = parts[2]
            contact.namePrefix = parts[3]
            contact.nameSuffix = parts[4]
        case "NICKNAME": contact.nickname = property.text
        case "X-PHONETIC-FIRST-NAME": contact.phoneticGivenName = property.text
        case "X-PHONETIC-MIDDLE-NAME": contact.phoneticMiddleName = property.text
        case "X-PHONETIC-LAST-NAME": contact.phoneticFamilyName = property.text
        case "ORG":
            let parts = property.components.padded(to: 2)
            contact.organizationName = parts[0]
            contact.departmentName = parts[1]
            contact.extraOrganizationUnits = Array(parts.dropFirst(2))
        case "TITLE": contact.jobTitle = property.text
        case "NOTE": contact.note = property.text
        case "BDAY":
            guard let date = parseDate(property) else { return false }
            contact.birthday = date
            contact.singleValueParameters[name] = property.parameters.without(ContactReader.dateParameters)
            seen.insert(name)
            return true
        case "PHOTO":
            guard let image = ContactImage(photo: property) else { return false }
            contact.image = image
            contact.singleValueParameters[name] = property.parameters.without(ContactImage.photoParameters)
            seen.insert(name)
            return true
        default:
            return false
        }
        seen.insert(name)
        keepParameters(of: property)
        return true
    }

    /// Keeps a mapped single-valued property's parameters (N;LANGUAGE=en-us) for writing back.
    private mutating func keepParameters(of property: VCardProperty) {
        let kept = property.parameters.without(ContactReader.transferParameters)
        if !kept.isEmpty { contact.singleValueParameters[property.name] = kept }
    }

    // MARK: Labeled values

    private mutating func readLabeled(_ property: VCardProperty, _ kind: LabeledProperty) {
        let tokens = property.typeTokensAsWritten
        let abLabel = companion(Companion.label, of: property).flatMap { Label(abLabel: $0.text) }
        var label = abLabel ?? Label(typeTokens: tokens)
        var consumedTokens = label?.impliedTypeTokens ?? []
        var consumedParameters: Set<String> = ["PID"]
        switch kind {
        case .anniversary:
            if abLabel == nil { label = .anniversary }
        case .related where abLabel == nil:
            let token = tokens.first { $0.uppercased() != "PREF" }
            label = token.map(Label.init(relatedType:))
            consumedTokens = token.map { [$0.uppercased()] } ?? []
        case .socialProfile:
            label = abLabel
            consumedTokens = tokens.first { $0.uppercased() != "PREF" }.map { [$0.uppercased()] } ?? []
            consumedParameters.insert("X-USER")
        case .impp:
            consumedParameters.insert("X-SERVICE-TYPE")
        case .abDate:
            consumedParameters.formUnion(ContactReader.dateParameters)
        default:
            break
        }
        if kind == .anniversary { consumedParameters.formUnion(ContactReader.dateParameters) }
        consumedTokens.insert("PREF")

        let prefParameter = property.parameter("PREF")?.first
        let isPreferred = tokens.contains { $0.uppercased() == "PREF" } || prefParameter == "1"
        if prefParameter == "1" { consumedParameters.insert("PREF") }
        let pid = property.parameter("PID").map { $0.joined(separator: ",") }

        var extras = PropertyExtras()
        extras.group = property.group
        extras.typeTokens = tokens.filter { !consumedTokens.contains($0.uppercased()) }
        extras.parameters = property.parameters
            .filter { $0.name != "TYPE" && !consumedParameters.contains($0.name) }
            .without(ContactReader.transferParameters)

        func labeled<Value>(_ value: Value, into array: inout [LabeledValue<Value>], _ key: String) {
            var entry = LabeledValue(identifier: pid.map { "pid:\($0)" } ?? "\(key)#\(array.count)",
                                     label: label, value: value, isPreferred: isPreferred, pid: pid)
            entry.extras = extras
            array.append(entry)
        }

        switch kind {
        case .tel: labeled(property.text, into: &contact.phoneNumbers, "phones")
        case .email: labeled(property.text, into: &contact.emailAddresses, "emails")
        case .url: labeled(property.text, into: &contact.urlAddresses, "urls")
        case .adr:
            let countryCode = companion(Companion.countryCode, of: property)?.text
            labeled(PostalAddress(components: property.components, isoCountryCode: countryCode),
                    into: &contact.postalAddresses, "addresses")
        case .abDate, .anniversary:
            if let date = parseDate(property) { labeled(date, into: &contact.dates, "dates") }
        case .abRelatedNames, .related: labeled(property.text, into: &contact.relatedNames, "related")
        case .socialProfile:
            let service = tokens.first { $0.uppercased() != "PREF" }
            let profile = SocialProfile(service: service, username: property.parameter("X-USER")?.first,
                                        urlString: property.text)
            labeled(profile, into: &contact.socialProfiles, "social")
        case .impp:
            var address = InstantMessageAddress(service: "", uri: property.text)
            address.service = property.parameter("X-SERVICE-TYPE")?.first ?? address.scheme
            labeled(address, into: &contact.instantMessageAddresses, "impp")
        }
    }

    /// The first companion property (X-ABLabel, X-ABADR) in the same group.
    private func companion(_ name: String, of property: VCardProperty) -> VCardProperty? {
        guard let group = property.group?.lowercased() else { return nil }
        return companions[group]?[name]
    }

    /// A group is written back only when an unmapped property still refers to it.
    private mutating func keepGroupsSharedWithUnmapped() {
        let shared = Set(contact.unmappedProperties.compactMap { $0.group?.lowercased() })
        func prune<Value>(_ values: inout [LabeledValue<Value>]) {
            for index in values.indices where !shared.contains(values[index].extras.group?.lowercased() ?? "") {
                values[index].extras.group = nil
            }
        }
        prune(&contact.phoneNumbers)
        prune(&contact.emailAddresses)
        prune(&contact.postalAddresses)
        prune(&contact.urlAddresses)
        prune(&contact.dates)
        prune(&contact.relatedNames)
        prune(&contact.socialProfiles)
        prune(&contact.instantMessageAddresses)
    }

    // MARK: Helpers

    /// Parameters that describe the transfer encoding, not the value: the model holds decoded values.
    static let transferParameters: Set<String> = ["ENCODING", "CHARSET"]
    /// Parameters a date's model value replaces.
    static let dateParameters: Set<String> = ["VALUE", "X-APPLE-OMIT-YEAR", "ENCODING", "CHARSET"]

    /// BDAY/ANNIVERSARY/X-ABDATE: the date, year removed when X-APPLE-OMIT-YEAR equals it.
    private func parseDate(_ property: VCardProperty) -> ContactDate? {
        guard var date = ContactDate(vCardText: property.text) else { return nil }
        if let omitted = property.parameter("X-APPLE-OMIT-YEAR")?.first.flatMap({ Int($0) }), omitted == date.year {
            date.year = nil
        }
        return date
    }
}

extension ContactImage {
    static let photoParameters: Set<String> = ["ENCODING", "TYPE", "VALUE", "MEDIATYPE", "CHARSET"]

    /// Decodes an inline PHOTO: `ENCODING=b`/`BASE64` with TYPE=JPEG, or a `data:` URI. Nil for a link.
    init?(photo property: VCardProperty) {
        let value = property.rawValue
        if value.lowercased().hasPrefix("data:") {
            guard let comma = value.firstIndex(of: ","),
                  value[..<comma].lowercased().hasSuffix(";base64") else { return nil }
            let header = value[value.index(value.startIndex, offsetBy: 5)..<comma].dropLast(7)
            guard let bytes = ContactImage.decodeBase64(value[value.index(after: comma)...]) else { return nil }
            self.init(mediaType: header.isEmpty ? "application/octet-stream" : String(header).lowercased(), data: bytes)
            return
        }
        let encoding = property.parameter("ENCODING")?.first?.uppercased()
        guard encoding == "B" || encoding == "BASE64",
              let bytes = ContactImage.decodeBase64(Substring(value)) else { return nil }
        let type = (property.parameter("TYPE") ?? property.typeTokensAsWritten).first ?? ""
        self.init(mediaType: ContactImage.mediaType(forPhotoType: type), data: bytes)
    }

    /// `JPEG` -> `image/jpeg`; a full media type is kept.
    static func mediaType(forPhotoType type: String) -> String {
        let lower = type.lowercased()
        if lower.isEmpty { return "application/octet-stream" }
        return lower.contains("/") ? lower : "image/\(lower)"
    }

    /// The vCard 3.0 TYPE for a media type: `image/jpeg` -> `JPEG`.
    var photoType: String {
        mediaType.lowercased().hasPrefix("image/") ? String(mediaType.dropFirst(6)).uppercased() : mediaType
    }

    private static func decodeBase64(_ text: Substring) -> [UInt8]? {
        guard let data = Data(base64Encoded: String(text), options: .ignoreUnknownCharacters) else { return nil }
        return [UInt8](data)
    }
}

extension VCardProperty {
    /// TYPE tokens as written (case kept), comma lists and repeated TYPE split.
    var typeTokensAsWritten: [String] {
        parameters.filter { $0.name == "TYPE" }
            .flatMap { $0.values.flatMap { $0.split(separator: ",").map(String.init) } }
    }

    var withoutLine: VCardProperty {
        var copy = self
        copy.line = 0
        return copy
    }
}

extension Array where Element == VCardParameter {
    func without(_ names: Set<String>) -> [VCardParameter] {
        filter { !names.contains($0.name) }
    }
}

extension Array where Element == String {
    func padded(to count: Int) -> [String] {
        self.count >= count ? self : self + Array(repeating: "", count: count - self.count)
    }
}

extension Set {
    /// Inserts and tells whether the element was new.
    mutating func insertFirst(_ element: Element) -> Bool { insert(element).inserted }
}
