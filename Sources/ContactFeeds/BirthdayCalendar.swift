import Contacts

/// The birthday and anniversary calendar (issue 33): one yearly all-day VEVENT per card and
/// kind of date, for calendar apps that subscribe to a URL (RFC 5545, `text/calendar`).
///
/// Choices a reader of the feed sees:
/// - An age cannot be in a recurring event's summary (it changes every year and the event is
///   written once), so a known year shows as "(born 1815)" or "(since 1990)".
/// - A date without a year (`--0415`, Apple's `X-APPLE-OMIT-YEAR`) starts in `yearlessBaseYear`,
///   a leap year, so that a year-less 29 February is a real date; no year is shown.
/// - 29 February recurs as `BYMONTH=2;BYMONTHDAY=-1`, the last day of February: the 29th in
///   leap years and the 28th otherwise, so the day is never skipped (RFC 5545 §3.3.10 lets a
///   plain yearly rule skip the years where the date does not exist).
/// - A date that does not exist (30 February, 29 February of a year that is not a leap year)
///   is left out rather than guessed.
public enum BirthdayCalendar {
    /// Where year-less dates start: a leap year, recent enough that clients expand few years.
    public static let yearlessBaseYear = 2000

    public struct Options: Sendable {
        /// The calendar's name (`X-WR-CALNAME`).
        public var name: String
        /// `DTSTAMP` of every event: the time the feed's content last changed, so the same
        /// content gives the same bytes (and the same ETag) at every poll.
        public var stamp: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)
        /// Added to each event's UID so that two Rolo servers' feeds never share one.
        public var uidDomain: String

        public init(name: String = "Birthdays",
                    stamp: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) = (2000, 1, 1, 0, 0, 0),
                    uidDomain: String = "rolo") {
            self.name = name
            self.stamp = stamp
            self.uidDomain = uidDomain
        }
    }

    /// One event before it is written.
    public struct Event: Sendable, Hashable {
        public enum Kind: String, Sendable { case birthday, anniversary }
        public var uid: String
        public var kind: Kind
        public var summary: String
        public var year: Int?
        public var month: Int
        public var day: Int
    }

    /// The events of some cards, in the cards' order, birthdays before anniversaries.
    public static func events(_ cards: [FeedContact]) -> [Event] {
        var events: [Event] = []
        for card in cards where card.contact.kind != .group {
            let name = card.name.isEmpty ? "?" : card.name
            if let birthday = card.contact.birthday, isRealDate(birthday) {
                let year = birthday.year.map { " (born \($0))" } ?? ""
                events.append(Event(uid: "\(card.key)-birthday", kind: .birthday, summary: "\(name)'s birthday\(year)",
                                    year: birthday.year, month: birthday.month, day: birthday.day))
            }
            var anniversaries = card.contact.dates.filter { $0.label == .anniversary }.map(\.value)
            anniversaries += card.extraAnniversaries.filter { !anniversaries.contains($0) }
            for (index, date) in anniversaries.enumerated() where isRealDate(date) {
                let year = date.year.map { " (since \($0))" } ?? ""
                let suffix = index == 0 ? "" : "-\(index + 1)"
                events.append(Event(uid: "\(card.key)-anniversary\(suffix)", kind: .anniversary,
                                    summary: "\(name)'s anniversary\(year)",
                                    year: date.year, month: date.month, day: date.day))
            }
        }
        return events
    }

    /// The whole calendar, CRLF line ends, every line folded at 75 octets.
    public static func write(_ cards: [FeedContact], options: Options = Options()) -> String {
        var lines = [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            "PRODID:-//Rolo//Birthday feed//EN",
            "CALSCALE:GREGORIAN",
            "METHOD:PUBLISH",
            "X-WR-CALNAME:" + ICalendarText.escape(options.name),
            // Hints for how often to poll (Apple's and the draft's spelling); the ETag makes polls cheap.
            "X-PUBLISHED-TTL:PT6H",
            "REFRESH-INTERVAL;VALUE=DURATION:PT6H",
        ]
        let s = options.stamp
        let stamp = pad(s.year, 4) + pad(s.month, 2) + pad(s.day, 2) + "T" + pad(s.hour, 2) + pad(s.minute, 2) + pad(s.second, 2) + "Z"
        for event in events(cards) {
            let year = event.year ?? yearlessBaseYear
            let (endYear, endMonth, endDay) = nextDay(year: year, month: event.month, day: event.day)
            lines += [
                "BEGIN:VEVENT",
                "UID:" + ICalendarText.escape("\(event.uid)@\(options.uidDomain)"),
                "DTSTAMP:" + stamp,
                "DTSTART;VALUE=DATE:" + pad(year, 4) + pad(event.month, 2) + pad(event.day, 2),
                "DTEND;VALUE=DATE:" + pad(endYear, 4) + pad(endMonth, 2) + pad(endDay, 2),
                event.month == 2 && event.day == 29 ? "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1" : "RRULE:FREQ=YEARLY",
                "SUMMARY:" + ICalendarText.escape(event.summary),
                "CATEGORIES:" + (event.kind == .birthday ? "Birthday" : "Anniversary"),
                "TRANSP:TRANSPARENT",
                "CLASS:PRIVATE",
                "END:VEVENT",
            ]
        }
        lines.append("END:VCALENDAR")
        return lines.map(ICalendarText.folded).joined()
    }

    static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// A date that exists: a year-less date is checked in the (leap) base year.
    static func isRealDate(_ date: ContactDate) -> Bool {
        let year = date.year ?? yearlessBaseYear
        return (1...12).contains(date.month) && date.day >= 1 && date.day <= daysIn(month: date.month, year: year)
    }

    static func nextDay(year: Int, month: Int, day: Int) -> (Int, Int, Int) {
        if day < daysIn(month: month, year: year) { return (year, month, day + 1) }
        return month == 12 ? (year + 1, 1, 1) : (year, month + 1, 1)
    }
}

func pad(_ number: Int, _ width: Int) -> String {
    let digits = String(number)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
