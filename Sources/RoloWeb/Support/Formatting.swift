import Contacts
import Foundation

/// Texts a page shows: labels as phones show them, counts, dates, sizes, initials.
enum Formatting {
    /// A label the way Apple's and Google's apps show it; nil label: the field's own name.
    static func label(_ label: Label?, default fallback: String) -> String {
        guard let label else { return fallback }
        switch label {
        case .home: return "Home"
        case .work: return "Work"
        case .other: return "Other"
        case .mobile: return "Mobile"
        case .iPhone: return "iPhone"
        case .main: return "Main"
        case .homeFax: return "Home fax"
        case .workFax: return "Work fax"
        case .otherFax: return "Other fax"
        case .pager: return "Pager"
        case .homePage: return "Home page"
        case .anniversary: return "Anniversary"
        case .spouse: return "Spouse"
        case .child: return "Child"
        case .mother: return "Mother"
        case .father: return "Father"
        case .parent: return "Parent"
        case .brother: return "Brother"
        case .sister: return "Sister"
        case .friend: return "Friend"
        case .partner: return "Partner"
        case .assistant: return "Assistant"
        case .manager: return "Manager"
        case .custom(let text): return text.isEmpty ? fallback : text
        }
    }

    /// "1 contact", "1 234 contacts", "1 000+ contacts" (the count is capped).
    static func count(_ count: Int, cap: Int, noun: String = "contact") -> String {
        let number = grouped(count) + (count >= cap ? "+" : "")
        return number + " " + noun + (count == 1 ? "" : "s")
    }

    /// Thousands separated by a no-break space.
    static func grouped(_ number: Int) -> String {
        let digits = String(abs(number))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out += "\u{00A0}" }
            out.append(digit)
        }
        return (number < 0 ? "-" : "") + out
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) bytes" : String(format: "%.1f %@", value, units[unit])
    }

    static let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                         "October", "November", "December"]

    /// "15 April 1980", or "15 April" without a year.
    static func date(_ date: ContactDate) -> String {
        let month = (1...12).contains(date.month) ? months[date.month - 1] : String(date.month)
        return "\(date.day) \(month)" + (date.year.map { " \($0)" } ?? "")
    }

    static func day(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "d MMM yyyy"
        return formatter.string(from: date)
    }

    static func time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "d MMM yyyy, HH:mm 'UTC'"
        return formatter.string(from: date)
    }

    static func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    /// Up to two initials of a name ("Ann Example" → "AE").
    static func initials(_ name: String) -> String {
        let words = name.split(whereSeparator: { $0.isWhitespace || $0 == "-" }).filter { $0.first?.isLetter == true || $0.first?.isNumber == true }
        let letters = words.prefix(2).compactMap(\.first).map { String($0).uppercased() }
        return letters.isEmpty ? "?" : letters.joined()
    }
}
