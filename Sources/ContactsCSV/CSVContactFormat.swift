import Contacts

/// The two contacts CSV dialects people have: Google Contacts' export (both generations: the
/// older "Given Name … Group Membership, Phone 1 - Type" and today's "First Name … Labels,
/// Phone 1 - Label") and Outlook's "Comma Separated Values" export (a fixed set of columns,
/// named in the language of the Outlook that wrote it).
public enum CSVContactFormat: String, Sendable, Hashable, CaseIterable {
    case google, outlook
}

/// The language of a file's column headers (headers are matched in both, whatever this says).
public enum CSVHeaderLanguage: String, Sendable, Hashable {
    case english, german
}

/// What one column of a read file became.
public struct CSVColumnMapping: Sendable, Hashable {
    /// The header as the file wrote it.
    public var header: String
    /// What it fills in the contact ("given name", "phone 2 (label)"), nil when it is not imported.
    public var meaning: String?
}

/// Label names as Google writes them ("Home Fax", "Mobile"), and the German ones its
/// German interface shows; anything else is a custom label, kept as the text.
enum GoogleLabels {
    static func name(_ label: Label?) -> String {
        guard let label else { return "" }
        switch label {
        case .homeFax: return "Home Fax"
        case .workFax: return "Work Fax"
        case .otherFax: return "Other Fax"
        case .homePage: return "Home Page"
        case .iPhone: return "iPhone"
        case .custom(let text): return text
        default: return label.name.prefix(1).uppercased() + label.name.dropFirst()
        }
    }

    static let german: [String: Label] = [
        "privat": .home, "arbeit": .work, "geschäftlich": .work, "sonstige": .other, "mobil": .mobile,
        "hauptnummer": .main, "fax privat": .homeFax, "fax geschäftlich": .workFax, "pager": .pager,
        "startseite": .homePage, "jahrestag": .anniversary, "ehepartner": .spouse, "kind": .child,
        "mutter": .mother, "vater": .father, "elternteil": .parent, "bruder": .brother, "schwester": .sister,
        "freund": .friend, "partner": .partner, "assistent": .assistant, "vorgesetzter": .manager,
    ]

    /// A Google type text: "* " marks the primary value; empty text is no label.
    static func label(_ text: String) -> (label: Label?, preferred: Bool) {
        var text = text.trimmingCharacters()
        let preferred = text.hasPrefix("* ")
        if preferred { text = String(text.dropFirst(2)).trimmingCharacters() }
        guard !text.isEmpty else { return (nil, preferred) }
        let lower = text.lowercased()
        if let builtIn = Label.builtIns.first(where: { name($0).lowercased() == lower }) { return (builtIn, preferred) }
        if let german = german[lower] { return (german, preferred) }
        return (.custom(text), preferred)
    }
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice = slice.dropFirst() }
        while slice.last?.isWhitespace == true { slice = slice.dropLast() }
        return String(slice)
    }
}

