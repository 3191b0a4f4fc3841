import Contacts

/// A contacts CSV read and mapped, before anything is stored: what the preview shows and what
/// an import writes. Reading never stops at a bad row: every row that cannot be read is in
/// `failures` with its line, so a caller can refuse the whole file and name every fault.
public struct CSVContactFile: Sendable {
    /// One row that became a contact.
    public struct Row: Sendable {
        /// The 1-based line the row begins on (a quoted field may hold line breaks).
        public var line: Int
        /// The row's fields, in header order.
        public var fields: [String]
        public var contact: Contact
    }

    /// One row that could not be read, and why.
    public struct RowFailure: Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    public var format: CSVContactFormat
    public var language: CSVHeaderLanguage
    public var encoding: CSVTextEncoding
    /// The header's columns, in file order, with what each became.
    public var columns: [CSVColumnMapping]
    public var rows: [Row]
    public var failures: [RowFailure]

    /// Decodes (`CSVText.decode`), reads the records, tells Google from Outlook by the header
    /// and maps every row. Throws for a file that is no contacts CSV: empty, not text, a header
    /// naming no Google or Outlook column, or no column for a name.
    public init(bytes: [UInt8]) throws(CSVRefusal) {
        let (text, encoding) = try CSVText.decode(bytes)
        let records = CSVRecords(text, delimiter: CSVRecords.delimiter(of: text))
        guard let header = records.records.first else {
            throw CSVRefusal("the file has no header line")
        }
        let headers = header.fields.map { $0.trimmingCharacters() }
        let googleHits = headers.filter { GoogleColumns.canonical($0) != nil || GoogleColumns.ignored.contains($0) }.count
        let outlookHits = headers.filter { OutlookColumns.canonical($0) != nil }.count
        guard googleHits > 0 || outlookHits > 0 else {
            throw CSVRefusal("not a Google or Outlook contacts CSV: its first line names none of their columns "
                             + "(such as \"First Name\", \"Last Name\", \"Phone 1 - Value\", \"E-mail Address\")")
        }
        let format: CSVContactFormat = googleHits > outlookHits ? .google : .outlook
        let canonical = headers.map { format == .google ? GoogleColumns.canonical($0) : OutlookColumns.canonical($0) }
        let nameColumns: Set<String> = format == .google
            ? ["Name", "First Name", "Middle Name", "Last Name", "Nickname", "Organization Name"]
            : ["First Name", "Middle Name", "Last Name", "Company"]
        guard canonical.contains(where: { $0.map(nameColumns.contains) ?? false }) else {
            throw CSVRefusal("the header has no name column (\(format == .google ? "Google" : "Outlook") files name "
                             + "contacts in \(nameColumns.sorted().map { "\"\($0)\"" }.joined(separator: ", ")))")
        }
        self.format = format
        let german = headers.contains { format == .google ? GoogleColumns.isGerman($0) : (OutlookColumns.german[$0] != nil && !OutlookColumns.englishSet.contains($0)) }
        language = german ? .german : .english
        self.encoding = encoding
        columns = zip(headers, canonical).map { CSVColumnMapping(header: $0, meaning: $1.flatMap { ColumnMeaning.describe($0, format: format) }) }
        rows = []
        failures = []
        for record in records.records.dropFirst() {
            guard record.fields.count == headers.count else {
                failures.append(RowFailure(line: record.line, reason: "\(record.fields.count) fields where the header has \(headers.count) "
                                           + "(a comma or quote outside quotes?)"))
                continue
            }
            var values: [String: String] = [:]
            for (key, value) in zip(canonical, record.fields) {
                guard let key, values[key, default: ""].isEmpty else { continue }
                values[key] = key == "Notes" ? value : value.trimmingCharacters()
            }
            do throws(CSVRowError) {
                let contact = format == .google ? try GoogleRow.contact(values) : try OutlookRow.contact(values)
                guard !contact.displayName.isEmpty || !contact.emailAddresses.isEmpty || !contact.phoneNumbers.isEmpty
                        || contact.formattedName?.isEmpty == false else {
                    throw CSVRowError("no name, organisation, e-mail address or phone number")
                }
                rows.append(Row(line: record.line, fields: record.fields, contact: contact))
            } catch {
                failures.append(RowFailure(line: record.line, reason: error.reason))
            }
        }
        if let line = records.unterminatedQuoteLine {
            failures.append(RowFailure(line: line, reason: "a quoted field is not closed before the end of the file"))
        }
    }
}

/// Why one row could not become a contact.
struct CSVRowError: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Builds contacts from mapped values: labeled values numbered as the vCard reader numbers them.
struct ContactBuilder {
    var phones: [LabeledValue<String>] = []
    var emails: [LabeledValue<String>] = []
    var addresses: [LabeledValue<PostalAddress>] = []
    var urls: [LabeledValue<String>] = []
    var dates: [LabeledValue<ContactDate>] = []
    var related: [LabeledValue<String>] = []

