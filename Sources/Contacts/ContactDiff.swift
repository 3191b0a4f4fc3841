/// What changed between two versions of a contact, in the model's terms, for a card's
/// history (issue 31): "mobile phone +49 170 1234 added", "photo removed",
/// "phone +49 30 1234 label work → Boat". Pure, so the CLI and the web UI say the same.
public enum ContactDiff {
    /// One phrase per change, in the model's field order; empty when nothing the model reads changed.
    public static func describe(from old: Contact, to new: Contact) -> [String] {
        var changes: [String] = []
        func scalar(_ what: String, _ before: String?, _ after: String?) {
            let before = before.flatMap { $0.isEmpty ? nil : $0 }, after = after.flatMap { $0.isEmpty ? nil : $0 }
            switch (before, after) {
            case (nil, nil): break
            case (nil, let value?): changes.append("\(what) \(value) added")
            case (let value?, nil): changes.append("\(what) \(value) removed")
            case let (before?, after?) where before != after: changes.append("\(what) \(before) → \(after)")
            default: break
            }
        }
        scalar("name", old.formattedName, new.formattedName)
        scalar("nickname", old.nickname, new.nickname)
        scalar("organisation", old.organizationName, new.organizationName)
        scalar("department", old.departmentName, new.departmentName)
        scalar("job title", old.jobTitle, new.jobTitle)
        switch (old.image, new.image) {
        case (nil, .some): changes.append("photo added")
        case (.some, nil): changes.append("photo removed")
        case let (before?, after?) where before != after: changes.append("photo changed")
        default: break
        }
        labeled("phone", old.phoneNumbers, new.phoneNumbers, into: &changes) { $0 }
        labeled("email", old.emailAddresses, new.emailAddresses, into: &changes) { $0 }
        labeled("URL", old.urlAddresses, new.urlAddresses, into: &changes) { $0 }
        labeled("address", old.postalAddresses, new.postalAddresses, into: &changes) { $0.street }
        labeled("related name", old.relatedNames, new.relatedNames, into: &changes) { $0 }
        if old.birthday != new.birthday { changes.append(new.birthday == nil ? "birthday removed" : old.birthday == nil ? "birthday added" : "birthday changed") }
        if old.note != new.note { changes.append(new.note == nil ? "note removed" : old.note == nil ? "note added" : "note changed") }
        for category in new.categories where !old.categories.contains(category) { changes.append("category \(category) added") }
        for category in old.categories where !new.categories.contains(category) { changes.append("category \(category) removed") }
        if changes.isEmpty, old != new { changes.append("other properties changed") }
        return changes
    }

    /// Entries matched by value: a value only before is removed, only after is added, in both
    /// with another label is relabelled.
    private static func labeled<Value: Sendable & Hashable>(_ what: String, _ old: [LabeledValue<Value>], _ new: [LabeledValue<Value>],
                                       into changes: inout [String], text: (Value) -> String) {
        func named(_ entry: LabeledValue<Value>) -> String {
            entry.label.map { "\($0.name) \(what)" } ?? what
        }
        for entry in new {
            if let before = old.first(where: { $0.value == entry.value }) {
                if before.label != entry.label {
                    changes.append("\(what) \(text(entry.value)) label \(before.label?.name ?? "none") → \(entry.label?.name ?? "none")")
                }
            } else {
                changes.append("\(named(entry)) \(text(entry.value)) added")
            }
        }
        for entry in old where !new.contains(where: { $0.value == entry.value }) {
            changes.append("\(named(entry)) \(text(entry.value)) removed")
        }
    }
}