/// Google's headers, each turned into the name today's English export uses for it.
enum GoogleColumns {
    /// Single columns, older and today's English names -> today's English name.
    static let singles: [String: String] = [
        "Name": "Name", "Given Name": "First Name", "Additional Name": "Middle Name", "Family Name": "Last Name",
        "Given Name Yomi": "Phonetic First Name", "Additional Name Yomi": "Phonetic Middle Name",
        "Family Name Yomi": "Phonetic Last Name", "Group Membership": "Labels",
        "Organization 1 - Name": "Organization Name", "Organization 1 - Title": "Organization Title",
        "Organization 1 - Department": "Organization Department",
        "First Name": "First Name", "Middle Name": "Middle Name", "Last Name": "Last Name",
        "Phonetic First Name": "Phonetic First Name", "Phonetic Middle Name": "Phonetic Middle Name",
        "Phonetic Last Name": "Phonetic Last Name", "Name Prefix": "Name Prefix", "Name Suffix": "Name Suffix",
        "Nickname": "Nickname", "Organization Name": "Organization Name", "Organization Title": "Organization Title",
        "Organization Department": "Organization Department", "Birthday": "Birthday", "Notes": "Notes", "Labels": "Labels",
    ]
    /// German names (from Google's German interface; not checked against a real German
    /// export, which we did not have) -> today's English name.
    static let germanSingles: [String: String] = [
        "Vorname": "First Name", "Zweiter Vorname": "Middle Name", "Nachname": "Last Name",
        "Namenspräfix": "Name Prefix", "Namenssuffix": "Name Suffix", "Spitzname": "Nickname",
        "Phonetischer Vorname": "Phonetic First Name", "Phonetischer zweiter Vorname": "Phonetic Middle Name",
        "Phonetischer Nachname": "Phonetic Last Name", "Organisationsname": "Organization Name",
        "Titel in der Organisation": "Organization Title", "Abteilung in der Organisation": "Organization Department",
        "Geburtstag": "Birthday", "Notizen": "Notes",
    ]

    /// Columns Google writes that Rolo does not import (counted when telling the formats apart).
    static let ignored: Set<String> = [
        "Yomi Name", "Initials", "Short Name", "Maiden Name", "Gender", "Location", "Billing Information",
        "Directory Server", "Mileage", "Occupation", "Hobby", "Sensitivity", "Priority", "Subject", "Language",
        "Photo", "File As", "Organization 1 - Type", "Organization 1 - Yomi Name", "Organization 1 - Symbol",
        "Organization 1 - Location", "Organization 1 - Job Description", "Phonetic Organization Name", "Foto",
    ]

    static let germanKinds: [String: String] = [
        "E-Mail": "E-mail", "Telefon": "Phone", "Adresse": "Address", "Website": "Website", "Beziehung": "Relation",
        "Ereignis": "Event",
    ]
    static let germanParts: [String: String] = [
        "Wert": "Value", "Formatiert": "Formatted", "Straße": "Street", "Stadt": "City", "Postfach": "PO Box",
        "Region": "Region", "Postleitzahl": "Postal Code", "Land": "Country", "Adresszusatz": "Extended Address",
    ]
    static let kinds: Set<String> = ["E-mail", "Phone", "Address", "Website", "Relation", "Event"]
    static let parts: Set<String> = [
        "Label", "Type", "Value", "Formatted", "Street", "City", "PO Box", "Region", "Postal Code", "Country", "Extended Address",
    ]

    /// A numbered column ("Phone 2 - Type", "Telefon 2 - Wert"): kind, number, part (Type read as Label).
    static func numbered(_ header: String) -> (kind: String, number: Int, part: String, german: Bool)? {
        guard let dash = header.range(of: " - ") else { return nil }
        let head = header[..<dash.lowerBound], part = String(header[dash.upperBound...])
        guard let space = head.lastIndex(of: " "), let number = Int(head[head.index(after: space)...]), number > 0 else { return nil }
        var kind = String(head[..<space]), english = part, german = false
        if let translated = germanKinds[kind], !kinds.contains(kind) { kind = translated; german = true }
        if let translated = germanParts[part], translated != part { english = translated; german = true }
        if english == "Type" { english = "Label" }
        guard kinds.contains(kind), parts.contains(english) else { return nil }
        return (kind, number, english, german)
    }

    static func isGerman(_ header: String) -> Bool {
        numbered(header)?.german ?? (germanSingles[header] != nil)
    }

    /// Today's English name of a header, nil when Google does not write it.
    static func canonical(_ header: String) -> String? {
        if let numbered = numbered(header) { return "\(numbered.kind) \(numbered.number) - \(numbered.part)" }
        return singles[header] ?? germanSingles[header]
    }
}