    mutating func phone(_ value: String, _ label: Label?, preferred: Bool = false) {
        guard !value.isEmpty else { return }
        phones.append(LabeledValue(identifier: "TEL#\(phones.count + 1)", label: label, value: value, isPreferred: preferred))
    }
    mutating func email(_ value: String, _ label: Label?, preferred: Bool = false) {
        guard !value.isEmpty else { return }
        emails.append(LabeledValue(identifier: "EMAIL#\(emails.count + 1)", label: label, value: value, isPreferred: preferred))
    }
    mutating func address(_ value: PostalAddress, _ label: Label?, preferred: Bool = false) {
        guard value.components.contains(where: { !$0.isEmpty }) else { return }
        addresses.append(LabeledValue(identifier: "ADR#\(addresses.count + 1)", label: label, value: value, isPreferred: preferred))
    }
    mutating func url(_ value: String, _ label: Label?, preferred: Bool = false) {
        guard !value.isEmpty else { return }
        urls.append(LabeledValue(identifier: "URL#\(urls.count + 1)", label: label, value: value, isPreferred: preferred))
    }
    mutating func date(_ value: ContactDate, _ label: Label?) {
        dates.append(LabeledValue(identifier: "X-ABDATE#\(dates.count + 1)", label: label, value: value))
    }
    mutating func relatedName(_ value: String, _ label: Label?) {
        guard !value.isEmpty else { return }
        related.append(LabeledValue(identifier: "X-ABRELATEDNAMES#\(related.count + 1)", label: label, value: value))
    }
}

/// Dates as the exports write them: ISO (`1986-05-21`, `--05-21`: Google), `M/D/YYYY`
/// (English Outlook), `D.M.YYYY` (German Outlook); Outlook's "no date" (`0/0/00`, `0.0.00`) is none.
enum CSVDate {
    static func read(_ text: String, column: String) throws(CSVRowError) -> ContactDate? {
        let text = text.trimmingCharacters()
        guard !text.isEmpty else { return nil }
        if let date = ContactDate(vCardText: text) { return date.time == nil ? date : ContactDate(year: date.year, month: date.month, day: date.day) }
        let separator: Character? = text.contains("/") ? "/" : text.contains(".") ? "." : nil
        if let separator {
            let parts = text.split(separator: separator, omittingEmptySubsequences: false).map { Int($0.trimmingCharacters()) }
            if parts.allSatisfy({ $0 == 0 }) { return nil }
            if parts.count == 2 || parts.count == 3, parts.allSatisfy({ $0 != nil }) {
                let numbers = parts.map { $0! }
                let (month, day) = separator == "/" ? (numbers[0], numbers[1]) : (numbers[1], numbers[0])
                var year: Int? = numbers.count == 3 ? numbers[2] : nil
                if let short = year, short < 100 { year = short + (short < 50 ? 2000 : 1900) }
                if (1...12).contains(month), (1...31).contains(day) { return ContactDate(year: year, month: month, day: day) }
            }
        }
        throw CSVRowError("\(column) \"\(text)\" is not a date (YYYY-MM-DD, --MM-DD, M/D/YYYY or D.M.YYYY)")
    }

    static func isoText(_ date: ContactDate) -> String {
        (date.year.map { pad($0, 4) } ?? "-") + "-\(pad(date.month, 2))-\(pad(date.day, 2))"
    }

    static func outlookText(_ date: ContactDate) -> String {
        "\(date.month)/\(date.day)" + (date.year.map { "/\($0)" } ?? "")
    }

    private static func pad(_ number: Int, _ width: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// What a column becomes, in the preview's words.
enum ColumnMeaning {
    static let names: [String: String] = [
        "Name": "full name", "First Name": "given name", "Middle Name": "middle name", "Last Name": "family name",
        "Name Prefix": "name prefix", "Title": "name prefix", "Name Suffix": "name suffix", "Suffix": "name suffix",
        "Nickname": "nickname", "Phonetic First Name": "phonetic given name", "Phonetic Middle Name": "phonetic middle name",
        "Phonetic Last Name": "phonetic family name", "Organization Name": "organisation", "Company": "organisation",
        "Organization Title": "job title", "Job Title": "job title", "Organization Department": "department",
        "Department": "department", "Birthday": "birthday", "Notes": "note", "Labels": "categories",
        "Categories": "categories", "Anniversary": "date (anniversary)", "Web Page": "web page (home page)",
    ]

    static func describe(_ canonical: String, format: CSVContactFormat) -> String? {
        if let name = names[canonical] { return name }
        if format == .google {
            guard let numbered = GoogleColumns.numbered(canonical) else { return nil }
            let kind = ["E-mail": "e-mail", "Phone": "phone", "Address": "address", "Website": "web page",
                        "Relation": "related name", "Event": "date"][numbered.kind]!
            switch numbered.part {
            case "Label": return "\(kind) \(numbered.number) (label)"
            case "Value": return "\(kind) \(numbered.number)"
            case "Formatted": return "address \(numbered.number) (when it has no street, city, … columns filled)"
            default: return "address \(numbered.number) \(numbered.part.lowercased())"
            }
        }
        if let phone = OutlookColumns.phones.first(where: { $0.column == canonical }) {
            return "phone (\(GoogleLabels.name(phone.label).lowercased()))"
        }
        if let index = OutlookColumns.emails.firstIndex(of: canonical) { return "e-mail \(index + 1)" }
        if let related = OutlookColumns.related.first(where: { $0.column == canonical }) {
            return "related name (\(related.label.name))"
        }
        for address in OutlookColumns.addresses where canonical.hasPrefix(address.prefix + " ") {
            let part = canonical.dropFirst(address.prefix.count + 1)
            let names = ["Street": "street", "Street 2": "street", "Street 3": "street", "City": "city", "State": "region",
                         "Postal Code": "postal code", "Country/Region": "country", "Address PO Box": "PO box"]
            if let name = names[String(part)] { return "\(address.label.name) address \(name)" }
        }
        return nil
    }
}
