import Foundation
import RoloStore
import GRDB

extension SQLiteStore {
    static let collectionColumns = """
        c.id, u.name, c.path, c.kind, c.display_name, c.description, c.sync_seq, c.created, c.modified
        """

    @discardableResult
    public func createCollection(owner: String, path: [String], kind: CollectionKind,
                                 displayName: String?, description: String?) async throws -> CollectionInfo {
        try CollectionRules.validateNewPath(path)
        return try await pool.write { db in
            guard let ownerID = try Self.userID(db, name: owner) else { throw StoreError.noSuchUser }
            var parentID: Int64?
            if path.count > 1 {
                guard let parent = try Self.collectionRow(db, ownerID: ownerID, path: Array(path.dropLast())) else {
                    throw StoreError.parentNotFound
                }
                try CollectionRules.checkNesting(parent: parent.kind, child: kind)
                parentID = parent.id
            }
            if try Self.collectionRow(db, ownerID: ownerID, path: path) != nil { throw StoreError.alreadyExists }
            let id = try Self.insertCollection(db, ownerID: ownerID, parentID: parentID, path: path, kind: kind,
                                               displayName: displayName, description: description, now: self.now)
            if parentID == nil { try Self.bumpHome(db, userID: ownerID) }
            return try Self.collectionInfo(db, id: id)!
        }
    }

    public func collection(owner: String, path: [String]) async throws -> CollectionInfo? {
        guard !path.isEmpty else { return nil }
        let path = Self.joined(path)
        return try readOnCallingThread(.collection, bind: { $0.add(owner); $0.add(path) }, row: Self.collectionInfo(from:))
    }

    public func collection(id: Int64) async throws -> CollectionInfo? {
        try await pool.read { db in try Self.collectionInfo(db, id: id) }
    }

    public func childCollections(owner: String, parentPath: [String]) async throws -> [CollectionInfo] {
        try await pool.read { db in
            guard let ownerID = try Self.userID(db, name: owner) else { return [] }
            let sql = "SELECT \(Self.collectionColumns) FROM collections c JOIN users u ON u.id = c.owner_id"
            if parentPath.isEmpty {
                return try Row.fetchAll(db, sql: sql + " WHERE c.owner_id = ? AND c.parent_id IS NULL ORDER BY c.path",
                                      arguments: [ownerID]).map(Self.collectionInfo(from:))
            }
            guard let parent = try Self.collectionRow(db, ownerID: ownerID, path: parentPath) else { return [] }
            return try Row.fetchAll(db, sql: sql + " WHERE c.parent_id = ? ORDER BY c.path", arguments: [parent.id])
                .map(Self.collectionInfo(from:))
        }
    }

    public func updateCollection(id: Int64, displayName: String??, description: String??) async throws {
        try await pool.write { db in
            guard try Self.collectionInfo(db, id: id) != nil else { throw StoreError.notFound }
            if let displayName {
                try db.execute(sql: "UPDATE collections SET display_name = ? WHERE id = ?", arguments: [displayName, id])
                // Mounts are named after the book.
                try Self.bumpShareeHomes(db, bookID: id)
            }
            if let description {
                try db.execute(sql: "UPDATE collections SET description = ? WHERE id = ?", arguments: [description, id])
            }
            try db.execute(sql: "UPDATE collections SET modified = ? WHERE id = ?", arguments: [self.now, id])
        }
    }

    public func deleteCollection(id: Int64) async throws {
        try await pool.write { db in
            // The owner's home and every home that mounts it list one collection less.
            try Self.bumpShareeHomes(db, bookID: id)
            try db.execute(sql: "UPDATE users SET home_seq = home_seq + 1 WHERE id = (SELECT owner_id FROM collections WHERE id = ?)",
                           arguments: [id])
            try db.execute(sql: "DELETE FROM collections WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw StoreError.notFound }
        }
    }

    // MARK: Helpers shared by the other extensions

    struct CollectionRow {
        var id: Int64
        var kind: CollectionKind
        var syncSeq: Int64
    }

    static func joined(_ path: [String]) -> String { path.joined(separator: "/") }

    static func collectionRow(_ db: Database, ownerID: Int64, path: [String]) throws -> CollectionRow? {
        let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT id, kind, sync_seq FROM collections WHERE owner_id = ? AND path = ?
            """), arguments: [ownerID, joined(path)])
        return row.map { CollectionRow(id: $0[0], kind: CollectionKind(rawValue: $0[1]) ?? .plain, syncSeq: $0[2]) }
    }

    /// The collection `id`, or `StoreError.notFound`.
    static func collectionRow(_ db: Database, id: Int64) throws -> CollectionRow {
        let row = try db.cachedStatement(sql: "SELECT id, kind, sync_seq FROM collections WHERE id = ?").firstRow(
            binding: { $0.add(id) },
            read: { CollectionRow(id: $0.int64(0), kind: CollectionKind(rawValue: $0.text(1)) ?? .plain, syncSeq: $0.int64(2)) })
        guard let row else { throw StoreError.notFound }
        return row
    }

    static func collectionInfo(_ db: Database, owner: String, path: [String]) throws -> CollectionInfo? {
        try Row.fetchOne(db.cachedStatement(sql: """
            SELECT \(collectionColumns) FROM collections c JOIN users u ON u.id = c.owner_id
            WHERE u.name = ? AND c.path = ?
            """), arguments: [owner, joined(path)]).map(collectionInfo(from:))
    }

    static func collectionInfo(_ db: Database, id: Int64) throws -> CollectionInfo? {
        try Row.fetchOne(db.cachedStatement(sql: """
            SELECT \(collectionColumns) FROM collections c JOIN users u ON u.id = c.owner_id WHERE c.id = ?
            """), arguments: [id]).map(collectionInfo(from:))
    }

    @discardableResult
    static func insertCollection(_ db: Database, ownerID: Int64, parentID: Int64?, path: [String], kind: CollectionKind,
                                 displayName: String?, description: String?, now: Double) throws -> Int64 {
        try db.execute(sql: """
            INSERT INTO collections (owner_id, parent_id, path, kind, display_name, description, created, modified)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [ownerID, parentID, joined(path), kind.rawValue, displayName, description, now, now])
        return db.lastInsertedRowID
    }

    /// Reads the columns in the order of `collectionColumns`.
    static func collectionInfo(from row: some ColumnSource) -> CollectionInfo {
        CollectionInfo(
            id: row.int64(0), owner: row.text(1),
            path: row.text(2).split(separator: "/", omittingEmptySubsequences: false).map(String.init),
            kind: CollectionKind(rawValue: row.text(3)) ?? .plain, displayName: row.optionalText(4),
            description: row.optionalText(5), syncSeq: row.int64(6),
            created: Date(timeIntervalSince1970: row.double(7)), modified: Date(timeIntervalSince1970: row.double(8)))
    }
}
