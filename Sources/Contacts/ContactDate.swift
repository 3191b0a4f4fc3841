/// A calendar date whose year may be unknown (a birthday without year), optionally with a
/// time of day: the subset of `DateComponents` that vCard BDAY, ANNIVERSARY and X-ABDATE carry.
public struct ContactDate: Sendable, Hashable, CustomStringConvertible {
    public var year: Int?
    public var month: Int
    public var day: Int
    public var time: TimeOfDay?

    /// A time of day with an optional UTC offset (`Z` is an offset of 0).
    public struct TimeOfDay: Sendable, Hashable {
        public var hour: Int
        public var minute: Int
        public var second: Int?
        public var utcOffsetMinutes: Int?

        public init(hour: Int, minute: Int, second: Int? = nil, utcOffsetMinutes: Int? = nil) {
            self.hour = hour
            self.minute = minute
            self.second = second
            self.utcOffsetMinutes = utcOffsetMinutes
        }
    }

    public init(year: Int?, month: Int, day: Int, time: TimeOfDay? = nil) {
        self.year = year
        self.month = month
        self.day = day
        self.time = time
    }

    /// `YYYY-MM-DD`, `--MM-DD` without a year, `YYYY-MM-DDThh:mm(:ss)(±hh:mm|Z)` with a time.
    public var description: String {
        var text = year.map { pad($0, 4) } ?? "-"
        text += "-\(pad(month, 2))-\(pad(day, 2))"
        if let time { text += "T" + time.text(separator: ":") }
        return text
    }

    /// The vCard value: 3.0 extended form (`1986-05-21`), 4.0 basic form (`19860521`, `--0315`).
    func vCardText(basic: Bool) -> String {
        guard basic else {
            // 3.0 has no year-less form: Apple writes a placeholder year with X-APPLE-OMIT-YEAR.
            var text = "\(pad(year ?? ContactDate.appleOmittedYear, 4))-\(pad(month, 2))-\(pad(day, 2))"
            if let time { text += "T" + time.text(separator: ":") }
            return text
        }
        var text = (year.map { pad($0, 4) } ?? "--") + pad(month, 2) + pad(day, 2)
        if let time { text += "T" + time.text(separator: "") }
        return text
    }

    /// The placeholder year Apple writes for a year-less date in vCard 3.0.
    static let appleOmittedYear = 1604

    /// Parses the date forms vCard writers use: `1986-05-21`, `19860521`, `--0315`, `--03-15`,
    /// each optionally followed by `Thh[:]mm[[:]ss][Z|±hh[:]mm]`. Nil for anything else.
    public init?(vCardText text: String) {
        let trimmed = text.trimmingSpaces
        let parts = trimmed.split(separator: "T", maxSplits: 1, omittingEmptySubsequences: false)
        guard let datePart = parts.first else { return nil }
        let digits = datePart.filter { $0 != "-" }
        guard digits.allSatisfy(\.isASCIIDigitCharacter) else { return nil }
        if datePart.hasPrefix("--") {
            guard digits.count == 4 else { return nil }
            year = nil
        } else {
            guard digits.count == 8 else { return nil }
            year = Int(digits.prefix(4))
        }
        guard let month = Int(digits.dropFirst(digits.count - 4).prefix(2)),
              let day = Int(digits.suffix(2)),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        self.month = month
        self.day = day
        if parts.count == 2 {
            guard let time = TimeOfDay(vCardText: parts[1]) else { return nil }
            self.time = time
        } else {
            time = nil
        }
    }
}

extension ContactDate.TimeOfDay {
    func text(separator: String) -> String {
        var text = pad(hour, 2) + separator + pad(minute, 2)
        if let second { text += separator + pad(second, 2) }
        if let offset = utcOffsetMinutes {
            if offset == 0 {
                text += "Z"
            } else {
                text += (offset < 0 ? "-" : "+") + pad(abs(offset) / 60, 2) + separator + pad(abs(offset) % 60, 2)
            }
        }
        return text
    }

    init?(vCardText text: Substring) {
        var clock = text
        var offset: Int?
        if clock.hasSuffix("Z") {
            clock = clock.dropLast()
            offset = 0
        } else if let signIndex = clock.firstIndex(where: { $0 == "+" || $0 == "-" }) {
            let zone = clock[signIndex...].filter { $0 != ":" }
            clock = clock[..<signIndex]
            let sign = zone.first == "-" ? -1 : 1
            let zoneDigits = zone.dropFirst()
            guard zoneDigits.count == 4 || zoneDigits.count == 2, let hours = Int(zoneDigits.prefix(2)) else { return nil }
            let minutes = zoneDigits.count == 4 ? Int(zoneDigits.suffix(2)) ?? 0 : 0
            offset = sign * (hours * 60 + minutes)
        }
        let digits = clock.filter { $0 != ":" }
        guard digits.allSatisfy(\.isASCIIDigitCharacter), digits.count == 4 || digits.count == 6,
              let hour = Int(digits.prefix(2)), let minute = Int(digits.dropFirst(2).prefix(2)) else { return nil }
        self.init(hour: hour, minute: minute, second: digits.count == 6 ? Int(digits.suffix(2)) : nil,
                  utcOffsetMinutes: offset)
    }
}

private func pad(_ number: Int, _ width: Int) -> String {
    let digits = String(number)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

extension Character {
    var isASCIIDigitCharacter: Bool { isASCII && isWholeNumber }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice = slice.dropFirst() }
        while slice.last?.isWhitespace == true { slice = slice.dropLast() }
        return String(slice)
    }
}
