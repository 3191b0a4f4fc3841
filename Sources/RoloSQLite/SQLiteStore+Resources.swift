import Foundation
import RoloStore
import GRDB

extension SQLiteStore {
    static let infoColumns = "name, content_type, etag, size, modified, seq"
    /// Resources with their bodies (`data`), which live in their own table.
    static let withBodies = "resources JOIN resource_bodies ON resource_id = id"

    public func putResource(collectionID: Int64, name: String, data: Data, contentType: String,
                            card: CardMetadata?, precondition: WritePrecondition) async throws -> PutResult {
        try Naming.validateResource(name)
        let write = ResourceWrite(name: name, data: data, contentType: contentType, card: card)
        let result = try await groupCommit.write(bytes: data.count) { db in
            let collection = try Self.collectionRow(db, id: collectionID)
            let existing = try Self.checkWrite(db, collectionID: collectionID, name: name, card: card, precondition: precondition)
            let seq = collection.syncSeq + 1
            let now = self.now
            let statements = ResourceStatements(db)
            var pendingEntries = write.entries.count
            if let existing {
                pendingEntries = try statements.replace(id: existing.id, with: write, collectionID: collectionID, seq: seq, now: now)
            } else if try !statements.insert(write, collectionID: collectionID, seq: seq, now: now) {
                throw StoreError.alreadyExists // unreachable: name and UID were checked above
            }
            try Self.setSyncSeq(db, collectionID: collectionID, seq: seq, now: now)
            self.pendingIndex.add(pendingEntries)
            return PutResult(etag: write.etag, created: existing == nil, seq: seq)
        }
        bookChanges.publish(collectionID: collectionID, seq: result.seq)
        if result.created { substringIndex.cardCreated(in: collectionID) }
        return result
    }

    public func deleteResource(collectionID: Int64, name: String, precondition: WritePrecondition) async throws {
        let author = ChangeAuthor.current
        let seq = try await groupCommit.write(bytes: 0) { db in
            let collection = try Self.collectionRow(db, id: collectionID)
            let existing = try Self.existingResource(db, collectionID: collectionID, name: name)
            try precondition.check(currentETag: existing?.etag)
            guard let existing else { throw StoreError.notFound }
            let seq = collection.syncSeq + 1
            let now = self.now
            try Self.removeResource(db, collectionID: collectionID, id: existing.id, name: name, seq: seq, now: now,
                                    author: author)
            try Self.setSyncSeq(db, collectionID: collectionID, seq: seq, now: now)
            // Its trigram row is now stale: counted so that deletes alone also bring a merge.
            self.pendingIndex.add(1)
            return seq
        }
        bookChanges.publish(collectionID: collectionID, seq: seq)
    }

    public func resource(collectionID: Int64, name: String) async throws -> StoredResource? {
        try readOnCallingThread(.storedResource, bind: { $0.add(collectionID); $0.add(name) }, row: Self.storedResource(from:))
    }

    public func resource(owner: String, collectionPath: [String], name: String) async throws -> LocatedResource? {
        try resourceImmediately(owner: owner, collectionPath: collectionPath, name: name)
    }

    /// The inline GET's read, on the calling thread: one row-reader lookup for a card found,
    /// two for a miss.
    public func readInline(owner: String, collectionPath: [String], name: String, stampOf user: String,
                           done: @escaping @Sendable (InlineRead?) -> Void) {
        done(try? inlineRead(owner: owner, collectionPath: collectionPath, name: name, stampOf: user))
    }

    /// A card found is read with the stamp in one statement; a miss reads the stamp alone.
    private func inlineRead(owner: String, collectionPath: [String], name: String, stampOf user: String) throws -> InlineRead {
        if !collectionPath.isEmpty {
            let path = Self.joined(collectionPath)
            let hit = try readOnCallingThread(.locatedResourceAndStamp, bind: {
                $0.add(owner); $0.add(path); $0.add(name); $0.add(user)
            }) { columns in
                InlineRead(found: Self.locatedResource(from: columns),
                           stamp: columns.optionalText(RowReader.Query.stampColumn))
            }
            if let hit { return hit }
        }
        return InlineRead(found: nil, stamp: try accountPasswordStamp(user: user))
    }

