import Foundation

/// RFC 1123 (`getlastmodified`, `Last-Modified`) and RFC 3339 (`creationdate`) dates,
/// formatted by hand: no shared formatter state, no locale surprises.
public enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func components(_ date: Date) -> tm {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return parts
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// Reads an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7), the only
    /// form a sender may generate; nil for anything else (the caller then uses its default).
    public static func parseIMFFixdate(_ text: String) -> Date? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: " ")
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","),
              weekdays.contains(String(parts[0].dropLast())), parts[5] == "GMT",
              parts[1].count == 2, let day = Int32(parts[1]),
              let month = months.firstIndex(of: String(parts[2])),
              parts[3].count == 4, let year = Int32(parts[3]) else { return nil }
        let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int32(clock[0]), let minute = Int32(clock[1]), let second = Int32(clock[2]),
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else {
            return nil
        }
        var t = tm()
        t.tm_year = year - 1900; t.tm_mon = Int32(month); t.tm_mday = day
        t.tm_hour = hour; t.tm_min = minute; t.tm_sec = second
        return Date(timeIntervalSince1970: TimeInterval(timegm(&t)))
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`. Written into the string's 29 bytes directly: every
    /// GET's `Last-Modified` is one, and interpolating eleven pieces cost more than the rest
    /// of the engine's answer.
    public static func rfc1123(_ date: Date) -> String {
        let t = components(date)
        let year = Int(t.tm_year) + 1900
        guard (1000...9999).contains(year) else {
            return "\(weekdays[Int(t.tm_wday)]), \(two(t.tm_mday)) \(months[Int(t.tm_mon)]) \(year) "
                + "\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)) GMT"
        }
        return String(unsafeUninitializedCapacity: 29) { out in
            var index = 0
            func put(_ text: StaticString, at offset: Int) {
                for position in 0..<3 { out[index + position] = text.utf8Start[offset * 3 + position] }
                index += 3
            }
            func put(_ byte: UInt8) {
                out[index] = byte
                index += 1
            }
            func put(_ value: Int, digits: Int) {
                var rest = value
                for position in stride(from: digits - 1, through: 0, by: -1) {
                    out[index + position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                index += digits
            }
            put("SunMonTueWedThuFriSat", at: Int(t.tm_wday))
            put(UInt8(ascii: ",")); put(UInt8(ascii: " "))
            put(Int(t.tm_mday), digits: 2); put(UInt8(ascii: " "))
            put("JanFebMarAprMayJunJulAugSepOctNovDec", at: Int(t.tm_mon)); put(UInt8(ascii: " "))
            put(year, digits: 4); put(UInt8(ascii: " "))
            put(Int(t.tm_hour), digits: 2); put(UInt8(ascii: ":"))
            put(Int(t.tm_min), digits: 2); put(UInt8(ascii: ":"))
            put(Int(t.tm_sec), digits: 2)
            for byte in " GMT".utf8 { put(byte) }
            return index
        }
    }

    /// `1994-11-06T08:49:37Z`
    static func rfc3339(_ date: Date) -> String {
        let t = components(date)
        return "\(t.tm_year + 1900)-\(two(t.tm_mon + 1))-\(two(t.tm_mday))T"
            + "\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec))Z"
    }
}
