import Foundation
import PostgresNIO
import RoloStore

extension PostgresStore {
    /// The columns `collectionInfo(_:)` reads, for `collections c JOIN users u ON u.id = c.owner_id`.
    static let collectionColumns = """
        c.id, u.name, c.path, c.kind, c.display_name, c.description, c.sync_seq, c.created, c.modified
        """
    static let collectionColumnCount = 9

    @discardableResult
    public func createCollection(owner: String, path: [String], kind: CollectionKind,
                                 displayName: String?, description: String?) async throws -> CollectionInfo {
        try CollectionRules.validateNewPath(path)
        let now = self.now
        do {
            return try await transaction { connection in
                guard let ownerID = try await Self.userID(connection, name: owner) else { throw StoreError.noSuchUser }
                var parentID: Int64?
                if path.count > 1 {
                    guard let parent = try await Self.collectionRow(connection, ownerID: ownerID, path: Array(path.dropLast())) else {
                        throw StoreError.parentNotFound
                    }
                    try CollectionRules.checkNesting(parent: parent.kind, child: kind)
                    parentID = parent.id
                }
                if try await Self.collectionRow(connection, ownerID: ownerID, path: path) != nil { throw StoreError.alreadyExists }
                let id = try await Self.insertCollection(connection, ownerID: ownerID, parentID: parentID, path: path, kind: kind,
                                                         displayName: displayName, description: description, now: now)
                if parentID == nil { try await Self.bumpHome(connection, userID: ownerID) }
                guard let info = try await Self.collectionInfo(connection, id: id) else { throw StoreError.notFound }
                return info
            }
        } catch where Self.isUniqueViolation(error) {
            throw StoreError.alreadyExists
        }
    }

    public func collection(owner: String, path: [String]) async throws -> CollectionInfo? {
        let found = try await readCollection(owner: owner, path: path)
        // The request's reads of the book may come from the card cache at this seq.
        if let found { LookupAhead.current?.noteBook(found) }
        return found
    }

    private func readCollection(owner: String, path: [String]) async throws -> CollectionInfo? {
        guard !path.isEmpty else { return nil }
        // Read with the login's stamp when the request named it (`LookupAhead`).
        if let found = LookupAhead.current?.take(owner: owner, path: path, name: nil) { return found.member?.collection }
        let joined = Self.joined(path)
        // Every request on a book starts here: on the request's event loop's own connection
        // when there is one (`rowsOnLoop`), as the login's stamp before it.
        if let rows = await rowsOnLoop(CollectionByPathSQL.self, [PostgresData(string: owner), PostgresData(string: joined)]) {
            return try rows.first.map { row in
                var columns = Columns(legacyPrepared: row)
                return try Self.collectionInfo(&columns)
            }
        }
        return try await autocommit { connection in
            try await connection.first(CollectionByPathSQL.self, owner, joined).map { row in
                var columns = Columns(row)
                return try Self.collectionInfo(&columns)
            }
        }
    }

    /// Every request on a collection starts with it.
    enum CollectionByPathSQL: PreparedSQL {
        static let sql = """
            SELECT \(collectionColumns) FROM users u JOIN collections c ON c.owner_id = u.id WHERE u.name = $1 AND c.path = $2
            """
    }

    public func collection(id: Int64) async throws -> CollectionInfo? {
        try await autocommit { connection in try await Self.collectionInfo(connection, id: id) }
    }

    public func childCollections(owner: String, parentPath: [String]) async throws -> [CollectionInfo] {
        try await autocommit { connection in
            guard let ownerID = try await Self.userID(connection, name: owner) else { return [] }
            let rows: [PostgresRow]
            if parentPath.isEmpty {
                rows = try await connection.rows("""
                    SELECT \(unescaped: Self.collectionColumns) FROM collections c JOIN users u ON u.id = c.owner_id
                    WHERE c.owner_id = \(ownerID) AND c.parent_id IS NULL ORDER BY c.path
                    """)
            } else {
                guard let parent = try await Self.collectionRow(connection, ownerID: ownerID, path: parentPath) else { return [] }
                rows = try await connection.rows("""
                    SELECT \(unescaped: Self.collectionColumns) FROM collections c JOIN users u ON u.id = c.owner_id
                    WHERE c.parent_id = \(parent.id) ORDER BY c.path
                    """)
            }
            return try rows.map { row in
                var columns = Columns(row)
                return try Self.collectionInfo(&columns)
            }
        }
    }