    /// One prepared JOIN on a row reader (`readOnCallingThread`): collection and resource in
    /// one snapshot, without waiting for a connection.
    public func resourceImmediately(owner: String, collectionPath: [String], name: String) throws -> LocatedResource? {
        guard !collectionPath.isEmpty else { return nil }
        let path = Self.joined(collectionPath)
        return try readOnCallingThread(.locatedResource, bind: { $0.add(owner); $0.add(path); $0.add(name) },
                                       row: Self.locatedResource(from:))
    }

    /// A row of `locatedResource` (or `locatedResourceAndStamp`).
    private static func locatedResource(from columns: ColumnReader) -> LocatedResource {
        LocatedResource(collection: collectionInfo(from: columns),
                        resource: storedResource(from: columns.advanced(by: RowReader.Query.collectionColumnCount)))
    }

    public func resourceInfo(collectionID: Int64, name: String) async throws -> ResourceInfo? {
        try readOnCallingThread(.resourceInfo, bind: { $0.add(collectionID); $0.add(name) }, row: Self.resourceInfo(from:))
    }

    public func collectionMember(owner: String, path: [String], name: String) async throws -> CollectionMember? {
        guard !path.isEmpty else { return nil }
        let joinedPath = Self.joined(path)
        return try readOnCallingThread(.collectionMember, bind: { $0.add(owner); $0.add(joinedPath); $0.add(name) }) { columns in
            let resource = columns.advanced(by: RowReader.Query.collectionColumnCount)
            return CollectionMember(collection: Self.collectionInfo(from: columns),
                                    resource: resource.isNull(0) ? nil : Self.resourceInfo(from: resource))
        }
    }

    public func resourceName(collectionID: Int64, uid: String) async throws -> String? {
        try await pool.read { db in try Self.resourceName(db, collectionID: collectionID, uid: uid) }
    }

    // MARK: Helpers shared with import

    static func resourceName(_ db: Database, collectionID: Int64, uid: String) throws -> String? {
        try db.cachedStatement(sql: "SELECT name FROM resources WHERE collection_id = ? AND uid = ?")
            .firstRow(binding: { $0.add(collectionID); $0.add(uid) }, read: { $0.text(0) })
    }

    static func existingResource(_ db: Database, collectionID: Int64, name: String) throws -> ExistingResource? {
        try db.cachedStatement(sql: "SELECT id, etag, uid FROM resources WHERE collection_id = ? AND name = ?")
            .firstRow(binding: { $0.add(collectionID); $0.add(name) },
                      read: { ExistingResource(id: $0.int64(0), etag: $0.text(1), uid: $0.optionalText(2)) })
    }

    /// What a write of `card` as `name` finds, judged by `WriteRules`.
    static func checkWrite(_ db: Database, collectionID: Int64, name: String, card: CardMetadata?,
                           precondition: WritePrecondition) throws -> ExistingResource? {
        let existing = try existingResource(db, collectionID: collectionID, name: name)
        let holder = try card.flatMap { try resourceName(db, collectionID: collectionID, uid: $0.uid) }
        try WriteRules.checkWrite(name: name, card: card, precondition: precondition, existing: existing, uidHolder: holder)
        return existing
    }

