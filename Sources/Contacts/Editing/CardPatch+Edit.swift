import Foundation
import VCard

extension CardPatch {
    /// Applies what an editor sends back: every field of `edit` that differs from the card
    /// as read (`CardEdit(card: originalCard)`) changes its line; equal fields leave theirs
    /// alone. A labeled value whose `ref` is missing from `edit` is removed with its Apple
    /// companions; one without `ref` is added. FN follows the names when it was made from
    /// them and the editor left it as it was.
    public mutating func apply(_ edit: CardEdit) {
        let before = CardEdit(card: originalCard)
        applyNames(edit, before: before)
        applySingle("NICKNAME", before.nickname, edit.nickname) { escapeText($0, keepingCommas: true) }
        applyOrganization(edit, before: before)
        applySingle("TITLE", before.jobTitle, edit.jobTitle) { escapeText($0) }
        applyBirthday(edit.birthday, before: before.birthday)
        applySingle("NOTE", before.note, edit.note) { escapeText($0) }
        applyValues("TEL", before.phones, edit.phones) { value, old in
            // A vCard 4 `tel:` URI stays one; the editor shows the number without the scheme.
            let text = escapeURI(value.trimmingSpaces)
            let wasURI = old.map { $0.rawValue.lowercased().hasPrefix("tel:") } ?? false
            return wasURI && !text.lowercased().hasPrefix("tel:") ? "tel:" + text : text
        }
        applyValues("EMAIL", before.emails, edit.emails) { value, _ in escapeURI(value.trimmingSpaces) }
        applyValues("URL", before.urls, edit.urls) { value, _ in escapeURI(value.trimmingSpaces) }
        applyAddresses(before.addresses, edit.addresses)
        if normalizedCategories(edit.categories) != normalizedCategories(before.categories) {
            setCategories(edit.categories)
        }
    }

    // MARK: Names

    private mutating func applyNames(_ edit: CardEdit, before: CardEdit) {
        let oldParts = [before.familyName, before.givenName, before.middleName, before.namePrefix, before.nameSuffix]
        let newParts = [edit.familyName, edit.givenName, edit.middleName, edit.namePrefix, edit.nameSuffix].map(\.trimmingSpaces)
        let namesChanged = oldParts != newParts
        if namesChanged {
            let extra = ids(named: "N").first.flatMap(property).map { Array($0.components.dropFirst(5)) } ?? []
            let raw = (newParts + extra).map { escapeText($0) }.joined(separator: ";")
            if let id = ids(named: "N").first, let old = property(id) {
                replace(id, with: VCardProperty(group: old.group, name: "N", parameters: old.parameters, rawValue: raw))
            } else if newParts.contains(where: { !$0.isEmpty }) || version == .v30 {
                insert(VCardProperty(name: "N", rawValue: raw))
            }
        }
        // FN: what the person typed; else, when it used to be made from the names and they
        // changed, made anew; never empty.
        var formatted = edit.formattedName.trimmingSpaces
        let typedSame = formatted == before.formattedName.trimmingSpaces
        if formatted.isEmpty || (typedSame && (namesChanged || edit.organization != before.organization)
                                 && before.formattedName.trimmingSpaces == before.derivedFormattedName) {
            formatted = edit.derivedFormattedName
        }
        if formatted.isEmpty { formatted = before.formattedName.isEmpty ? edit.derivedFormattedName : before.formattedName }
        if formatted != before.formattedName {
            if let id = ids(named: "FN").first, let old = property(id) {
                replace(id, with: VCardProperty(group: old.group, name: "FN", parameters: old.parameters,
                                                rawValue: escapeText(formatted)))
            } else if !formatted.isEmpty {
                insert(VCardProperty(name: "FN", rawValue: escapeText(formatted)))
            }
        }
    }

    private mutating func applyOrganization(_ edit: CardEdit, before: CardEdit) {
        let old = [before.organization, before.department]
        let new = [edit.organization.trimmingSpaces, edit.department.trimmingSpaces]
        guard old != new else { return }
        let id = ids(named: "ORG").first
        let extra = id.flatMap(property).map { Array($0.components.dropFirst(2)) } ?? []
        var parts = new + extra
        while parts.count > 1, parts.last?.isEmpty == true { parts.removeLast() }
        if parts.allSatisfy(\.isEmpty) {
            if let id { remove(id) }
            return
        }
        let raw = parts.map { escapeText($0) }.joined(separator: ";")
        if let id, let existing = property(id) {
            replace(id, with: VCardProperty(group: existing.group, name: "ORG", parameters: existing.parameters, rawValue: raw))
        } else {
            insert(VCardProperty(name: "ORG", rawValue: raw))
        }
    }

