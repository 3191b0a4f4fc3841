extension String {
    /// The text without leading and trailing XML whitespace (space, tab, CR, LF). Pure
    /// Swift: Foundation's `trimmingCharacters(in:)` goes through NSString on Linux and
    /// cost a multiget of 1000 hrefs more than writing the cards.
    var trimmingXMLWhitespace: String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard let first = utf8.first, let last = utf8.last, isSpace(first) || isSpace(last) else { return self }
        guard let start = utf8.firstIndex(where: { !isSpace($0) }), let end = utf8.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(decoding: utf8[start...end], as: UTF8.self)
    }
}
