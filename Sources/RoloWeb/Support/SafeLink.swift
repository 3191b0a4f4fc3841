import Foundation

/// Which card values become links: only these schemes (a `javascript:` or `data:` URL in a
/// card is shown as text), and only values without spaces or control characters.
enum SafeLink {
    static let allowedSchemes: Set<String> = ["http", "https", "mailto", "tel", "sms", "xmpp"]

    /// The value as an `href`, or nil when it must stay text.
    static func href(_ value: String) -> String? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) }),
              let colon = trimmed.firstIndex(of: ":") else { return nil }
        let scheme = trimmed[..<colon].lowercased()
        guard scheme.first?.isLetter == true,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
              allowedSchemes.contains(scheme) else { return nil }
        if scheme == "http" || scheme == "https" {
            // An authority after `//` is required: `http:foo` is no web address.
            guard trimmed[trimmed.index(after: colon)...].hasPrefix("//"), trimmed.count > scheme.count + 3 else { return nil }
        }
        return trimmed
    }

    /// A `mailto:` link for an e-mail address (nil for anything that does not look like one).
    static func mailto(_ address: String) -> String? {
        let trimmed = address.trimmingCharacters(in: .whitespaces)
        if trimmed.lowercased().hasPrefix("mailto:") { return href(trimmed) }
        guard trimmed.contains("@"), !trimmed.contains(":") else { return nil }
        return href("mailto:" + trimmed)
    }

    /// A `tel:` link for a phone number: digits, `+`, `*`, `#` and separators only.
    static func tel(_ number: String) -> String? {
        var text = number.trimmingCharacters(in: .whitespaces)
        if text.lowercased().hasPrefix("tel:") { text = String(text.dropFirst(4)) }
        let dialable = text.filter { $0.isASCII && ($0.isNumber || "+*#".contains($0)) }
        guard !dialable.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || "+*#-(). /,;pPwW".contains($0)) }) else { return nil }
        return "tel:" + dialable
    }

    /// A web address written without a scheme (`www.example.com`) becomes https.
    static func web(_ value: String) -> String? {
        if let link = href(value) { return link }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.contains(":"), trimmed.contains("."), !trimmed.hasPrefix("/"),
              trimmed.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\\" }) else { return nil }
        return href("https://" + trimmed)
    }
}
