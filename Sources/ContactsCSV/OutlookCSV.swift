import Foundation
import Contacts

/// An Outlook row (values keyed by the English header) to a contact. Outlook has one column
/// per kind of number and address, so the column gives the label; its e-mail columns carry no
/// label; categories are joined by ";".
enum OutlookRow {
    static func contact(_ values: [String: String]) throws(CSVRowError) -> Contact {
        func value(_ key: String) -> String { values[key] ?? "" }
        var builder = ContactBuilder()
        for (column, label) in OutlookColumns.phones { builder.phone(value(column), label) }
        for column in OutlookColumns.emails { builder.email(value(column), nil) }
        for (prefix, label) in OutlookColumns.addresses {
            let street = ["", " 2", " 3"].map { value("\(prefix) Street\($0)") }.filter { !$0.isEmpty }.joined(separator: "\n")
            builder.address(PostalAddress(poBox: value("\(prefix) Address PO Box"), street: street,
                                          locality: value("\(prefix) City"), region: value("\(prefix) State"),
                                          postalCode: value("\(prefix) Postal Code"), country: value("\(prefix) Country/Region")),
                            label)
        }
        builder.url(value("Web Page"), .homePage)
        if let anniversary = try CSVDate.read(value("Anniversary"), column: "Anniversary") { builder.date(anniversary, .anniversary) }
        for (column, label) in OutlookColumns.related { builder.relatedName(value(column), label) }
        let categories = value("Categories").split(separator: ";").map { $0.trimmingCharacters() }.filter { !$0.isEmpty }
        return Contact(
            identifier: nil, namePrefix: value("Title"), givenName: value("First Name"), middleName: value("Middle Name"),
            familyName: value("Last Name"), nameSuffix: value("Suffix"),
            organizationName: value("Company"), departmentName: value("Department"), jobTitle: value("Job Title"),
            birthday: try CSVDate.read(value("Birthday"), column: "Birthday"),
            note: value("Notes").isEmpty ? nil : value("Notes"), categories: categories,
            phoneNumbers: builder.phones, emailAddresses: builder.emails, postalAddresses: builder.addresses,
            urlAddresses: builder.urls, dates: builder.dates, relatedNames: builder.related)
    }
}

/// Contacts to Outlook's CSV with the English headers of its export, in its column order.
/// Outlook's columns are fixed: each phone goes to the first free column of its label (a label
/// with no column of its own, or a full one, to "Other Phone" while it is free), the first three
/// e-mail addresses, one address per label (work, home, other; others to "Other" while free),
/// the first web page, birthday, anniversary; values beyond these have no column and are left out.
enum OutlookWriter {
    static func text(_ contacts: [Contact]) -> String {
        let header = OutlookColumns.english
        var lines = [CSVRecords.line(header)]
        let groups = contacts.compactMap(Group.init)
        for contact in contacts where contact.kind != .group {
            var cells: [String: String] = [
                "Title": contact.namePrefix, "First Name": contact.givenName, "Middle Name": contact.middleName,
                "Last Name": contact.familyName, "Suffix": contact.nameSuffix, "Company": contact.organizationName,
                "Department": contact.departmentName, "Job Title": contact.jobTitle, "Notes": contact.note ?? "",
                "Birthday": contact.birthday.map(CSVDate.outlookText) ?? "",
            ]
            for phone in contact.phoneNumbers {
                let label = phone.label == .iPhone ? Label.mobile : phone.label
                let column = OutlookColumns.phones.first { $0.label == label && cells[$0.column] == nil }?.column
                    ?? (cells["Other Phone"] == nil ? "Other Phone" : nil)
                if let column { cells[column] = phone.value }
            }
            for (email, column) in zip(contact.emailAddresses, OutlookColumns.emails) {
                cells[column] = email.value
                cells[column.replacingOccurrences(of: "Address", with: "Type")] = "SMTP"
            }
            for address in contact.postalAddresses {
                let prefix = OutlookColumns.addresses.first { $0.label == address.label && cells["\($0.prefix) City"] == nil }?.prefix
                    ?? (cells["Other City"] == nil ? "Other" : nil)
                guard let prefix else { continue }
                let streets = address.value.street.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
                for (index, street) in streets.enumerated() { cells["\(prefix) Street" + ["", " 2", " 3"][index]] = street }
                cells["\(prefix) City"] = address.value.locality
                cells["\(prefix) State"] = address.value.region
                cells["\(prefix) Postal Code"] = address.value.postalCode
                cells["\(prefix) Country/Region"] = address.value.country
                cells["\(prefix) Address PO Box"] = address.value.poBox
            }
            cells["Web Page"] = contact.urlAddresses.first?.value
            cells["Anniversary"] = contact.dates.first { $0.label == .anniversary }.map { CSVDate.outlookText($0.value) }
            for (column, label) in OutlookColumns.related {
                cells[column] = contact.relatedNames.first { $0.label == label }?.value
            }
            let memberOf = contact.identifier.map { uid in groups.filter { $0.contains(uid: uid) }.map(\.name) } ?? []
            cells["Categories"] = (contact.categories + memberOf).joined(separator: ";")
            lines.append(CSVRecords.line(header.map { cells[$0] ?? "" }))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

/// Writes contacts as one of the two CSV dialects (group cards become the Labels or
/// Categories of their members, not rows).
public enum CSVContactWriter {
    /// The file's bytes: Google's as UTF-8 as Google writes it; Outlook's UTF-8 with a BOM,
    /// which Outlook's import and Excel need to read it as UTF-8 rather than the ANSI code page.
    public static func bytes(_ contacts: [Contact], as format: CSVContactFormat) -> [UInt8] {
        switch format {
        case .google: Array(GoogleWriter.text(contacts).utf8)
        case .outlook: [0xEF, 0xBB, 0xBF] + Array(OutlookWriter.text(contacts).utf8)
        }
    }
}