/// Outlook's columns in English and German (the German names as German Outlook writes them,
/// with the spellings other versions use).
enum OutlookColumns {
    static let english: [String] = [
        "Title", "First Name", "Middle Name", "Last Name", "Suffix", "Company", "Department", "Job Title",
        "Business Street", "Business Street 2", "Business Street 3", "Business City", "Business State",
        "Business Postal Code", "Business Country/Region", "Home Street", "Home Street 2", "Home Street 3",
        "Home City", "Home State", "Home Postal Code", "Home Country/Region", "Other Street", "Other Street 2",
        "Other Street 3", "Other City", "Other State", "Other Postal Code", "Other Country/Region",
        "Assistant's Phone", "Business Fax", "Business Phone", "Business Phone 2", "Callback", "Car Phone",
        "Company Main Phone", "Home Fax", "Home Phone", "Home Phone 2", "ISDN", "Mobile Phone", "Other Fax",
        "Other Phone", "Pager", "Primary Phone", "Radio Phone", "TTY/TDD Phone", "Telex", "Account", "Anniversary",
        "Assistant's Name", "Billing Information", "Birthday", "Business Address PO Box", "Categories", "Children",
        "Directory Server", "E-mail Address", "E-mail Type", "E-mail Display Name", "E-mail 2 Address",
        "E-mail 2 Type", "E-mail 2 Display Name", "E-mail 3 Address", "E-mail 3 Type", "E-mail 3 Display Name",
        "Gender", "Government ID Number", "Hobby", "Home Address PO Box", "Initials", "Internet Free Busy",
        "Keywords", "Language", "Location", "Manager's Name", "Mileage", "Notes", "Office Location",
        "Organizational ID Number", "Other Address PO Box", "Priority", "Private", "Profession", "Referred By",
        "Sensitivity", "Spouse", "User 1", "User 2", "User 3", "User 4", "Web Page",
    ]

