import Foundation
import NIOHTTP1

extension PushSender {
    /// What a push service's answer means for the subscription (RFC 8030 §5, §8.4).
    static func result(status: Int, reasonPhrase: String, headers: HTTPHeaders, body: Data,
                       now: Date) -> PushDeliveryResult {
        switch status {
        case 200..<300:
            return .delivered
        case 404, 410:
            return .gone
        case 429, 500..<600:
            return .retry(after: retryAfter(headers.first(name: "Retry-After"), now: now))
        case 300..<400:
            // Following would POST to wherever the service points, unchecked.
            return .rejected(status: status, reason: "redirect not followed")
        default:
            let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return .rejected(status: status, reason: text.isEmpty ? reasonPhrase : String(text.prefix(200)))
        }
    }

    /// `Retry-After` as seconds from `now` (RFC 9110 §10.2.3): delay-seconds or an
    /// HTTP-date; nil when absent or unreadable, 0 for a date in the past.
    static func retryAfter(_ value: String?, now: Date) -> TimeInterval? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.allSatisfy({ ("0"..."9").contains($0) }) { return TimeInterval(value) }
        for format in httpDateFormats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: value) { return max(0, date.timeIntervalSince(now)) }
        }
        return nil
    }

    /// IMF-fixdate, then the obsolete RFC 850 and asctime forms a recipient must accept.
    private static let httpDateFormats = [
        "EEE, dd MMM yyyy HH:mm:ss 'GMT'",
        "EEEE, dd-MMM-yy HH:mm:ss 'GMT'",
        "EEE MMM d HH:mm:ss yyyy",
    ]
}
