import Contacts

/// What must survive a conversion: every labeled value's label, value and preference, per field.
struct LabeledFacts: Equatable, CustomStringConvertible {
    var fields: [String: [String]]

    init(_ contact: Contact) {
        func facts<Value>(_ values: [LabeledValue<Value>], _ text: (Value) -> String) -> [String] {
            values.map { "\($0.label?.name ?? "<none>") | \(text($0.value)) | \($0.isPreferred ? "pref" : "-")" }
        }
        fields = [
            "phones": facts(contact.phoneNumbers) { $0 },
            "emails": facts(contact.emailAddresses) { $0 },
            "addresses": facts(contact.postalAddresses) { "\($0.components) \($0.isoCountryCode ?? "")" },
            "urls": facts(contact.urlAddresses) { $0 },
            "dates": facts(contact.dates) { $0.description },
            "related": facts(contact.relatedNames) { $0 },
            "social": facts(contact.socialProfiles) { "\($0.service ?? "") \($0.username ?? "") \($0.urlString)" },
            "impp": facts(contact.instantMessageAddresses) { "\($0.service) \($0.uri)" },
            "birthday": [contact.birthday?.description ?? "<none>"],
            "kind": [contact.kind.rawValue],
            "members": contact.memberIdentifiers,
        ]
    }

    var description: String {
        fields.keys.sorted().map { "\($0): \(fields[$0] ?? [])" }.joined(separator: "\n")
    }

    /// Readable lines for what differs from `other`.
    func differences(from other: LabeledFacts) -> String {
        fields.keys.sorted().compactMap { key in
            fields[key] == other.fields[key] ? nil : "\(key):\n  before \(fields[key] ?? [])\n  after  \(other.fields[key] ?? [])"
        }.joined(separator: "\n")
    }
}
