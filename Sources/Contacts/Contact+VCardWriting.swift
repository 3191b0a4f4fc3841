import Foundation
import VCard

extension Contact {
    /// Writes the contact as a vCard 3.0 or 4.0 (2.1 is import-only: asking for it gives 3.0).
    /// Labels follow the design.md table; unmapped properties and parameters are written
    /// back unchanged, so `Contact(vCard: contact.vCard(version:))` equals the contact.
    public func vCard(version requested: VCardVersion) -> VCard {
        var writer = ContactWriter(contact: self, version: requested == .v21 ? .v30 : requested)
        return writer.write()
    }
}

extension Contact {
    /// The vCard text (CRLF, folded) of `vCard(version:)`.
    public func vCardText(version: VCardVersion) -> String {
        VCardWriter.write(vCard(version: version))
    }
}

/// Builds the property list of one card.
private struct ContactWriter {
    let contact: Contact
    let version: VCardVersion
    var properties: [VCardProperty] = []
    var usedGroups: Set<String>
    var nextGroupNumber = 1

    init(contact: Contact, version: VCardVersion) {
        self.contact = contact
        self.version = version
        var groups = Set(contact.unmappedProperties.compactMap { $0.group?.lowercased() })
        func collect<Value>(_ values: [LabeledValue<Value>]) {
            groups.formUnion(values.compactMap { $0.extras.group?.lowercased() })
        }
        collect(contact.phoneNumbers)
        collect(contact.emailAddresses)
        collect(contact.postalAddresses)
        collect(contact.urlAddresses)
        collect(contact.dates)
        collect(contact.relatedNames)
        collect(contact.socialProfiles)
        collect(contact.instantMessageAddresses)
        usedGroups = groups
    }

    private var isV4: Bool { version == .v40 }

    mutating func write() -> VCard {
        append("VERSION", version.rawValue, escaped: false)
        writeKind()
        if let uid = contact.identifier { append("UID", uid, escaped: false, parameters: single("UID")) }
        writeNames()
        writeOrganization()
        if let birthday = contact.birthday { append("BDAY", date: birthday, extra: single("BDAY")) }
        writeLabeledValues()
        if let note = contact.note { append("NOTE", note, parameters: single("NOTE")) }
        if !contact.categories.isEmpty {
            append("CATEGORIES", raw: contact.categories.map(escapeText).joined(separator: ","),
                   parameters: single("CATEGORIES"))
        }
        if let image = contact.image { writePhoto(image) }
        let memberName = isV4 ? "MEMBER" : "X-ADDRESSBOOKSERVER-MEMBER"
        for member in contact.memberIdentifiers { append(memberName, MemberReference.uri(for: member), escaped: false) }
        properties += contact.unmappedProperties.filter { !supersededByKind($0) }
        return VCard(version: version, properties: properties)
    }

    // MARK: Single values

    private mutating func writeKind() {
        switch contact.kind {
        case .group: append(isV4 ? "KIND" : "X-ADDRESSBOOKSERVER-KIND", "group")
        case .organization: if isV4 { append("KIND", "org") } else { append("X-ABShowAs", "COMPANY") }
        case .person: break
        }
    }

    /// An unmapped KIND (`individual`, `location`) gives way when the model says group or organization.
    private func supersededByKind(_ property: VCardProperty) -> Bool {
        contact.kind != .person && (property.name == "KIND" || property.name == "X-ADDRESSBOOKSERVER-KIND")
    }

    private mutating func writeNames() {
        let nameParts = [contact.familyName, contact.givenName, contact.middleName, contact.namePrefix, contact.nameSuffix]
        if contact.singleValueParameters["N"] != nil || !isV4 || nameParts.contains(where: { !$0.isEmpty }) {
            append("N", raw: nameParts.map(escapeText).joined(separator: ";"), parameters: single("N"))
        }
        append("FN", contact.formattedName ?? contact.displayName, parameters: single("FN"))
        if !contact.nickname.isEmpty { append("NICKNAME", contact.nickname, parameters: single("NICKNAME")) }
        for (name, value) in [("X-PHONETIC-FIRST-NAME", contact.phoneticGivenName),
                              ("X-PHONETIC-MIDDLE-NAME", contact.phoneticMiddleName),
                              ("X-PHONETIC-LAST-NAME", contact.phoneticFamilyName)] where !value.isEmpty {
            append(name, value, parameters: single(name))
        }
    }

