import ContactFeeds
import Contacts
import Testing
import VCard

/// The birthday calendar: yearly all-day events, dates without a year, 29 February, and
/// RFC 5545's folding and escaping.
struct BirthdayCalendarTests {
    static func card(_ lines: [String], key: String = "k") throws -> FeedContact {
        let text = (["BEGIN:VCARD"] + lines + ["END:VCARD", ""]).joined(separator: "\r\n")
        return try #require(FeedContact(key: key, bytes: Array(text.utf8)))
    }

    static func unfolded(_ calendar: String) -> [String] {
        calendar.replacingOccurrences(of: "\r\n ", with: "").components(separatedBy: "\r\n")
    }

    /// The VEVENT blocks, each as its unfolded lines.
    static func events(_ calendar: String) -> [[String]] {
        var events: [[String]] = []
        var current: [String]?
        for line in unfolded(calendar) {
            if line == "BEGIN:VEVENT" { current = [] } else if line == "END:VEVENT" {
                events.append(current ?? [])
                current = nil
            } else { current?.append(line) }
        }
        return events
    }

    @Test func aBirthdayWithAYearIsAYearlyAllDayEventNamingTheBirthYear() throws {
        let ada = try Self.card(["VERSION:4.0", "UID:ada", "FN:Ada Lovelace", "BDAY:18151210"])
        let events = Self.events(BirthdayCalendar.write([ada]))
        #expect(events.count == 1)
        let event = try #require(events.first)
        #expect(event.contains("UID:ada-birthday@rolo"))
        #expect(event.contains("DTSTART;VALUE=DATE:18151210"))
        #expect(event.contains("DTEND;VALUE=DATE:18151211"))
        #expect(event.contains("RRULE:FREQ=YEARLY"))
        #expect(event.contains("SUMMARY:Ada Lovelace's birthday (born 1815)"))
        #expect(event.contains { $0.hasPrefix("DTSTAMP:") })
    }

    @Test func aDateWithoutAYearStartsInTheLeapBaseYearAndShowsNoYear() throws {
        let v4 = try Self.card(["VERSION:4.0", "UID:a", "FN:Ann", "BDAY:--0415"])
        let apple = try Self.card(["VERSION:3.0", "UID:b", "FN:Bob", "BDAY;X-APPLE-OMIT-YEAR=1604:1604-04-16"])
        let events = Self.events(BirthdayCalendar.write([v4, apple]))
        #expect(events.count == 2)
        #expect(events[0].contains("DTSTART;VALUE=DATE:20000415"))
        #expect(events[0].contains("SUMMARY:Ann's birthday"))
        #expect(events[1].contains("DTSTART;VALUE=DATE:20000416"))
        #expect(events[1].contains("SUMMARY:Bob's birthday"))
        #expect(BirthdayCalendar.yearlessBaseYear % 4 == 0)
    }

    @Test func the29thOfFebruaryRecursOnTheLastDayOfFebruaryEveryYear() throws {
        let leap = try Self.card(["VERSION:4.0", "UID:l", "FN:Leap", "BDAY:19960229"])
        let yearless = try Self.card(["VERSION:4.0", "UID:y", "FN:Yearless", "BDAY:--0229"])
        let events = Self.events(BirthdayCalendar.write([leap, yearless]))
        #expect(events.count == 2)
        #expect(events[0].contains("DTSTART;VALUE=DATE:19960229"))
        #expect(events[0].contains("DTEND;VALUE=DATE:19960301"))
        #expect(events[0].contains("RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1"))
        #expect(events[1].contains("DTSTART;VALUE=DATE:20000229"))
        #expect(events[1].contains("RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1"))
    }

    @Test func aDateThatDoesNotExistIsLeftOut() throws {
        let notLeap = try Self.card(["VERSION:4.0", "UID:n", "FN:Nope", "BDAY:19990229"])
        let thirtieth = try Self.card(["VERSION:4.0", "UID:t", "FN:Thirty", "BDAY:--0230"])
        #expect(Self.events(BirthdayCalendar.write([notLeap, thirtieth])).isEmpty)
    }

