/// A `DAV:sync-token` (RFC 6578) naming an address book and a position in its change log,
/// spelled `http://rolo.invalid/sync/<collection-id>/<seq>` (design.md). The `.invalid`
/// host keeps it a URI that never resolves.
public struct SyncToken: Sendable, Hashable, CustomStringConvertible {
    public static let prefix = "http://rolo.invalid/sync/"

    public var collectionID: Int64
    public var seq: Int64

    public init(collectionID: Int64, seq: Int64) {
        self.collectionID = collectionID; self.seq = seq
    }

    /// Reads a token; nil unless it is exactly `prefix` + decimal id + `/` + decimal seq,
    /// both non-negative, without signs, spaces or leading zeros (so each token has one
    /// spelling).
    public init?(_ token: String) {
        guard token.hasPrefix(Self.prefix) else { return nil }
        let parts = token.utf8.dropFirst(Self.prefix.utf8.count).split(separator: UInt8(ascii: "/"),
                                                                          omittingEmptySubsequences: false)
        guard parts.count == 2, let id = Self.number(parts[0]), let seq = Self.number(parts[1]) else { return nil }
        self.init(collectionID: id, seq: seq)
    }

    /// Reads a token issued for `collectionID`; nil when malformed or for another collection.
    public init?(_ token: String, collectionID: Int64) {
        guard let parsed = SyncToken(token), parsed.collectionID == collectionID else { return nil }
        self = parsed
    }

    public var description: String { "\(Self.prefix)\(collectionID)/\(seq)" }

    private static func number(_ digits: Substring.UTF8View.SubSequence) -> Int64? {
        guard let first = digits.first, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              first != 0x30 || digits.count == 1 else { return nil }
        return Int64(String(decoding: digits, as: UTF8.self))
    }
}
