import Foundation
import RoloStore

/// Users, address books and cards read from a folder, so a test harness can start Rolo
/// with known data and reset to it between tests.
///
/// Layout: `DIR/<user>/<book>/*.vcf` (a file may hold several cards), and optionally
/// `DIR/<user>/password` (first line; without it the password is the user name).
/// Reading validates everything first, so a broken fixture fails before the store changes.
public struct FixtureSet: Sendable {
    public let directory: String

    /// Reads and validates the folder; throws `FixtureError` naming the bad file.
    public init(directory: String) throws {
        self.directory = directory
        fatalError("contract stub: implemented on branch fixtures")
    }

    /// Creates the users (when missing), books and cards in `store`.
    public func load(into store: any RoloStore) async throws -> FixtureSummary {
        fatalError("contract stub: implemented on branch fixtures")
    }
}

/// What a fixture load created.
public struct FixtureSummary: Sendable, Codable, Equatable {
    public var users: Int
    public var books: Int
    public var cards: Int

    public init(users: Int = 0, books: Int = 0, cards: Int = 0) {
        self.users = users; self.books = books; self.cards = cards
    }
}

/// A fixture folder that cannot be loaded, with the file at fault.
public struct FixtureError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) { self.path = path; self.reason = reason }

    public var description: String { "\(path): \(reason)" }
}