    @Test func anniversariesComeFromVCard4AppleAndVCard3Spellings() throws {
        let v4 = try Self.card(["VERSION:4.0", "UID:a", "FN:Ann", "ANNIVERSARY:19900601"])
        let apple = try Self.card(["VERSION:3.0", "UID:b", "FN:Bob", "item1.X-ABDATE:1985-07-02",
                                   "item1.X-ABLabel:_$!<Anniversary>!$_"])
        let evolution = try Self.card(["VERSION:3.0", "UID:c", "FN:Cy", "X-ANNIVERSARY:2001-09-03"])
        let other = try Self.card(["VERSION:3.0", "UID:d", "FN:Di", "item1.X-ABDATE:2001-09-04", "item1.X-ABLabel:Moved in"])
        let events = Self.events(BirthdayCalendar.write([v4, apple, evolution, other]))
        #expect(events.count == 3)
        #expect(events[0].contains("UID:a-anniversary@rolo"))
        #expect(events[0].contains("SUMMARY:Ann's anniversary (since 1990)"))
        #expect(events[1].contains("DTSTART;VALUE=DATE:19850702"))
        #expect(events[2].contains("DTSTART;VALUE=DATE:20010903"))
        #expect(events.allSatisfy { $0.contains("CATEGORIES:Anniversary") })
    }

    @Test func theSameCardsGiveTheSameBytes() throws {
        let ada = try Self.card(["VERSION:4.0", "UID:ada", "FN:Ada", "BDAY:18151210"])
        #expect(BirthdayCalendar.write([ada]) == BirthdayCalendar.write([ada]))
    }

    @Test func aCardWithoutUIDIsKeyedByWhatTheCallerGives() throws {
        let card = try Self.card(["VERSION:3.0", "FN:No Uid", "BDAY:1970-01-02"], key: "7/no-uid.vcf")
        #expect(Self.events(BirthdayCalendar.write([card]))[0].contains("UID:7/no-uid.vcf-birthday@rolo"))
    }

    @Test func everyLineEndsInCRLFAndNoneIsLongerThan75Octets() throws {
        let long = String(repeating: "Ünïcødé Nåme ", count: 12) + "End"
        let card = try Self.card(["VERSION:4.0", "UID:u", "FN:\(long)", "BDAY:--0101"])
        let calendar = BirthdayCalendar.write([card])
        #expect(calendar.hasSuffix("END:VCALENDAR\r\n"))
        let lines = calendar.components(separatedBy: "\r\n").dropLast()
        #expect(!lines.contains { $0.contains("\n") || $0.contains("\r") })
        #expect(lines.allSatisfy { $0.utf8.count <= 75 })
        #expect(lines.contains { $0.hasPrefix(" ") })
        #expect(Self.unfolded(calendar).contains("SUMMARY:\(long)'s birthday"))
    }

    @Test func foldingNeverSplitsAUTF8Sequence() {
        // Odd offsets: "SUMMARY:" is 8 octets, each "é" 2, so a cut by octets alone would halve one.
        let line = "SUMMARY:" + String(repeating: "é", count: 80)
        let folded = Array(ICalendarText.folded(line).utf8)
        var lines: [[UInt8]] = [[]]
        var index = 0
        while index < folded.count {
            if folded[index] == 0x0D, index + 1 < folded.count, folded[index + 1] == 0x0A {
                lines.append([])
                index += 2
            } else {
                lines[lines.count - 1].append(folded[index])
                index += 1
            }
        }
        #expect(lines.count > 2 && lines.last == [])
        for bytes in lines.dropLast() {
            #expect(bytes.count <= 75)
            #expect(String(validating: bytes, as: UTF8.self) != nil, "\(bytes)")
        }
        #expect(String(decoding: folded, as: UTF8.self).replacingOccurrences(of: "\r\n ", with: "") == line + "\r\n")
    }

    @Test func textIsEscapedAsRFC5545Says() {
        #expect(ICalendarText.escape("a,b;c\\d\ne\r\nf") == "a\\,b\\;c\\\\d\\ne\\nf")
        #expect(ICalendarText.escape("bell\u{7}") == "bell")
    }

    @Test func groupsGiveNoEvents() throws {
        let group = try Self.card(["VERSION:4.0", "UID:g", "FN:Team", "KIND:group", "BDAY:20000101"])
        #expect(Self.events(BirthdayCalendar.write([group])).isEmpty)
    }
}
