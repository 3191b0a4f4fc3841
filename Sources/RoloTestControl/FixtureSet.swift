import CardIndexing
import DAV
import Foundation
import RoloStore

/// Users, address books and cards read from a folder, so a test harness can start Rolo
/// with known data and reset to it between tests.
///
/// Layout: `DIR/<user>/<book>/*.vcf` (a file may hold several cards, vCard 2.1, 3.0 or 4.0),
/// and optionally `DIR/<user>/password` (first line; without it the password is the user
/// name). Hidden entries and other files are ignored. Cards are stored as a client's PUT
/// would store them (`CardImporter`); a card without UID gets one digested from its bytes,
/// so every run gives the same UIDs, resource names and ETags.
/// Reading validates everything first, so a broken fixture fails before the store changes.
public struct FixtureSet: Sendable {
    public let directory: String
    /// The parsed folder, users in name order.
    let users: [FixtureUser]

    struct FixtureUser: Sendable {
        var name: String
        var password: String
        var books: [FixtureBook]
    }

    struct FixtureBook: Sendable {
        var name: String
        var cards: [CardImporter.PreparedCard]
    }

    /// Reads and validates the folder; throws `FixtureError` naming the bad file.
    public init(directory: String) throws {
        self.directory = directory
        let root = URL(fileURLWithPath: directory, isDirectory: true)
        guard Self.isDirectory(root) else { throw FixtureError(path: directory, reason: "not a folder") }
        users = try Self.subfolders(of: root).map(Self.readUser)
    }

    /// Creates the users (when missing), books and cards in `store`.
    public func load(into store: any CardStore & AccountStore & SharingStore) async throws -> FixtureSummary {
        var summary = FixtureSummary()
        let existing = Set(try await store.listUsers())
        for user in users {
            if !existing.contains(user.name) { try await store.createUser(name: user.name, password: user.password) }
            summary.users += 1
            for book in user.books {
                let collection: CollectionInfo
                if let found = try await store.collection(owner: user.name, path: [book.name]) {
                    guard found.kind == .addressBook else {
                        throw FixtureError(path: "\(directory)/\(user.name)/\(book.name)",
                                           reason: "a plain collection of that name already exists")
                    }
                    collection = found
                } else {
                    collection = try await store.createCollection(owner: user.name, path: [book.name], kind: .addressBook,
                                                                  displayName: book.name, description: nil)
                }
                summary.books += 1
                summary.cards += try await CardImporter.store(book.cards, collectionID: collection.id, in: store,
                                                              batchSize: 1000).total
            }
        }
        return summary
    }

    /// Each user of the set with the password the load gives it, in name order.
    public var logins: [(user: String, password: String)] { users.map { ($0.name, $0.password) } }

    /// Cards in the set, for progress and rate figures.
    public var cardCount: Int { users.reduce(0) { $0 + $1.books.reduce(0) { $0 + $1.cards.count } } }

    private static func readUser(_ folder: URL) throws -> FixtureUser {
        let name = try validName(folder)
        let passwordFile = folder.appendingPathComponent("password")
        var password = name
        if FileManager.default.fileExists(atPath: passwordFile.path) {
            guard let text = try? String(contentsOf: passwordFile, encoding: .utf8) else {
                throw FixtureError(path: passwordFile.path, reason: "cannot be read as UTF-8 text")
            }
            password = String(text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? "")
            guard !password.isEmpty else { throw FixtureError(path: passwordFile.path, reason: "the first line is empty") }
        }
        return FixtureUser(name: name, password: password, books: try subfolders(of: folder).map(readBook))
    }

    /// Parses the book's files on every core (parsing is most of a fixture load); the first
    /// bad file in name order is the one reported.
    private static func readBook(_ folder: URL) throws -> FixtureBook {
        let files = try entries(of: folder).filter { $0.pathExtension.lowercased() == "vcf" && !isDirectory($0) }
        let results = ParseResults(count: files.count)
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            results.set(index, Result { try readCards(files[index]) })
        }
        return FixtureBook(name: try validName(folder), cards: try results.all.flatMap { try $0.get() })
    }

    private static func readCards(_ file: URL) throws -> [CardImporter.PreparedCard] {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw FixtureError(path: file.path, reason: "cannot be read")
        }
        let blocks = CardImporter.cards(in: [UInt8](data))
        guard !blocks.isEmpty else { throw FixtureError(path: file.path, reason: "no BEGIN:VCARD ... END:VCARD block") }
        let maxSize = DAVConfiguration().maxResourceSize
        return try blocks.enumerated().map { index, bytes in
            do {
                return try CardImporter.prepare(bytes, maxSize: maxSize, uids: .contentDigest)
            } catch {
                throw FixtureError(path: file.path, reason: "card \(index + 1): \(error)")
            }
        }
    }

    /// One slot per file, filled from concurrent workers.
    private final class ParseResults: @unchecked Sendable {
        private let lock = NSLock()
        private var slots: [Result<[CardImporter.PreparedCard], any Error>?]

        init(count: Int) { slots = Array(repeating: nil, count: count) }

        func set(_ index: Int, _ result: Result<[CardImporter.PreparedCard], any Error>) {
            lock.withLock { slots[index] = result }
        }

        var all: [Result<[CardImporter.PreparedCard], any Error>] { lock.withLock { slots.compactMap { $0 } } }
    }

    /// A folder name usable as a user or book name (one URL path segment, no control characters).
    private static func validName(_ folder: URL) throws -> String {
        let name = folder.lastPathComponent
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw FixtureError(path: folder.path, reason: "the name contains a control character")
        }
        return name
    }

    /// Visible entries in name order, so loads are reproducible.
    private static func entries(of folder: URL) throws -> [URL] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: folder.path)
                .filter { !$0.hasPrefix(".") }
                .sorted()
                .map { folder.appendingPathComponent($0) }
        } catch {
            throw FixtureError(path: folder.path, reason: "cannot be listed")
        }
    }

    private static func subfolders(of folder: URL) throws -> [URL] {
        try entries(of: folder).filter(isDirectory)
    }

    private static func isDirectory(_ url: URL) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) && isFolder.boolValue
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