    /// Deletes the resource (index and member rows cascade) and its dead properties, and
    /// leaves a tombstone in the change log.
    static func removeResource(_ db: Database, collectionID: Int64, id: Int64, name: String, seq: Int64, now: Double,
                               author: ChangeAuthor?) throws {
        try keepReplacedBody(db, resourceID: id, newETag: nil, newParts: [])
        try db.cachedStatement(sql: "DELETE FROM resources WHERE id = ?").execute(arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM dead_properties WHERE collection_id = ? AND resource = ?")
            .execute(arguments: [collectionID, name])
        try recordDeletion(db, collectionID: collectionID, name: name, seq: seq, now: now, author: author)
    }

    /// Before the card `resourceID` is replaced by `newETag`'s body (or deleted: nil), its
    /// version's text moves into the history, which reads a card's current version from the
    /// card itself (schema v17): its skeleton (`VersionBody`) unless the history holds that
    /// ETag already, and its large properties by `keepReplacedParts`. A body shorter than a
    /// part has none and is its own skeleton, so it is copied in SQL and never read into
    /// Swift: reading it, splitting it and binding it back through GRDB's rows was half of
    /// this (1,112 of the writer's 18,027 samples in an If-Match run, issue 34).
    static func keepReplacedBody(_ db: Database, resourceID: Int64, newETag: String?, newParts: [VersionBody.Part]) throws {
        let unkept = """
            FROM resources r JOIN resource_bodies b ON b.resource_id = r.id
            WHERE r.id = ?1 AND r.etag IS NOT ?2 AND NOT EXISTS (SELECT 1 FROM card_version_bodies v WHERE v.etag = r.etag)
            """
        try db.cachedStatement(sql: """
            INSERT INTO card_version_bodies (etag, data) SELECT r.etag, b.data \(unkept) AND length(b.data) < \(VersionBody.partSize)
            """).run { $0.add(resourceID); $0.add(newETag) }
        if db.changesCount == 0, let (etag, body) = try db.cachedStatement(sql: """
            SELECT r.etag, b.data \(unkept) AND length(b.data) >= \(VersionBody.partSize)
            """).firstRow(binding: { $0.add(resourceID); $0.add(newETag) }, read: { ($0.text(0), $0.data(1)) }) {
            try db.cachedStatement(sql: "INSERT INTO card_version_bodies (etag, data) VALUES (?, ?)")
                .run { $0.add(etag); $0.add(VersionBody(body).skeleton) }
        }
        try keepReplacedParts(db, resourceID: resourceID, newETag: newETag, newParts: newParts)
    }

    /// Before the card `resourceID` is replaced (by `newETag`'s body, whose parts are
    /// `newParts`) or deleted (nil): each large property of its body that the new body does
    /// not hold moves into the history's parts, copied out of the old body by where it
    /// starts, since the card's versions name it (`VersionBody`). Most cards have none: one
    /// look-up by the old ETag.
    private static func keepReplacedParts(_ db: Database, resourceID: Int64, newETag: String?, newParts: [VersionBody.Part]) throws {
        var held: [(etag: String, hash: String, start: Int64, length: Int64)] = []
        try db.cachedStatement(sql: """
            SELECT r.etag, r.hash, r.start, r.length FROM resources old JOIN card_version_part_refs r ON r.etag = old.etag
            WHERE old.id = ? AND r.start IS NOT NULL
            """).forEachRow(binding: { $0.add(resourceID) }) { row in
            held.append((row.text(0), row.text(1), row.int64(2), row.int64(3)))
            return true
        }
        for part in held {
            guard part.etag != newETag, !newParts.contains(where: { $0.hash == part.hash }) else { continue }
            try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO card_version_parts (hash, data)
                SELECT ?, substr(data, ? + 1, ?) FROM resource_bodies WHERE resource_id = ?
                """).run { $0.add(part.hash); $0.add(part.start); $0.add(part.length); $0.add(resourceID) }
        }
    }

    static func setSyncSeq(_ db: Database, collectionID: Int64, seq: Int64, now: Double) throws {
        try db.cachedStatement(sql: "UPDATE collections SET sync_seq = ?, modified = ? WHERE id = ?")
            .execute(arguments: [seq, now, collectionID])
    }

    /// Reads the columns in the order of `infoColumns`.
    static func resourceInfo(from row: some ColumnSource) -> ResourceInfo {
        ResourceInfo(name: row.text(0), contentType: row.text(1), etag: row.text(2), size: row.int(3),
                     modified: Date(timeIntervalSince1970: row.double(4)), seq: row.int64(5))
    }

    /// Reads `infoColumns` and then `data`.
    static func storedResource(from row: some ColumnSource) -> StoredResource {
        StoredResource(info: resourceInfo(from: row), data: row.data(6))
    }

    /// Reads `bodyColumns(upTo:)`: a NULL body is one left in the store.
    static func storedResource(from row: ColumnReader, limited: Bool) -> StoredResource {
        guard limited, row.isNull(6) else { return storedResource(from: row) }
        return StoredResource(info: resourceInfo(from: row), data: Data(), bodyLeftOut: true)
    }
}

extension Statement {
    /// Binds arguments without GRDB's per-call validation, which costs more than the insert
    /// itself on import hot paths; callers pass exactly one value per placeholder.
    func bound(_ arguments: StatementArguments) -> Statement {
        setUncheckedArguments(arguments)
        return self
    }
}
