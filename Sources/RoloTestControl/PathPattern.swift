/// Which request paths a fault rule applies to, written as a glob so a harness can aim at
/// one card, one book or a whole tree without regular expressions.
///
/// Matched against the whole percent-decoded path (no query string), byte for byte and
/// case-sensitively: `*` matches any run of characters except `/` (within one segment),
/// `**` matches any run including `/` (across segments, so `/dav/**` is a prefix match),
/// every other character matches itself. `/dav/addressbooks/alice/default/*.vcf` matches
/// every card of that book; `/dav/addressbooks/alice/**` everything below alice's home.
struct PathPattern: Sendable, Equatable, CustomStringConvertible {
    enum Token: Sendable, Equatable {
        case literal(UInt8)
        /// `*`: any run of bytes other than `/`.
        case segmentWildcard
        /// `**`: any run of bytes.
        case anyWildcard
    }

    let text: String
    private let tokens: [Token]
    /// The bytes before the first wildcard: a path without them is rejected at once.
    private let literalPrefix: [UInt8]

    /// Nil when the pattern does not start with `/` (paths always do).
    init?(_ text: String) {
        guard text.hasPrefix("/") else { return nil }
        self.text = text
        var tokens: [Token] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "*") {
                var stars = 0
                while index < bytes.count, bytes[index] == UInt8(ascii: "*") { stars += 1; index += 1 }
                tokens.append(stars >= 2 ? .anyWildcard : .segmentWildcard)
            } else {
                tokens.append(.literal(bytes[index]))
                index += 1
            }
        }
        self.tokens = tokens
        literalPrefix = Array(bytes.prefix { $0 != UInt8(ascii: "*") })
    }

    var description: String { text }

    /// Whether `path` matches the whole pattern. Dynamic programming over (token, byte),
    /// linear in pattern × path length, so no pattern can make matching explode.
    func matches(_ path: String) -> Bool {
        guard path.utf8.starts(with: literalPrefix) else { return false }
        let bytes = Array(path.utf8)
        if literalPrefix.count == tokens.count { return bytes.count == literalPrefix.count }
        // reachable[j]: the tokens consumed so far can match exactly bytes[0..<j].
        var reachable = [Bool](repeating: false, count: bytes.count + 1)
        reachable[literalPrefix.count] = true
        var next = reachable
        for token in tokens.dropFirst(literalPrefix.count) {
            var any = false
            switch token {
            case .literal(let byte):
                next[0] = false
                for j in 0..<bytes.count {
                    next[j + 1] = reachable[j] && bytes[j] == byte
                    any = any || next[j + 1]
                }
            case .segmentWildcard, .anyWildcard:
                var carrying = false
                for j in 0...bytes.count {
                    if reachable[j] { carrying = true }
                    next[j] = carrying
                    any = any || carrying
                    if token == .segmentWildcard, j < bytes.count, bytes[j] == UInt8(ascii: "/") { carrying = false }
                }
            }
            if !any { return false }
            swap(&reachable, &next)
        }
        return reachable[bytes.count]
    }
}
