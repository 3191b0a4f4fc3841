import Crypto
import Foundation

/// What a feed serves (issue 33): the birthday calendar or a phone book for a device.
public enum FeedKind: String, Sendable, Hashable, CaseIterable {
    case birthdays, yealink, fritzbox, snom
}

/// A feed at a secret URL: calendar apps and desk phones subscribe without a login, so the
/// secret is the only credential, and the store keeps only its hash.
public struct Feed: Sendable, Hashable {
    public var id: Int64
    public var user: String
    public var kind: FeedKind
    /// The chosen books (collection ids, sorted); empty means every book the user can read
    /// when the feed is read. Reading checks access again: a book no longer shared drops out.
    public var bookIDs: [Int64]
    /// The chosen books the user can still read, by the name their home shows (a book's
    /// path, or a mount's name), sorted; for listings.
    public var bookNames: [String]
    public var created: Date
    public var lastRead: Date?

    public init(id: Int64, user: String, kind: FeedKind, bookIDs: [Int64], bookNames: [String], created: Date, lastRead: Date?) {
        self.id = id; self.user = user; self.kind = kind; self.bookIDs = bookIDs; self.bookNames = bookNames
        self.created = created; self.lastRead = lastRead
    }
}

/// A feed just made, with its secret: shown once, never stored.
public struct NewFeed: Sendable, Hashable {
    public var feed: Feed
    public var secret: String

    public init(feed: Feed, secret: String) {
        self.feed = feed
        self.secret = secret
    }
}

/// Feed secrets: 256 random bits in base64url without padding (43 characters, safe in a
/// URL path). The store keeps their SHA-256 only; no pepper or stretching is needed for a
/// secret that is not a human's choice, and a plain hash can be looked up by index.
package enum FeedSecret {
    package static func make() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        return bytes.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The hash to look a secret up by; nil for text that cannot be a secret (the wrong
    /// length or alphabet), which then needs no database read at all.
    package static func hash(_ secret: String) -> Data? {
        guard secret.utf8.count == 43,
              secret.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F })
        else { return nil }
        return Data(SHA256.hash(data: Data(secret.utf8)))
    }

    /// Book ids as the `books` column keeps them: space-separated, sorted; "" for every book.
    package static func booksText(_ ids: [Int64]) -> String { ids.sorted().map(String.init).joined(separator: " ") }

    package static func bookIDs(_ text: String) -> [Int64] { text.split(separator: " ").compactMap { Int64($0) }.sorted() }
}