    /// Replaces, adds or (for empty text) removes the first property `name`.
    private mutating func applySingle(_ name: String, _ old: String, _ new: String, raw: (String) -> String) {
        let text = name == "NOTE" ? new.trimmingCharacters(in: .whitespacesAndNewlines) : new.trimmingSpaces
        guard text != old else { return }
        let id = ids(named: name).first
        if text.isEmpty {
            if let id { remove(id) }
        } else if let id, let existing = property(id) {
            replace(id, with: VCardProperty(group: existing.group, name: name, parameters: existing.parameters, rawValue: raw(text)))
        } else {
            insert(VCardProperty(name: name, rawValue: raw(text)))
        }
    }

    // MARK: Birthday

    private mutating func applyBirthday(_ new: ContactDate?, before: ContactDate?) {
        func day(_ date: ContactDate?) -> [Int?]? { date.map { [$0.year, $0.month, $0.day] } }
        guard day(new) != day(before) else { return }
        let id = ids(named: "BDAY").first
        guard let new else {
            if let id { remove(id) }
            return
        }
        let date = ContactDate(year: new.year, month: new.month, day: new.day)
        var parameters = id.flatMap(property)?.parameters.filter { !["VALUE", "X-APPLE-OMIT-YEAR"].contains($0.name) } ?? []
        if version == .v30, date.year == nil {
            parameters.append(VCardParameter(name: "X-APPLE-OMIT-YEAR", values: [String(ContactDate.appleOmittedYear)]))
        }
        let property = VCardProperty(group: id.flatMap(property)?.group, name: "BDAY", parameters: parameters,
                                     rawValue: date.vCardText(basic: version == .v40))
        if let id { replace(id, with: property) } else { insert(property) }
    }

    // MARK: Labeled values

    private mutating func applyValues(_ name: String, _ before: [CardEdit.Value], _ after: [CardEdit.Value],
                                      raw: (String, VCardProperty?) -> String) {
        let kept = Dictionary(after.compactMap { value in value.ref.map { ($0, value) } }, uniquingKeysWith: { first, _ in first })
        for old in before {
            guard let ref = old.ref, let property = property(ref) else { continue }
            guard let new = kept[ref], !new.value.trimmingSpaces.isEmpty else {
                removeWithCompanions(ref)
                continue
            }
            if new.value.trimmingSpaces != old.value {
                var changed = property
                changed.rawValue = raw(new.value, property)
                replace(ref, with: changed)
            }
            if new.label != old.label { relabel(ref, to: new.label) }
        }
        for new in after where new.ref == nil && !new.value.trimmingSpaces.isEmpty {
            add(name, rawValue: raw(new.value, nil), label: new.label)
        }
    }

    private mutating func applyAddresses(_ before: [CardEdit.Address], _ after: [CardEdit.Address]) {
        func raw(_ address: PostalAddress) -> String {
            address.components.map { escapeText($0.trimmingSpaces) }.joined(separator: ";")
        }
        func isEmpty(_ address: PostalAddress) -> Bool { address.components.allSatisfy { $0.trimmingSpaces.isEmpty } }
        let kept = Dictionary(after.compactMap { value in value.ref.map { ($0, value) } }, uniquingKeysWith: { first, _ in first })
        for old in before {
            guard let ref = old.ref, let property = property(ref) else { continue }
            guard let new = kept[ref], !isEmpty(new.value) else {
                removeWithCompanions(ref)
                continue
            }
            if new.value.components.map(\.trimmingSpaces) != old.value.components {
                var changed = property
                changed.rawValue = raw(new.value)
                replace(ref, with: changed)
            }
            if new.label != old.label { relabel(ref, to: new.label) }
        }
        for new in after where new.ref == nil && !isEmpty(new.value) {
            add("ADR", rawValue: raw(new.value), label: new.label)
        }
    }

    /// Adds a labeled property: TYPE tokens for a built-in label, `itemN.X-ABLabel` for the
    /// others (Apple's way, which every client reads).
    @discardableResult
    public mutating func add(_ name: String, rawValue: String, label: Label?) -> Int {
        let encoding = label?.vCardEncoding(version: version) ?? LabelEncoding(typeTokens: [], abLabel: nil)
        let parameters = encoding.typeTokens.isEmpty ? [] : [VCardParameter(name: "TYPE", values: encoding.typeTokens)]
        let group = encoding.abLabel == nil ? nil : unusedGroup()
        let id = insert(VCardProperty(group: group, name: name, parameters: parameters, rawValue: rawValue))
        if let abLabel = encoding.abLabel {
            insert(VCardProperty(group: group, name: "X-ABLabel", rawValue: escapeText(abLabel)), after: id)
        }
        return id
    }