    private mutating func writeOrganization() {
        let units = [contact.organizationName, contact.departmentName] + contact.extraOrganizationUnits
        if contact.singleValueParameters["ORG"] != nil || units.contains(where: { !$0.isEmpty }) {
            let parts = contact.extraOrganizationUnits.isEmpty && contact.departmentName.isEmpty
                ? [contact.organizationName] : units
            append("ORG", raw: parts.map(escapeText).joined(separator: ";"), parameters: single("ORG"))
        }
        if !contact.jobTitle.isEmpty { append("TITLE", contact.jobTitle, parameters: single("TITLE")) }
    }

    private mutating func writePhoto(_ image: ContactImage) {
        let base64 = Data(image.data).base64EncodedString()
        if isV4 {
            append("PHOTO", raw: "data:\(image.mediaType);base64,\(base64)", parameters: single("PHOTO"))
        } else {
            append("PHOTO", raw: base64, parameters: [
                VCardParameter(name: "ENCODING", values: ["b"]),
                VCardParameter(name: "TYPE", values: [image.photoType]),
            ] + single("PHOTO"))
        }
    }

    private func single(_ name: String) -> [VCardParameter] { contact.singleValueParameters[name] ?? [] }

    // MARK: Labeled values

    private mutating func writeLabeledValues() {
        for phone in contact.phoneNumbers { writeLabeled(phone, "TEL", raw: escapeURI(phone.value)) }
        for email in contact.emailAddresses { writeLabeled(email, "EMAIL", raw: escapeURI(email.value)) }
        for address in contact.postalAddresses {
            writeLabeled(address, "ADR", raw: address.value.components.map(escapeText).joined(separator: ";"),
                         countryCode: address.value.isoCountryCode)
        }
        for url in contact.urlAddresses { writeLabeled(url, "URL", raw: escapeURI(url.value)) }
        var anniversaryWritten = false
        for date in contact.dates {
            let asAnniversary = isV4 && date.label == .anniversary && !anniversaryWritten
            anniversaryWritten = anniversaryWritten || asAnniversary
            writeLabeled(date, asAnniversary ? "ANNIVERSARY" : "X-ABDATE", raw: dateText(date.value),
                         extraParameters: dateParameters(date.value), labelImplied: asAnniversary)
        }
        for related in contact.relatedNames { writeRelated(related) }
        for profile in contact.socialProfiles {
            var parameters: [VCardParameter] = []
            if let user = profile.value.username { parameters.append(VCardParameter(name: "x-user", values: [user])) }
            writeLabeled(profile, "X-SOCIALPROFILE", raw: escapeURI(profile.value.urlString),
                         leadingTokens: profile.value.service.map { [$0] } ?? [], extraParameters: parameters,
                         labelOnlyAsABLabel: true)
        }
        for message in contact.instantMessageAddresses {
            let address = message.value
            let parameters = address.service == address.scheme ? []
                : [VCardParameter(name: "X-SERVICE-TYPE", values: [address.service])]
            writeLabeled(message, "IMPP", raw: escapeURI(address.uri), extraParameters: parameters)
        }
    }

    private mutating func writeRelated(_ related: LabeledValue<String>) {
        guard isV4 else {
            writeLabeled(related, "X-ABRELATEDNAMES", raw: escapeText(related.value))
            return
        }
        let token = related.label?.relatedTypeToken
        writeLabeled(related, "RELATED", raw: escapeText(related.value), leadingTokens: token.map { [$0] } ?? [],
                     labelImplied: related.label == nil || token != nil)
    }

