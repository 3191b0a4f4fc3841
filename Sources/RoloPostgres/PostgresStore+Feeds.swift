import Foundation
import PostgresNIO
import RoloStore

/// Feeds at secret URLs (issue 33): the `feeds` table of migration v5-feeds, as SQLite's v12-feeds.
extension PostgresStore: FeedStore {
    public func createFeed(user: String, kind: FeedKind, books: [String]) async throws -> NewFeed {
        let secret = FeedSecret.make()
        guard let hash = FeedSecret.hash(secret) else { throw StoreError.invalid("feed secret") }
        let now = self.now
        let kindText = kind.rawValue
        let id = try await transaction { connection -> Int64 in
            guard let userID = try await Self.userID(connection, name: user) else { throw StoreError.noSuchUser }
            let bookIDs = try await Self.bookIDs(connection, userID: userID, user: user, names: books)
            let booksText = FeedSecret.booksText(Array(Set(bookIDs)))
            guard let row = try await connection.first("""
                INSERT INTO feeds (user_id, kind, secret_hash, books, created)
                VALUES (\(userID), \(kindText), \(hash), \(booksText), \(now)) RETURNING id
                """) else { throw StoreError.notFound }
            return try row.decode(Int64.self)
        }
        guard let feed = try await feeds(user: user).first(where: { $0.id == id }) else { throw StoreError.notFound }
        return NewFeed(feed: feed, secret: secret)
    }

    public func feeds(user: String) async throws -> [Feed] {
        try await autocommit { connection in
            guard let userID = try await Self.userID(connection, name: user) else { throw StoreError.noSuchUser }
            let rows = try await connection.rows("""
                SELECT id, kind, books, created, last_read FROM feeds WHERE user_id = \(userID) ORDER BY created, id
                """)
            var feeds: [Feed] = []
            for row in rows {
                if let feed = try await Self.feed(connection, row, user: user, userID: userID) { feeds.append(feed) }
            }
            return feeds
        }
    }

    public func revokeFeed(user: String, id: Int64) async throws {
        try await transaction { connection in
            guard let userID = try await Self.userID(connection, name: user) else { throw StoreError.noSuchUser }
            if try await connection.rows("DELETE FROM feeds WHERE id = \(id) AND user_id = \(userID) RETURNING 1").isEmpty {
                throw StoreError.notFound
            }
        }
    }

    public func feed(secret: String) async throws -> Feed? {
        guard let hash = FeedSecret.hash(secret) else { return nil }
        return try await autocommit { connection in
            guard let row = try await connection.first("""
                SELECT f.id, f.kind, f.books, f.created, f.last_read, u.name, u.id
                FROM feeds f JOIN users u ON u.id = f.user_id WHERE f.secret_hash = \(hash) AND NOT u.disabled
                """) else { return nil }
            var columns = Columns(row, from: 5)
            let user = try columns.next(String.self)
            let userID = try columns.next(Int64.self)
            return try await Self.feed(connection, row, user: user, userID: userID)
        }
    }

    public func noteFeedRead(id: Int64, at date: Date) async throws {
        let at = date.timeIntervalSince1970
        try await autocommit { connection in
            try await connection.execute("UPDATE feeds SET last_read = \(at) WHERE id = \(id)")
        }
    }

    /// A feed row (id, kind, books, created, last_read) with its books' names as the user sees them.
    private static func feed(_ connection: Connection, _ row: PostgresRow, user: String, userID: Int64) async throws -> Feed? {
        var columns = Columns(row)
        let id = try columns.next(Int64.self)
        guard let kind = FeedKind(rawValue: try columns.next(String.self)) else { return nil }
        let bookIDs = FeedSecret.bookIDs(try columns.next(String.self))
        let created = try columns.date()
        let lastRead = try columns.optionalDate()
        var names: [String] = []
        for bookID in bookIDs {
            if let row = try await connection.first("""
                SELECT CASE WHEN c.owner_id = \(userID) THEN c.path ELSE s.mount_name END
                FROM collections c LEFT JOIN shares s ON s.collection_id = c.id AND s.sharee_id = \(userID) AND s.state = 'accepted'
                WHERE c.id = \(bookID) AND (c.owner_id = \(userID) OR s.id IS NOT NULL)
                """) {
                names.append(try row.decode(String.self))
            }
        }
        return Feed(id: id, user: user, kind: kind, bookIDs: bookIDs, bookNames: names.sorted(), created: created, lastRead: lastRead)
    }
}