    /// Gives a labeled property another label: the TYPE tokens that carry a label are
    /// replaced (VOICE, INTERNET, PREF… stay), and its item group's `X-ABLabel` is set,
    /// added (with a new group when it has none) or removed.
    public mutating func relabel(_ id: Int, to label: Label?) {
        guard var property = property(id) else { return }
        let encoding = label?.vCardEncoding(version: version) ?? LabelEncoding(typeTokens: [], abLabel: nil)
        let kept = property.typeTokensAsWritten.filter { !Label.labelBearingTypeTokens.contains($0.uppercased()) }
        let tokens = encoding.typeTokens + kept
        let position = property.parameters.firstIndex { $0.name == "TYPE" }
        property.parameters.removeAll { $0.name == "TYPE" }
        if !tokens.isEmpty {
            property.parameters.insert(VCardParameter(name: "TYPE", values: tokens),
                                       at: min(position ?? property.parameters.count, property.parameters.count))
        }
        let labelID = companion("X-ABLABEL", of: id)
        if let abLabel = encoding.abLabel {
            if let labelID, var companion = self.property(labelID) {
                companion.rawValue = escapeText(abLabel)
                replace(labelID, with: companion)
            } else {
                if property.group == nil { property.group = unusedGroup() }
                insert(VCardProperty(group: property.group, name: "X-ABLabel", rawValue: escapeText(abLabel)), after: id)
            }
        } else if let labelID {
            remove(labelID)
        }
        replace(id, with: property)
    }

    // MARK: Categories

    private func normalizedCategories(_ values: [String]) -> [String] {
        values.map(\.trimmingSpaces).filter { !$0.isEmpty }
    }

    /// Sets CATEGORIES to these values (the first CATEGORIES line keeps its parameters,
    /// further ones go); none removes them all.
    public mutating func setCategories(_ values: [String]) {
        var unique: [String] = []
        for value in normalizedCategories(values) where !unique.contains(where: { $0.lowercased() == value.lowercased() }) {
            unique.append(value)
        }
        let existing = ids(named: "CATEGORIES")
        guard !unique.isEmpty else {
            for id in existing { remove(id) }
            return
        }
        let raw = unique.map { escapeText($0) }.joined(separator: ",")
        if let first = existing.first, let old = property(first) {
            replace(first, with: VCardProperty(group: old.group, name: "CATEGORIES", parameters: old.parameters, rawValue: raw))
            for id in existing.dropFirst() { remove(id) }
        } else {
            insert(VCardProperty(name: "CATEGORIES", rawValue: raw))
        }
    }

    /// The card's CATEGORIES values, every line, in order.
    public var categories: [String] {
        ids(named: "CATEGORIES").compactMap(property).flatMap(\.listValues).filter { !$0.isEmpty }
    }

    /// Puts the card in the category `name` or takes it out (case-insensitively); false
    /// when it already was (or was not) in it.
    @discardableResult
    public mutating func setCategory(_ name: String, member: Bool) -> Bool {
        let current = categories
        let has = current.contains { $0.lowercased() == name.lowercased() }
        guard has != member else { return false }
        if member {
            setCategories(current + [name])
        } else {
            setCategories(current.filter { $0.lowercased() != name.lowercased() })
        }
        return true
    }

    // MARK: Photo and revision

    /// Sets the inline photo (the first PHOTO line is replaced, others go).
    public mutating func setPhoto(_ image: ContactImage) {
        let base64 = Data(image.data).base64EncodedString()
        let property = version == .v40
            ? VCardProperty(name: "PHOTO", rawValue: "data:\(image.mediaType);base64,\(base64)")
            : VCardProperty(name: "PHOTO", parameters: [VCardParameter(name: "ENCODING", values: ["b"]),
                                                         VCardParameter(name: "TYPE", values: [image.photoType])],
                            rawValue: base64)
        let existing = ids(named: "PHOTO")
        if let first = existing.first {
            replace(first, with: property)
            for id in existing.dropFirst() { remove(id) }
        } else {
            insert(property)
        }
    }

    public mutating func removePhoto() {
        for id in ids(named: "PHOTO") { remove(id) }
    }

    /// Sets REV to `date` (UTC) when the card changed; call it last.
    public mutating func touchRevision(at date: Date) {
        guard hasChanges else { return }
        let text = Self.revisionText(date, basic: version == .v40)
        if let id = ids(named: "REV").first, let old = property(id) {
            replace(id, with: VCardProperty(group: old.group, name: "REV", parameters: old.parameters, rawValue: text))
        } else {
            insert(VCardProperty(name: "REV", rawValue: text), after: nil)
        }
    }

    static func revisionText(_ date: Date, basic: Bool) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        let year = String(format: "%04d", parts.year ?? 1970)
        if basic {
            return "\(year)\(two(parts.month))\(two(parts.day))T\(two(parts.hour))\(two(parts.minute))\(two(parts.second))Z"
        }
        return "\(year)-\(two(parts.month))-\(two(parts.day))T\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))Z"
    }
}