    /// Writes one labeled value: the property (TYPE tokens, PREF, PID, kept parameters) and its
    /// `X-ABLabel`/`X-ABADR` companions in one item group. `labelImplied` says the property
    /// itself already carries the label (ANNIVERSARY, RELATED;TYPE=spouse); `labelOnlyAsABLabel`
    /// is for properties whose TYPE means something else (X-SOCIALPROFILE's service).
    private mutating func writeLabeled<Value>(
        _ entry: LabeledValue<Value>, _ name: String, raw: String, countryCode: String? = nil,
        leadingTokens: [String] = [], extraParameters: [VCardParameter] = [], labelImplied: Bool = false,
        labelOnlyAsABLabel: Bool = false
    ) {
        var encoding = LabelEncoding(typeTokens: [], abLabel: nil)
        if let label = entry.label, !labelImplied {
            encoding = labelOnlyAsABLabel ? LabelEncoding(typeTokens: [], abLabel: label.abLabelText)
                : label.vCardEncoding(version: version)
        }
        let written = Set(encoding.typeTokens.map { $0.uppercased() })
        var kept = entry.extras.typeTokens.filter { !written.contains($0.uppercased()) }
        if encoding.abLabel == nil, !labelImplied, Label(typeTokens: encoding.typeTokens + kept) != entry.label {
            // A kept token (WORK beside CELL) must not change the label it was read with.
            kept.removeAll { Label.labelBearingTypeTokens.contains($0.uppercased()) }
        }
        var tokens = leadingTokens + encoding.typeTokens + kept
        var parameters: [VCardParameter] = []
        if entry.isPreferred && !isV4 { tokens.append("PREF") }
        if !tokens.isEmpty { parameters.append(VCardParameter(name: "TYPE", values: tokens)) }
        if entry.isPreferred && isV4 { parameters.append(VCardParameter(name: "PREF", values: ["1"])) }
        if let pid = entry.pid { parameters.append(VCardParameter(name: "PID", values: [pid])) }
        parameters += extraParameters
        parameters += entry.extras.parameters.filter { !(entry.isPreferred && $0.name == "PREF") }

        let needsGroup = encoding.abLabel != nil || countryCode != nil
        let group = entry.extras.group ?? (needsGroup ? allocateGroup() : nil)
        properties.append(VCardProperty(group: group, name: name, parameters: parameters, rawValue: raw))
        if let abLabel = encoding.abLabel {
            properties.append(VCardProperty(group: group, name: "X-ABLabel", rawValue: escapeText(abLabel)))
        }
        if let countryCode {
            properties.append(VCardProperty(group: group, name: "X-ABADR", rawValue: escapeText(countryCode)))
        }
    }

    private mutating func allocateGroup() -> String {
        while usedGroups.contains("item\(nextGroupNumber)") { nextGroupNumber += 1 }
        let group = "item\(nextGroupNumber)"
        usedGroups.insert(group)
        return group
    }

    // MARK: Dates

    private func dateText(_ date: ContactDate) -> String { date.vCardText(basic: isV4) }

    /// 3.0 has no year-less date: Apple's X-APPLE-OMIT-YEAR marks the placeholder year.
    private func dateParameters(_ date: ContactDate) -> [VCardParameter] {
        guard !isV4, date.year == nil else { return [] }
        return [VCardParameter(name: "X-APPLE-OMIT-YEAR", values: [String(ContactDate.appleOmittedYear)])]
    }

    private mutating func append(_ name: String, date: ContactDate, extra: [VCardParameter]) {
        append(name, raw: dateText(date), parameters: dateParameters(date) + extra)
    }

    // MARK: Plain properties

    private mutating func append(_ name: String, _ value: String, escaped: Bool = true, parameters: [VCardParameter] = []) {
        append(name, raw: escaped ? escapeText(value) : escapeURI(value), parameters: parameters)
    }

    private mutating func append(_ name: String, raw: String, parameters: [VCardParameter] = []) {
        properties.append(VCardProperty(name: name, parameters: parameters, rawValue: raw))
    }
}

/// vCard TEXT escaping: backslash, newline, comma, semicolon.
func escapeText(_ text: String) -> String {
    var escaped = ""
    escaped.reserveCapacity(text.utf8.count)
    var previousWasCR = false
    for character in text.unicodeScalars {
        switch character {
        case "\\": escaped += "\\\\"
        case ",": escaped += "\\,"
        case ";": escaped += "\\;"
        case "\n": if !previousWasCR { escaped += "\\n" }
        case "\r": escaped += "\\n"
        default: escaped.unicodeScalars.append(character)
        }
        previousWasCR = character == "\r"
    }
    return escaped
}

/// URI-like values (TEL, EMAIL, URL, IMPP): only what would break the line is escaped.
func escapeURI(_ text: String) -> String {
    guard text.contains(where: { $0 == "\\" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return text }
    return text.replacingOccurrences(of: "\\", with: "\\\\")
        .replacingOccurrences(of: "\r\n", with: "\\n")
        .replacingOccurrences(of: "\n", with: "\\n")
        .replacingOccurrences(of: "\r", with: "\\n")
}