    /// German header -> English header.
    static let german: [String: String] = [
        "Anrede": "Title", "Vorname": "First Name", "Weitere Vornamen": "Middle Name", "Nachname": "Last Name",
        "Suffix": "Suffix", "Firma": "Company", "Abteilung": "Department", "Position": "Job Title",
        "Straße geschäftlich": "Business Street", "Straße geschäftlich 2": "Business Street 2",
        "Straße geschäftlich 3": "Business Street 3", "Ort geschäftlich": "Business City",
        "Region geschäftlich": "Business State", "Postleitzahl geschäftlich": "Business Postal Code",
        "Land/Region geschäftlich": "Business Country/Region", "Straße privat": "Home Street",
        "Straße privat 2": "Home Street 2", "Straße privat 3": "Home Street 3", "Ort privat": "Home City",
        "Bundesland/Kanton privat": "Home State", "Postleitzahl privat": "Home Postal Code",
        "Land/Region privat": "Home Country/Region", "Weitere Straße": "Other Street", "Weitere Straße 2": "Other Street 2",
        "Weitere Straße 3": "Other Street 3", "Weiterer Ort": "Other City", "Weiteres/r Bundesland/Kanton": "Other State",
        "Weitere Postleitzahl": "Other Postal Code", "Weiteres/e Land/Region": "Other Country/Region",
        "Weiteres/r Land/Region": "Other Country/Region", "Telefon Assistent": "Assistant's Phone",
        "Fax geschäftlich": "Business Fax", "Telefon geschäftlich": "Business Phone",
        "Telefon geschäftlich 2": "Business Phone 2", "Rückmeldung": "Callback", "Autotelefon": "Car Phone",
        "Telefon Firma": "Company Main Phone", "Fax privat": "Home Fax", "Telefon privat": "Home Phone",
        "Telefon (privat)": "Home Phone", "Telefon privat 2": "Home Phone 2", "Telefon (privat 2)": "Home Phone 2",
        "ISDN": "ISDN", "Mobiltelefon": "Mobile Phone", "Weiteres Fax": "Other Fax", "Weiteres Telefon": "Other Phone",
        "Pager": "Pager", "Haupttelefon": "Primary Phone", "Mobiltelefon 2": "Radio Phone",
        "Telefon für Hörbehinderte": "TTY/TDD Phone", "Telex": "Telex", "Konto": "Account", "Jahrestag": "Anniversary",
        "Name Assistent": "Assistant's Name", "Assistent(in)": "Assistant's Name",
        "Abrechnungsinformation": "Billing Information", "Geburtstag": "Birthday",
        "Postfach geschäftlich": "Business Address PO Box", "Kategorien": "Categories", "Kinder": "Children",
        "Verzeichnisserver": "Directory Server", "E-Mail-Adresse": "E-mail Address", "E-Mail-Typ": "E-mail Type",
        "E-Mail: Angezeigter Name": "E-mail Display Name", "E-Mail 2: Adresse": "E-mail 2 Address",
        "E-Mail 2: Typ": "E-mail 2 Type", "E-Mail 2: Angezeigter Name": "E-mail 2 Display Name",
        "E-Mail 3: Adresse": "E-mail 3 Address", "E-Mail 3: Typ": "E-mail 3 Type",
        "E-Mail 3: Angezeigter Name": "E-mail 3 Display Name", "Geschlecht": "Gender",
        "Regierungsnr.": "Government ID Number", "Hobby": "Hobby", "Postfach privat": "Home Address PO Box",
        "Initialen": "Initials", "Internet-Frei/Gebucht": "Internet Free Busy", "Internet Frei/Gebucht": "Internet Free Busy",
        "Stichwörter": "Keywords", "Sprache": "Language", "Ort": "Location",
        "Name des/der Vorgesetzten": "Manager's Name", "Name des/r Vorgesetzten": "Manager's Name",
        "Reisekilometer": "Mileage", "Notizen": "Notes", "Büro": "Office Location",
        "Organisationsnr.": "Organizational ID Number", "Weiteres Postfach": "Other Address PO Box",
        "Priorität": "Priority", "Privat": "Private", "Beruf": "Profession", "Empfohlen von": "Referred By",
        "Vertraulichkeit": "Sensitivity", "Partner": "Spouse", "Benutzer 1": "User 1", "Benutzer 2": "User 2",
        "Benutzer 3": "User 3", "Benutzer 4": "User 4", "Webseite": "Web Page",
    ]

    static let englishSet = Set(english)

    static func canonical(_ header: String) -> String? {
        englishSet.contains(header) ? header : german[header]
    }

    /// Phone columns and the label each stands for, in export order (several columns of
    /// one label take that label's numbers in turn).
    static let phones: [(column: String, label: Label)] = [
        ("Business Phone", .work), ("Business Phone 2", .work), ("Home Phone", .home), ("Home Phone 2", .home),
        ("Mobile Phone", .mobile), ("Business Fax", .workFax), ("Home Fax", .homeFax), ("Other Fax", .otherFax),
        ("Company Main Phone", .main), ("Pager", .pager), ("Assistant's Phone", .assistant),
        ("Primary Phone", .custom("Primary")), ("Car Phone", .custom("Car")), ("Callback", .custom("Callback")),
        ("Radio Phone", .custom("Radio")), ("ISDN", .custom("ISDN")), ("TTY/TDD Phone", .custom("TTY/TDD")),
        ("Telex", .custom("Telex")), ("Other Phone", .other),
    ]

    /// Address column prefixes and their labels.
    static let addresses: [(prefix: String, label: Label)] = [("Business", .work), ("Home", .home), ("Other", .other)]

    static let emails = ["E-mail Address", "E-mail 2 Address", "E-mail 3 Address"]

    /// Related names: column and label.
    static let related: [(column: String, label: Label)] = [
        ("Spouse", .spouse), ("Children", .child), ("Manager's Name", .manager), ("Assistant's Name", .assistant),
    ]
}
