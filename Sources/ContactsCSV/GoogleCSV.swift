import Foundation
import Contacts

/// A Google row (values keyed by today's English header) to a contact. Google puts several
/// values of one label in one cell, joined by " ::: "; a type starting with "* " marks the
/// primary value.
enum GoogleRow {
    static func contact(_ values: [String: String]) throws(CSVRowError) -> Contact {
        func value(_ key: String) -> String { values[key] ?? "" }
        var builder = ContactBuilder()
        let numbers = Set(values.keys.compactMap { GoogleColumns.numbered($0)?.number }).sorted()
        for kind in ["E-mail", "Phone", "Address", "Website", "Relation", "Event"] {
            for number in numbers {
                let prefix = "\(kind) \(number) - "
                let (label, preferred) = GoogleLabels.label(value(prefix + "Label"))
                if kind == "Address" {
                    let parts = ["PO Box", "Extended Address", "Street", "City", "Region", "Postal Code", "Country"]
                    let cells = parts.map { Self.split(value(prefix + $0)) }
                    var count = cells.map(\.count).max() ?? 0
                    let formatted = Self.split(value(prefix + "Formatted"))
                    if count == 0 { count = formatted.count }
                    for index in 0..<count {
                        let c = cells.map { index < $0.count ? $0[index] : "" }
                        var address = PostalAddress(poBox: c[0], extended: c[1], street: c[2], locality: c[3], region: c[4],
                                                    postalCode: c[5], country: c[6])
                        if !c.contains(where: { !$0.isEmpty }), index < formatted.count { address.street = formatted[index] }
                        builder.address(address, label, preferred: preferred && index == 0)
                    }
                    continue
                }
                for (index, item) in Self.split(value(prefix + "Value")).enumerated() {
                    let first = preferred && index == 0
                    switch kind {
                    case "E-mail": builder.email(item, label, preferred: first)
                    case "Phone": builder.phone(item, label, preferred: first)
                    case "Website": builder.url(item, label, preferred: first)
                    case "Relation": builder.relatedName(item, label)
                    default:
                        if let date = try CSVDate.read(item, column: "Event \(number)") { builder.date(date, label) }
                    }
                }
            }
        }
        let categories = Self.split(value("Labels")).compactMap { label -> String? in
            let name = label.hasPrefix("* ") ? String(label.dropFirst(2)) : label
            return name == "myContacts" || name.isEmpty ? nil : name
        }
        let fullName = value("Name")
        return Contact(
            identifier: nil, formattedName: fullName.isEmpty ? nil : fullName,
            namePrefix: value("Name Prefix"), givenName: value("First Name"), middleName: value("Middle Name"),
            familyName: value("Last Name"), nameSuffix: value("Name Suffix"), nickname: value("Nickname"),
            phoneticGivenName: value("Phonetic First Name"), phoneticMiddleName: value("Phonetic Middle Name"),
            phoneticFamilyName: value("Phonetic Last Name"),
            organizationName: value("Organization Name"), departmentName: value("Organization Department"),
            jobTitle: value("Organization Title"),
            birthday: try CSVDate.read(value("Birthday"), column: "Birthday"),
            note: value("Notes").isEmpty ? nil : value("Notes"), categories: categories,
            phoneNumbers: builder.phones, emailAddresses: builder.emails, postalAddresses: builder.addresses,
            urlAddresses: builder.urls, dates: builder.dates, relatedNames: builder.related)
    }

    /// A " ::: "-joined cell's values, trimmed, empty ones dropped.
    static func split(_ cell: String) -> [String] {
        cell.components(separatedBy: ":::").map { $0.trimmingCharacters() }.filter { !$0.isEmpty }
    }
}

/// Contacts to Google's CSV as its export writes it today (English headers, "Labels",
/// "Phone 1 - Label"), which Google's import reads; one numbered column group per value,
/// as many as the fullest contact needs.
enum GoogleWriter {
    static func text(_ contacts: [Contact]) -> String {
        let people = contacts.filter { $0.kind != .group }
        let groups = contacts.compactMap(Group.init)
        func most<T>(_ values: (Contact) -> [T]) -> Int { people.map { values($0).count }.max() ?? 0 }
        let counts = [("E-mail", most(\.emailAddresses)), ("Phone", most(\.phoneNumbers)), ("Address", most(\.postalAddresses)),
                      ("Website", most(\.urlAddresses)), ("Relation", most(\.relatedNames)), ("Event", most(\.dates))]
        let addressParts = ["Formatted", "Street", "City", "PO Box", "Region", "Postal Code", "Country", "Extended Address"]
        var header = ["First Name", "Middle Name", "Last Name", "Phonetic First Name", "Phonetic Middle Name", "Phonetic Last Name",
                      "Name Prefix", "Name Suffix", "Nickname", "File As", "Organization Name", "Organization Title",
                      "Organization Department", "Birthday", "Notes", "Photo", "Labels"]
        for (kind, count) in counts where count > 0 {
            for number in 1...count {
                header.append("\(kind) \(number) - Label")
                header += kind == "Address" ? addressParts.map { "Address \(number) - \($0)" } : ["\(kind) \(number) - Value"]
            }
        }
        var lines = [CSVRecords.line(header)]
        for contact in people {
            let memberOf = contact.identifier.map { uid in groups.filter { $0.contains(uid: uid) }.map(\.name) } ?? []
            var row = [contact.givenName, contact.middleName, contact.familyName, contact.phoneticGivenName,
                       contact.phoneticMiddleName, contact.phoneticFamilyName, contact.namePrefix, contact.nameSuffix,
                       contact.nickname, "", contact.organizationName, contact.jobTitle, contact.departmentName,
                       contact.birthday.map(CSVDate.isoText) ?? "", contact.note ?? "", "",
                       (["* myContacts"] + contact.categories + memberOf).joined(separator: " ::: ")]
            func labeled<V>(_ values: [LabeledValue<V>], _ count: Int, width: Int = 1, _ cells: (V) -> [String]) {
                for index in 0..<count {
                    if index < values.count {
                        row.append(GoogleLabels.name(values[index].label))
                        row += cells(values[index].value)
                    } else {
                        row += Array(repeating: "", count: 1 + width)
                    }
                }
            }
            for (kind, count) in counts where count > 0 {
                switch kind {
                case "E-mail": labeled(contact.emailAddresses, count) { [$0] }
                case "Phone": labeled(contact.phoneNumbers, count) { [$0] }
                case "Address": labeled(contact.postalAddresses, count, width: addressParts.count) { address in
                    let formatted = [address.poBox, address.extended, address.street,
                                     [address.postalCode, address.locality, address.region].filter { !$0.isEmpty }.joined(separator: " "),
                                     address.country].filter { !$0.isEmpty }.joined(separator: "\n")
                    return [formatted, address.street, address.locality, address.poBox, address.region, address.postalCode,
                            address.country, address.extended]
                }
                case "Website": labeled(contact.urlAddresses, count) { [$0] }
                case "Relation": labeled(contact.relatedNames, count) { [$0] }
                default: labeled(contact.dates, count) { [CSVDate.isoText($0)] }
                }
            }
            lines.append(CSVRecords.line(row))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
