import Foundation
import GRDB
import RoloStore

/// Feeds at secret URLs (issue 33): the `feeds` table of migration v12-feeds.
extension SQLiteStore: FeedStore {
    public func createFeed(user: String, kind: FeedKind, books: [String]) async throws -> NewFeed {
        let secret = FeedSecret.make()
        guard let hash = FeedSecret.hash(secret) else { throw StoreError.invalid("feed secret") }
        let id = try await pool.write { db -> Int64 in
            guard let userID = try Self.userID(db, name: user) else { throw StoreError.noSuchUser }
            let bookIDs = try Self.bookIDs(db, userID: userID, user: user, names: books)
            try db.execute(sql: """
                INSERT INTO feeds (user_id, kind, secret_hash, books, created) VALUES (?, ?, ?, ?, ?)
                """, arguments: [userID, kind.rawValue, hash, FeedSecret.booksText(Array(Set(bookIDs))), self.now])
            return db.lastInsertedRowID
        }
        guard let feed = try await feeds(user: user).first(where: { $0.id == id }) else { throw StoreError.notFound }
        return NewFeed(feed: feed, secret: secret)
    }

    public func feeds(user: String) async throws -> [Feed] {
        try await pool.read { db in
            guard let userID = try Self.userID(db, name: user) else { throw StoreError.noSuchUser }
            let rows = try Row.fetchAll(db, sql: """
                SELECT id, kind, books, created, last_read FROM feeds WHERE user_id = ? ORDER BY created, id
                """, arguments: [userID])
            return try rows.compactMap { row in try Self.feed(db, row, user: user, userID: userID) }
        }
    }

    public func revokeFeed(user: String, id: Int64) async throws {
        try await pool.write { db in
            guard let userID = try Self.userID(db, name: user) else { throw StoreError.noSuchUser }
            try db.execute(sql: "DELETE FROM feeds WHERE id = ? AND user_id = ?", arguments: [id, userID])
            if db.changesCount == 0 { throw StoreError.notFound }
        }
    }

    public func feed(secret: String) async throws -> Feed? {
        guard let hash = FeedSecret.hash(secret) else { return nil }
        return try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT f.id, f.kind, f.books, f.created, f.last_read, u.name, u.id
                FROM feeds f JOIN users u ON u.id = f.user_id WHERE f.secret_hash = ? AND u.disabled = 0
                """, arguments: [hash]) else { return nil }
            return try Self.feed(db, row, user: row[5], userID: row[6])
        }
    }

    public func noteFeedRead(id: Int64, at date: Date) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE feeds SET last_read = ? WHERE id = ?", arguments: [date.timeIntervalSince1970, id])
        }
    }

    /// A feed row (id, kind, books, created, last_read) with its books' names as the user sees them.
    private static func feed(_ db: Database, _ row: Row, user: String, userID: Int64) throws -> Feed? {
        guard let kind = FeedKind(rawValue: row[1]) else { return nil }
        let bookIDs = FeedSecret.bookIDs(row[2])
        var names: [String] = []
        for bookID in bookIDs {
            let name = try String.fetchOne(db, sql: """
                SELECT CASE WHEN c.owner_id = ? THEN c.path ELSE s.mount_name END
                FROM collections c LEFT JOIN shares s ON s.collection_id = c.id AND s.sharee_id = ? AND s.state = 'accepted'
                WHERE c.id = ? AND (c.owner_id = ? OR s.id IS NOT NULL)
                """, arguments: [userID, userID, bookID, userID])
            if let name { names.append(name) }
        }
        return Feed(id: row[0], user: user, kind: kind, bookIDs: bookIDs, bookNames: names.sorted(),
                    created: Date(timeIntervalSince1970: row[3]), lastRead: (row[4] as Double?).map(Date.init(timeIntervalSince1970:)))
    }
}