    public func updateCollection(id: Int64, displayName: String??, description: String??) async throws {
        try await changingSignInOrBooks {
            let now = self.now
            try await transaction { connection in
                guard try await Self.collectionInfo(connection, id: id) != nil else { throw StoreError.notFound }
                if let displayName {
                    try await connection.execute("UPDATE collections SET display_name = \(displayName) WHERE id = \(id)")
                    // Mounts are named after the book.
                    try await Self.bumpShareeHomes(connection, bookID: id)
                }
                if let description {
                    try await connection.execute("UPDATE collections SET description = \(description) WHERE id = \(id)")
                }
                try await connection.execute("UPDATE collections SET modified = \(now) WHERE id = \(id)")
            }
        }
    }

    public func deleteCollection(id: Int64) async throws {
        try await changingSignInOrBooks {
            try await transaction { connection in
                // The owner's home and every home that mounts it list one collection less.
                try await Self.bumpShareeHomes(connection, bookID: id)
                try await connection.execute("""
                    UPDATE users SET home_seq = home_seq + 1 WHERE id = (SELECT owner_id FROM collections WHERE id = \(id))
                    """)
                if try await connection.rows("DELETE FROM collections WHERE id = \(id) RETURNING 1").isEmpty {
                    throw StoreError.notFound
                }
            }
        }
    }

    // MARK: Helpers shared by the other extensions

    struct CollectionRow {
        var id: Int64
        var kind: CollectionKind
        var syncSeq: Int64
    }

    static func joined(_ path: [String]) -> String { path.joined(separator: "/") }

    static func collectionRow(_ connection: Connection, ownerID: Int64, path: [String]) async throws -> CollectionRow? {
        let joined = joined(path)
        guard let row = try await connection.first("""
            SELECT id, kind, sync_seq FROM collections WHERE owner_id = \(ownerID) AND path = \(joined)
            """) else { return nil }
        let (id, kind, seq) = try row.decode((Int64, String, Int64).self)
        return CollectionRow(id: id, kind: CollectionKind(rawValue: kind) ?? .plain, syncSeq: seq)
    }

    static func collectionInfo(_ connection: Connection, id: Int64) async throws -> CollectionInfo? {
        try await connection.first("""
            SELECT \(unescaped: collectionColumns) FROM collections c JOIN users u ON u.id = c.owner_id WHERE c.id = \(id)
            """).map { row in
            var columns = Columns(row)
            return try collectionInfo(&columns)
        }
    }

    @discardableResult
    static func insertCollection(_ connection: Connection, ownerID: Int64, parentID: Int64?, path: [String], kind: CollectionKind,
                                 displayName: String?, description: String?, now: Double) async throws -> Int64 {
        let joined = joined(path)
        guard let row = try await connection.first("""
            INSERT INTO collections (owner_id, parent_id, path, kind, display_name, description, created, modified, push_topic)
            VALUES (\(ownerID), \(parentID), \(joined), \(kind.rawValue), \(displayName), \(description), \(now), \(now),
                    \(StoreRandom.token128()))
            RETURNING id
            """) else { throw StoreError.notFound }
        return try row.decode(Int64.self)
    }

    /// Reads the columns in the order of `collectionColumns`.
    static func collectionInfo(_ columns: inout Columns) throws -> CollectionInfo {
        let id = try columns.next(Int64.self)
        let owner = try columns.next(String.self)
        let path = try columns.next(String.self)
        let kind = try columns.next(String.self)
        let displayName = try columns.next(String?.self)
        let description = try columns.next(String?.self)
        let syncSeq = try columns.next(Int64.self)
        let created = try columns.date()
        let modified = try columns.date()
        return CollectionInfo(id: id, owner: owner,
                              path: path.split(separator: "/", omittingEmptySubsequences: false).map(String.init),
                              kind: CollectionKind(rawValue: kind) ?? .plain, displayName: displayName,
                              description: description, syncSeq: syncSeq, created: created, modified: modified)
    }
}
