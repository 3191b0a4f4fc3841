import Contacts

/// Phone books for desk phones and routers (issue 33), written from the Contacts model's
/// names and labeled numbers. Each format names its source in its doc comment; every writer
/// escapes XML text itself (`XMLText`), leaves out groups and cards without a number, and
/// sorts entries by name as phones list them.
public enum PhoneBookFormat: String, Sendable, CaseIterable {
    case yealink, fritzbox, snom

    public func write(_ cards: [FeedContact], bookName: String = "Rolo") -> String {
        let entries = PhoneBookEntry.entries(cards)
        switch self {
        case .yealink: return YealinkDirectory.write(entries)
        case .fritzbox: return FritzBoxPhoneBook.write(entries, name: bookName)
        case .snom: return SnomDirectory.write(entries)
        }
    }
}

/// A name and its numbers, the common ground of the formats.
public struct PhoneBookEntry: Sendable, Hashable {
    public var name: String
    public var givenName: String
    public var familyName: String
    public var numbers: [LabeledValue<String>]

    static func entries(_ cards: [FeedContact]) -> [PhoneBookEntry] {
        cards.compactMap { card -> PhoneBookEntry? in
            let numbers = card.contact.phoneNumbers.filter { !$0.value.trimmingSpaces.isEmpty }
            guard card.contact.kind != .group, !numbers.isEmpty else { return nil }
            let name = card.name.isEmpty ? numbers[0].value : card.name
            return PhoneBookEntry(name: name, givenName: card.contact.givenName, familyName: card.contact.familyName,
                                  numbers: numbers)
        }
        .sorted { ($0.name.lowercased(), $0.name) < ($1.name.lowercased(), $1.name) }
    }
}

extension Label? {
    /// A fax or pager line: a desk phone's directory has no use for them.
    var isFaxOrPager: Bool {
        switch self {
        case .homeFax, .workFax, .otherFax, .pager: true
        default: false
        }
    }
}

/// Yealink's remote phone book: `YealinkIPPhoneDirectory` with one `DirectoryEntry` (`Name`,
/// one `Telephone` per number) per contact, as Yealink's administrator guides describe the
/// "Remote Phone Book" XML (SIP-T2/T4/T5 series; the phone polls `remote_phonebook.data.N.url`).
/// The format has no number types: numbers come in the card's order, faxes and pagers left out.
enum YealinkDirectory {
    static func write(_ entries: [PhoneBookEntry]) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<YealinkIPPhoneDirectory>\n"
        for entry in entries {
            let numbers = entry.numbers.filter { !$0.label.isFaxOrPager }
            guard !numbers.isEmpty else { continue }
            out += "  <DirectoryEntry>\n    <Name>\(XMLText.escape(entry.name))</Name>\n"
            for number in numbers { out += "    <Telephone>\(XMLText.escape(number.value.trimmingSpaces))</Telephone>\n" }
            out += "  </DirectoryEntry>\n"
        }
        return out + "</YealinkIPPhoneDirectory>\n"
    }
}

/// AVM's FRITZ!Box phone book, as the box exports and imports it (and as carddav2fb and
/// Net::Fritz::PhonebookEntry write it): `phonebooks/phonebook/contact`, with
/// `person/realName` and `telephony/number` whose `type` is `home`, `work`, `mobile` or
/// `fax_work`. The box keeps at most nine numbers per entry, so a contact with more becomes
/// several entries of the same name (as carddav2fb does).
enum FritzBoxPhoneBook {
    static let numbersPerEntry = 9

    static func type(_ label: Label?) -> String {
        switch label {
        case .mobile, .iPhone: "mobile"
        case .work, .main: "work"
        case .homeFax, .workFax, .otherFax: "fax_work"
        default: "home"
        }
    }

    static func write(_ entries: [PhoneBookEntry], name: String) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<phonebooks>\n"
        out += "<phonebook name=\"\(XMLText.escape(name))\">\n"
        for entry in entries {
            let numbers = entry.numbers.filter { $0.label != .pager }
            for start in stride(from: 0, to: numbers.count, by: numbersPerEntry) {
                let part = numbers[start..<min(start + numbersPerEntry, numbers.count)]
                out += "<contact>\n<category>0</category>\n"
                out += "<person>\n<realName>\(XMLText.escape(entry.name))</realName>\n</person>\n"
                out += "<telephony nid=\"\(part.count)\">\n"
                for (id, number) in part.enumerated() {
                    let prio = number.isPreferred || (id == 0 && !part.contains(where: \.isPreferred)) ? 1 : 0
                    out += "<number type=\"\(type(number.label))\" prio=\"\(prio)\" id=\"\(id)\">"
                    out += XMLText.escape(number.value.trimmingSpaces) + "</number>\n"
                }
                out += "</telephony>\n<services />\n<setup />\n</contact>\n"
            }
        }
        return out + "</phonebook>\n</phonebooks>\n"
    }
}

/// Snom's remote XML directory (firmware 10.1.178.0 and later, Snom's wiki "Remote XML
/// Directory"): `tbook` (`e="2"`, `version="2.0"`) with one `contact` per card,
/// `first_name`/`last_name` and `numbers/number` whose attributes are `no`, `type` (`mobile`,
/// `home`, `business`, `fixed`) and `outgoing_id`. Faxes and pagers are left out. A card
/// with neither a given nor a family name gives its whole name as `last_name`, which is how
/// the phone reads a name without a space.
enum SnomDirectory {
    static func type(_ label: Label?) -> String {
        switch label {
        case .mobile, .iPhone: "mobile"
        case .home: "home"
        case .work, .main: "business"
        default: "fixed"
        }
    }

    static func write(_ entries: [PhoneBookEntry]) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<tbook complete=\"true\" e=\"2\" version=\"2.0\">\n"
        for entry in entries {
            let numbers = entry.numbers.filter { !$0.label.isFaxOrPager }
            guard !numbers.isEmpty else { continue }
            let split = !entry.givenName.isEmpty || !entry.familyName.isEmpty
            out += "  <contact fav=\"false\" vip=\"false\" blocked=\"false\">\n"
            out += "    <first_name>\(XMLText.escape(split ? entry.givenName : ""))</first_name>\n"
            out += "    <last_name>\(XMLText.escape(split ? entry.familyName : entry.name))</last_name>\n"
            out += "    <numbers>\n"
            for number in numbers {
                out += "      <number no=\"\(XMLText.escape(number.value.trimmingSpaces))\" type=\"\(type(number.label))\" outgoing_id=\"0\"/>\n"
            }
            out += "    </numbers>\n  </contact>\n"
        }
        return out + "</tbook>\n"
    }
}

/// XML 1.0 character data and attribute values: the five predefined entities, and the
/// characters XML 1.0 does not allow at all (most C0 controls) dropped.
enum XMLText {
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice = slice.dropFirst() }
        while slice.last?.isWhitespace == true { slice = slice.dropLast() }
        return String(slice)
    }
}
