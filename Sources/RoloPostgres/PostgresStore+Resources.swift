import Foundation
import NIOPosix
import PostgresNIO
import RoloStore

extension PostgresStore {
    /// The columns `resourceInfo(_:)` reads, for `resources r`.
    static let infoColumns = "r.name, r.content_type, r.etag, r.size, r.modified, r.seq"

    public func putResource(collectionID: Int64, name: String, data: Data, contentType: String,
                            card: CardMetadata?, precondition: WritePrecondition) async throws -> PutResult {
        try Naming.validateResource(name)
        let write = ResourceWrite(name: name, data: data, contentType: contentType, card: card)
        // Gathered with the PUTs to the same book that come meanwhile (`WriteBatches`).
        return try await putBatched(collectionID: collectionID, write: write, precondition: precondition)
    }

    public func deleteResource(collectionID: Int64, name: String, precondition: WritePrecondition) async throws {
        let author = ChangeAuthor.current
        let now = self.now
        let seq = try await transaction { connection in
            let seq = try await Self.nextSeq(connection, collectionID: collectionID, now: now)
            let existing = try await Self.existingResource(connection, collectionID: collectionID, name: name)
            try precondition.check(currentETag: existing?.etag)
            guard let existing else { throw StoreError.notFound }
            try await Self.removeResource(connection, collectionID: collectionID, id: existing.id, name: name, seq: seq, now: now,
                                          author: author)
            return seq
        }
        await committed(collectionID: collectionID, seq: seq)
    }

    public func resource(collectionID: Int64, name: String) async throws -> StoredResource? {
        try await autocommit { connection in
            try await connection.first("""
                SELECT \(unescaped: Self.infoColumns), r.data FROM resources r
                WHERE r.collection_id = \(collectionID) AND r.name = \(name)
                """).map { row in
                var columns = Columns(row)
                return try Self.storedResource(&columns)
            }
        }
    }

    /// A GET's lookup: owner, collection path, name.
    enum ResourceByPathSQL: PreparedSQL {
        static let sql = """
            SELECT \(collectionColumns), \(infoColumns), r.data
            FROM users u JOIN collections c ON c.owner_id = u.id JOIN resources r ON r.collection_id = c.id
            WHERE u.name = $1 AND c.path = $2 AND r.name = $3
            """
    }

    /// The inline GET's read: the login's password stamp beside `ResourceByPathSQL`'s row
    /// (NULLs when there is no such card), so one round trip where the full path takes two.
    enum InlineReadSQL: PreparedSQL {
        static let sql = """
            SELECT (SELECT password_hash FROM users WHERE name = $4 AND NOT disabled AND NOT app_passwords_only), x.*
            FROM (SELECT 1) one LEFT JOIN LATERAL (\(ResourceByPathSQL.sql)) x ON true
            """
    }

    /// `InlineReadSQL` for a batch (`LoopReadConnections`): owners, paths, names and logins
    /// as four arrays, a row for each element in their order (each finds one card at most:
    /// user names, a user's paths and a book's names are unique). The `LIMIT 1` keeps the
    /// lateral read a probe of the three unique indexes per element: without it, the generic
    /// plan joined the whole of `resources` by hash (10 ms at 1,000 cards, against 0.1).
    enum InlineReadBatchSQL: GatheredSQL {
        static let columns = 4
        static let waitsForItsReaders = true
        static let sql = """
            SELECT (SELECT password_hash FROM users WHERE name = q.login AND NOT disabled AND NOT app_passwords_only), x.*
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS q(owner, path, name, login, i)
            LEFT JOIN LATERAL (
                SELECT \(collectionColumns), \(infoColumns), r.data
                FROM users u JOIN collections c ON c.owner_id = u.id JOIN resources r ON r.collection_id = c.id
                WHERE u.name = q.owner AND c.path = q.path AND r.name = q.name LIMIT 1) x ON true
            ORDER BY q.i
            """
    }

    public func readInline(owner: String, collectionPath: [String], name: String, stampOf user: String,
                           done: @escaping @Sendable (InlineRead?) -> Void) {
        guard !collectionPath.isEmpty else { return done(nil) }
        let path = Self.joined(collectionPath)
        let server = primary.currentIndex
        guard let cached = cardCache.read(owner: owner, path: path, name: name, stampOf: user, server: server) else {
            return readInlineFromDatabase(owner: owner, path: path, name: name, stampOf: user, done: done)
        }
        guard cached.needsFence else { return done(cached.answer) }
        // With other processes: from memory once a fence says nothing newer was missed.
        noticesFence.after { [self] fenced in
            if fenced, let current = cardCache.read(owner: owner, path: path, name: name, stampOf: user, server: server) {
                return done(current.answer)
            }
            readInlineFromDatabase(owner: owner, path: path, name: name, stampOf: user, done: done)
        }
    }

    /// `readInline`'s read of the database, kept in the card cache.
    private func readInlineFromDatabase(owner: String, path: String, name: String, stampOf user: String,
                                        done: @escaping @Sendable (InlineRead?) -> Void) {
        let ticket = cardCache.ticket()
        let done: @Sendable (InlineRead?) -> Void = { [cardCache] read in
            if let read, let ticket { cardCache.keep(read, owner: owner, path: path, name: name, stampOf: user, ticket: ticket) }
            done(read)
        }
        // On an event loop (a server's GET), on that loop's own connection; else, or while it
        // opens, through the pool.
        if readOnLoop(owner: owner, path: path, name: name, stampOf: user, done: { done(try? $0.get()) }) { return }
        Task {
            done(try? await autocommit { connection in
                try await connection.first(InlineReadSQL.self, owner, path, name, user).map { try Self.inlineRead(Columns($0)) }
            })
        }
    }

    /// `InlineReadSQL` on the calling event loop's connection (`LoopReadConnections`),
    /// gathered with the other reads of the loop: false, and `done` never called, when the
    /// caller is on no event loop or its loop has no connection open.
    func readOnLoop(owner: String, path: String, name: String, stampOf user: String,
                    done: @escaping @Sendable (Result<InlineRead, any Error>) -> Void) -> Bool {
        guard let loop = MultiThreadedEventLoopGroup.currentEventLoop else { return false }
        return loopReads.read(
            InlineReadBatchSQL.self, on: loop, server: primary.currentIndex, bound: loopReadBound,
            open: { [self] in try connectionConfiguration() }, values: [owner, path, name, user]
        ) { result in
            done(Result {
                guard let row = try result.get() else { throw StoreError.unavailable("no row for a read") }
                return try Self.inlineRead(Columns(legacyPrepared: row))
            })
        }
    }

    /// `readOnLoop` awaited (the login's stamp of a request the inline GET did not answer):
    /// nil when the caller is on no event loop or the read there failed, and the caller then
    /// asks the pool.
    func loopRead(owner: String, path: String, name: String, stampOf user: String) async -> InlineRead? {
        let result: Result<InlineRead, any Error>? = await withCheckedContinuation { continuation in
            if !readOnLoop(owner: owner, path: path, name: name, stampOf: user, done: { continuation.resume(returning: $0) }) {
                continuation.resume(returning: nil)
            }
        }
        return try? result?.get()
    }

    /// `InlineReadSQL`'s row: the stamp, and the card with its book when there is one.
    private static func inlineRead(_ row: Columns) throws -> InlineRead {
        var columns = row
        let stamp = try columns.next(String?.self)
        guard !columns.nextIsNull else { return InlineRead(found: nil, stamp: stamp) }
        return InlineRead(found: LocatedResource(collection: try collectionInfo(&columns), resource: try storedResource(&columns)),
                          stamp: stamp)
    }

    /// Collection and resource in one statement.
    public func resource(owner: String, collectionPath: [String], name: String) async throws -> LocatedResource? {
        guard !collectionPath.isEmpty else { return nil }
        let path = Self.joined(collectionPath)
        return try await autocommit { connection in
            try await connection.first(ResourceByPathSQL.self, owner, path, name).map { row in
                var columns = Columns(row)
                return LocatedResource(collection: try Self.collectionInfo(&columns), resource: try Self.storedResource(&columns))
            }
        }
    }

    public func resourceInfo(collectionID: Int64, name: String) async throws -> ResourceInfo? {
        try await autocommit { connection in
            try await connection.first("""
                SELECT \(unescaped: Self.infoColumns) FROM resources r WHERE r.collection_id = \(collectionID) AND r.name = \(name)
                """).map { row in
                var columns = Columns(row)
                return try Self.resourceInfo(&columns)
            }
        }
    }

    /// A write's lookup: the collection by owner and path, and its member by name.
    enum CollectionMemberSQL: PreparedSQL {
        static let sql = collectionMemberSQL(owner: "$1", path: "$2", name: "$3")
    }

    /// `CollectionMemberSQL` for the owner, path and name the expressions give (parameters,
    /// or a gathered statement's columns).
    static func collectionMemberSQL(owner: String, path: String, name: String) -> String {
        """
        SELECT \(collectionColumns), \(infoColumns), r.id, r.uid
        FROM users u JOIN collections c ON c.owner_id = u.id
        LEFT JOIN resources r ON r.collection_id = c.id AND r.name = \(name)
        WHERE u.name = \(owner) AND c.path = \(path)
        """
    }

    /// The collection and, when present, its member `name`, in one statement. Every PUT and
    /// DELETE asks it: on the request's event loop's own connection when there is one
    /// (`rowsOnLoop`), else through the pool.
    public func collectionMember(owner: String, path: [String], name: String) async throws -> CollectionMember? {
        let found = try await readCollectionMember(owner: owner, path: path, name: name)
        // The request's reads of the book may come from the card cache at this seq.
        if let found { LookupAhead.current?.noteBook(found.collection) }
        return found
    }

    private func readCollectionMember(owner: String, path: [String], name: String) async throws -> CollectionMember? {
        guard !path.isEmpty else { return nil }
        // Read with the login's stamp when the request named it (`LookupAhead`).
        if let found = LookupAhead.current?.take(owner: owner, path: path, name: name) { return found.member }
        let joined = Self.joined(path)
        if let rows = await rowsOnLoop(CollectionMemberSQL.self, [PostgresData(string: owner), PostgresData(string: joined),
                                                                  PostgresData(string: name)]) {
            return try rows.first.map { try Self.collectionMember(Columns(legacyPrepared: $0)) }
        }
        return try await autocommit { connection in
            try await connection.first(CollectionMemberSQL.self, owner, joined, name).map { try Self.collectionMember(Columns($0)) }
        }
    }

    /// The login's password stamp (as `PasswordStampSQL`) beside `CollectionMemberSQL`'s row
    /// (NULLs when there is no such collection) and `homeHasLocks`: a request's stamp with its
    /// `LookupAhead`, one round trip where they took two. Gathered (`LoopReadConnections`):
    /// the requests that arrive in one turn of an event loop (the PUTs of clients whose last
    /// PUTs one batch acknowledged) sign in together. Owners, paths, names and logins as four
    /// arrays, a row for each element in their order; `LIMIT 1` keeps the lateral read a probe
    /// of the unique indexes under the generic plan, as in `InlineReadBatchSQL`. A statement
    /// of its own, not the GETs' with columns more: a lateral read more in theirs cost the
    /// cluster 12 µs a GET (`get-bench`).
    enum StampAndMemberSQL: GatheredSQL {
        static let columns = 4
        static let sql = """
            SELECT (SELECT password_hash FROM users WHERE name = q.login AND NOT disabled AND NOT app_passwords_only), m.*,
                   \(homeHasLocks(home: "q.owner"))
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS q(owner, path, name, login, i)
            LEFT JOIN LATERAL (
                \(collectionMemberSQL(owner: "q.owner", path: "q.path", name: "q.name")) LIMIT 1) m ON true
            ORDER BY q.i
            """
    }

    /// The last column of `StampAndMemberSQL` and `AppPasswordAndMemberSQL`: whether the
    /// owner's home (`home`, the owner's parameter or column) holds any lock rows, expired
    /// ones included. Locks are rare, so a write's check of them (`writeLocks`) mostly needs
    /// no read of its own (`LookupAhead.homeHeldNoLocks`).
    static func homeHasLocks(home: String) -> String { "EXISTS (SELECT 1 FROM locks WHERE home = \(home))" }

    /// The columns of `CollectionMemberSQL`.
    static let collectionMemberColumnCount = collectionColumnCount + 8

    /// `StampAndMemberSQL` on the calling event loop's own connection, gathered: the stamp, with what
    /// was found for `ahead`. Nil when the loop has no connection or the read failed (the
    /// caller then reads the stamp alone, and the lookup is made when the request asks it).
    /// A write that may go unread (`LookupAhead.writesUnread`) off the event loops (an
    /// in-process server's) reads it through the pool instead, so that its book is kept for
    /// the next (`CardCache.writeTarget`).
    func stampReadingAhead(_ ahead: LookupAhead, user: String) async -> String?? {
        let values = [ahead.owner, Self.joined(ahead.path), ahead.name ?? "", user]
        let ticket = ahead.writesUnread ? cardCache.ticket() : nil
        let read: PostgresRow?? = await withCheckedContinuation { continuation in
            guard let loop = MultiThreadedEventLoopGroup.currentEventLoop,
                  loopReads.read(StampAndMemberSQL.self, on: loop, server: primary.currentIndex, bound: loopReadBound,
                                 open: { [self] in try connectionConfiguration() }, values: values,
                                 done: { continuation.resume(returning: try? $0.get()) })
            else { return continuation.resume(returning: nil) }
        }
        let columns: Columns
        if let row = read {
            guard let row else { return nil }
            columns = Columns(legacyPrepared: row)
        } else if ticket != nil, let row = try? await autocommit({ connection in
            try await connection.first(StampAndMemberSQL.self, [values[0]], [values[1]], [values[2]], [values[3]])
        }) {
            columns = Columns(row)
        } else {
            return nil
        }
        guard let (stamp, found, locks) = try? Self.stampAndMember(columns) else { return nil }
        ahead.fill(found, homeHasLocks: locks)
        // The next such writes to this login's book go unread (`CardCache.writeTarget`).
        if let ticket, let stamp, !locks, let book = found.member?.collection {
            cardCache.keepWriteTarget(book, login: user, path: values[1], stamp: stamp, ticket: ticket)
        }
        return .some(stamp)
    }

    static func stampAndMember(_ row: Columns) throws -> (String?, LookupAhead.Found, Bool) {
        var columns = row
        let stamp = try columns.next(String?.self)
        let (found, locks) = try memberAndHomeLocks(columns)
        return (stamp, found, locks)
    }

    /// `CollectionMemberSQL`'s columns (NULLs: no such collection) then `homeHasLocks`, from
    /// where `columns` stands.
    static func memberAndHomeLocks(_ row: Columns) throws -> (LookupAhead.Found, Bool) {
        var columns = row
        var found = LookupAhead.Found(member: nil)
        if !columns.nextIsNull {
            let (member, memberRow) = try collectionMemberAndRow(columns)
            found = LookupAhead.Found(member: member, memberRow: memberRow)
        }
        columns.skip(collectionMemberColumnCount)
        return (found, try columns.next(Bool.self))
    }

    /// `CollectionMemberSQL`'s row.
    static func collectionMember(_ row: Columns) throws -> CollectionMember {
        try collectionMemberAndRow(row).member
    }

    /// `CollectionMemberSQL`'s row, with the member's key and UID for the request's write
    /// (`LookupAhead.takeMemberRow`).
    static func collectionMemberAndRow(_ row: Columns) throws -> (member: CollectionMember, row: LookupAhead.MemberRow?) {
        var columns = row
        let collection = try collectionInfo(&columns)
        guard !columns.nextIsNull else { return (CollectionMember(collection: collection, resource: nil), nil) }
        let info = try resourceInfo(&columns)
        let id = try columns.next(Int64.self)
        let uid = try columns.next(String?.self)
        return (CollectionMember(collection: collection, resource: info),
                LookupAhead.MemberRow(collectionID: collection.id, id: id, name: info.name, etag: info.etag, uid: uid, seq: info.seq))
    }

    public func resourceName(collectionID: Int64, uid: String) async throws -> String? {
        try await autocommit { connection in try await Self.resourceName(connection, collectionID: collectionID, uid: uid) }
    }

    // MARK: Helpers shared with import and transfer

    /// Moves the collection's seq on and returns it, locking the collection's row until
    /// the transaction ends; `StoreError.notFound` when there is no such collection.
    static func nextSeq(_ connection: Connection, collectionID: Int64, now: Double) async throws -> Int64 {
        guard let row = try await connection.first(NextSeqSQL.self, now, collectionID) else { throw StoreError.notFound }
        return try row.decode(Int64.self)
    }

    enum NextSeqSQL: PreparedSQL {
        static let sql = "UPDATE collections SET sync_seq = sync_seq + 1, modified = $1 WHERE id = $2 RETURNING sync_seq"
    }

    static func resourceName(_ connection: Connection, collectionID: Int64, uid: String) async throws -> String? {
        try await connection.first(ResourceNameByUIDSQL.self, collectionID, uid.withoutNUL)?.decode(String.self)
    }

    enum ResourceNameByUIDSQL: PreparedSQL {
        static let sql = "SELECT name FROM resources WHERE collection_id = $1 AND md5(uid) = md5($2) AND uid = $2"
    }

    static func existingResource(_ connection: Connection, collectionID: Int64, name: String) async throws -> ExistingResource? {
        guard let row = try await connection.first(ExistingResourceSQL.self, collectionID, name) else { return nil }
        let (id, etag, uid) = try row.decode((Int64, String, String?).self)
        return ExistingResource(id: id, etag: etag, uid: uid)
    }

    /// What a write of `card` as `name` finds, read in one statement (the resource of that
    /// name, and the name holding the card's UID) and judged by `WriteRules`.
    static func checkWrite(_ connection: Connection, collectionID: Int64, name: String, card: CardMetadata?,
                           precondition: WritePrecondition) async throws -> ExistingResource? {
        // A resource without a card has no UID to check: "" matches no card (a card's UID is
        // never empty; an imported one without gets one).
        let uid = card?.uid
        var existing: ExistingResource?
        var holder: String?
        if let row = try await connection.first(WriteTargetSQL.self, collectionID, name, uid?.withoutNUL ?? "") {
            let (id, etag, storedUID, owner) = try row.decode((Int64?, String?, String?, String?).self)
            if let id, let etag { existing = ExistingResource(id: id, etag: etag, uid: storedUID) }
            holder = uid == nil ? nil : owner
        }
        // UIDs are stored without NUL (PostgreSQL text holds none): compare them so.
        var stored = card
        stored?.uid = card?.uid.withoutNUL ?? ""
        try WriteRules.checkWrite(name: name, card: stored, precondition: precondition, existing: existing, uidHolder: holder)
        return existing
    }

    enum WriteTargetSQL: PreparedSQL {
        static let sql = """
            SELECT e.id, e.etag, e.uid,
                   (SELECT name FROM resources WHERE collection_id = $1 AND md5(uid) = md5($3) AND uid = $3 LIMIT 1)
            FROM (SELECT 1) one LEFT JOIN resources e ON e.collection_id = $1 AND e.name = $2
            """
    }

    enum ExistingResourceSQL: PreparedSQL {
        static let sql = "SELECT id, etag, uid FROM resources WHERE collection_id = $1 AND name = $2"
    }

    /// Inserts a new resource with its index, member and change rows in one statement;
    /// nil (and nothing written) when the book already has a resource with this name or UID.
    /// `movingBookSeq`: the statement also makes `seq` the book's (`bookSeqSQL`).
    static func insert(_ connection: Connection, _ write: ResourceWrite, collectionID: Int64, seq: Int64,
                       now: Double, movingBookSeq: Bool = false) async throws -> Int64? {
        var sql = SQLBuilder()
        let resource = """
            INSERT INTO resources (collection_id, name, content_type, etag, size, modified, seq, uid, kind, data)
            VALUES (\(sql.bind(collectionID)), \(sql.bind(write.name)), \(sql.bind(write.contentType)), \(sql.bind(write.etag)),
                    \(sql.bind(Int64(write.data.count))), \(sql.bind(now)), \(sql.bind(seq)), \(bindOptional(&sql, write.card?.uid.withoutNUL)),
                    \(bindOptional(&sql, write.card?.kind)), \(try sql.bind(write.data)))
            ON CONFLICT DO NOTHING RETURNING id
            """
        sql.append("WITH r AS (\(resource)), ")
        appendRows(of: write, resourceID: "(SELECT id FROM r)", from: "r", collectionID: collectionID, seq: seq, now: now, to: &sql)
        if movingBookSeq { sql.append(bookSeqSQL(&sql, collectionID: collectionID, seq: seq, now: now, from: "r")) }
        sql.append(" SELECT id FROM r")
        let form = writeForm(replacing: false, listed: write.card?.listing != nil, movingBookSeq: movingBookSeq)
        return try await connection.rows(sql.query, as: form).first?.decode(Int64.self)
    }

    // The forms of the card writes, prepared (`AssembledSQL`): planning one of these long
    // statements took PostgreSQL as long as running it (0.25 of 0.55 ms for a replace).
    enum InsertSQL: AssembledSQL {}
    enum InsertListedSQL: AssembledSQL {}
    enum ReplaceSQL: AssembledSQL {}
    enum ReplaceListedSQL: AssembledSQL {}
    // The same, moving the book's seq too.
    enum InsertMovingSeqSQL: AssembledSQL {}
    enum InsertListedMovingSeqSQL: AssembledSQL {}
    enum ReplaceMovingSeqSQL: AssembledSQL {}
    enum ReplaceListedMovingSeqSQL: AssembledSQL {}

    private static func writeForm(replacing: Bool, listed: Bool, movingBookSeq: Bool) -> any AssembledSQL.Type {
        switch (replacing, listed, movingBookSeq) {
        case (false, false, false): InsertSQL.self
        case (false, true, false): InsertListedSQL.self
        case (true, false, false): ReplaceSQL.self
        case (true, true, false): ReplaceListedSQL.self
        case (false, false, true): InsertMovingSeqSQL.self
        case (false, true, true): InsertListedMovingSeqSQL.self
        case (true, false, true): ReplaceMovingSeqSQL.self
        case (true, true, true): ReplaceListedMovingSeqSQL.self
        }
    }

    /// A CTE (after a comma) making `seq` the book's seq and `now` its time when `from` (the
    /// written resource) has a row: a batch's last write moves the book's seq in its own
    /// statement, one round trip fewer than `BookSeqSQL` after it (`WriteBatches`). The
    /// book's trigger notifies at the statement's end, the exclusion set before it.
    private static func bookSeqSQL(_ sql: inout SQLBuilder, collectionID: Int64, seq: Int64, now: Double, from: String) -> String {
        """
        ,
        book AS (
            UPDATE collections SET sync_seq = \(sql.bind(seq)), modified = \(sql.bind(now))
            FROM \(from) WHERE collections.id = \(sql.bind(collectionID)))
        """
    }

    /// Replaces the resource `id` (same name) and its rows, in one statement: the old index
    /// and member rows are deleted by the snapshot the statement started with, which does
    /// not hold the new ones.
    static func replace(_ connection: Connection, id: Int64, with write: ResourceWrite, collectionID: Int64, seq: Int64,
                        now: Double, movingBookSeq: Bool = false) async throws {
        var sql = SQLBuilder()
        let idPlaceholder = sql.bind(id)
        let resource = """
            UPDATE resources SET content_type = \(sql.bind(write.contentType)), etag = \(sql.bind(write.etag)),
                size = \(sql.bind(Int64(write.data.count))), modified = \(sql.bind(now)), seq = \(sql.bind(seq)),
                uid = \(bindOptional(&sql, write.card?.uid.withoutNUL)), kind = \(bindOptional(&sql, write.card?.kind)),
                data = \(try sql.bind(write.data))
            WHERE id = \(idPlaceholder) RETURNING id
            """
        sql.append("""
            WITH r AS (\(resource)),
            \(keptPartsSQL(&sql, id: idPlaceholder, newETag: write.etag, newParts: write.versionBody.parts)),
            old_members AS (DELETE FROM group_members WHERE resource_id = \(idPlaceholder)),
            """)
        // A listing row is replaced in place (`appendRows` upserts it); a card written
        // without one loses the old one.
        if write.card?.listing == nil {
            sql.append("old_listing AS (DELETE FROM card_listings WHERE resource_id = \(idPlaceholder)),\n")
        }
        appendRows(of: write, resourceID: "(SELECT id FROM r)", from: "r", collectionID: collectionID, seq: seq, now: now,
                   replacing: idPlaceholder, to: &sql)
        if movingBookSeq { sql.append(bookSeqSQL(&sql, collectionID: collectionID, seq: seq, now: now, from: "r")) }
        sql.append(" SELECT id FROM r")
        _ = try await connection.rows(sql.query, as: writeForm(replacing: true, listed: write.card?.listing != nil,
                                                               movingBookSeq: movingBookSeq))
    }

    /// CTEs writing the card's index and member rows and its change row, for the resource
    /// the CTE `from` returns (no rows: nothing written). `replacing`: the placeholder of the
    /// resource's id when the write replaces it, whose index rows the card no longer has are
    /// deleted (`sameIndexEntry`).
    private static func appendRows(of write: ResourceWrite, resourceID: String, from: String, collectionID: Int64, seq: Int64,
                                   now: Double, replacing: String? = nil, to sql: inout SQLBuilder) {
        let entries = write.entries
        let collection = sql.bind(collectionID)
        let positions = sql.bind(entries.indices.map { Int32($0) })
        let properties = sql.bind(entries.map(\.property))
        let values = sql.bind(entries.map { $0.value.withoutNUL })
        let asciiFolds = sql.bind(entries.map { $0.asciiFold.withoutNUL })
        let unicodeFolds = sql.bind(entries.map { $0.unicode.withoutNUL })
        let members = write.card?.members ?? []
        let memberPositions = sql.bind(members.indices.map { Int32($0) })
        let memberUIDs = sql.bind(members.map(\.withoutNUL))
        // The version's body (issue 31, `VersionBody`), which the change row's trigger names.
        let version = write.versionBody
        let versionETag = sql.bind(write.etag)
        let skeleton = (try? sql.bind(version.skeleton)) ?? "NULL"
        // Where its large properties are in the card, which holds them now: they move into
        // the history only when a write replaces them (`keptPartsSQL`).
        sql.append("""
            version_body AS (
                INSERT INTO card_version_bodies (etag, data) SELECT \(versionETag), \(skeleton)::BYTEA FROM \(from)
                ON CONFLICT (etag) DO NOTHING),
            """)
        let partHashes = sql.bind(version.parts.map(\.hash))
        let starts = sql.bind(version.parts.map { Int64($0.start) })
        let lengths = sql.bind(version.parts.map { Int64($0.data.count) })
        sql.append("""
            version_part_refs AS (
                INSERT INTO card_version_part_refs (etag, hash, start, length)
                SELECT \(versionETag), p.hash, p.start, p.length
                FROM \(from), unnest(\(partHashes)::TEXT[], \(starts)::BIGINT[], \(lengths)::BIGINT[]) AS p(hash, start, length)
                ON CONFLICT (etag, hash) DO UPDATE SET start = excluded.start, length = excluded.length
                WHERE card_version_part_refs.start IS NULL),
            """)
        sql.append("""
            new_entries AS (
                SELECT * FROM unnest(\(positions)::INTEGER[], \(properties)::TEXT[], \(values)::TEXT[], \(asciiFolds)::TEXT[],
                                     \(unicodeFolds)::TEXT[]) AS e(position, property, value, ascii, unicode)),
            \(replacing.map { id in """
                old_entries AS (
                    DELETE FROM card_index c WHERE c.resource_id = \(id)
                    AND NOT EXISTS (SELECT 1 FROM new_entries e WHERE \(sameIndexEntry))),
                """ } ?? "")
            entries AS (
                INSERT INTO card_index (resource_id, position, collection_id, property, value, value_ascii, value_unicode)
                SELECT \(resourceID), e.position, \(collection), e.property, e.value, e.ascii, e.unicode
                FROM \(from), new_entries e
                \(replacing.map { "WHERE NOT EXISTS (SELECT 1 FROM card_index c WHERE c.resource_id = \($0) AND \(sameIndexEntry))" } ?? "")),
            members AS (
                INSERT INTO group_members (resource_id, position, collection_id, member_uid)
                SELECT \(resourceID), m.position, \(collection), m.uid
                FROM \(from), unnest(\(memberPositions)::INTEGER[], \(memberUIDs)::TEXT[]) AS m(position, uid)),
            \(listingSQL(of: write, resourceID: resourceID, from: from, collection: collection, sql: &sql))
            change AS (
                \(recordChangeSQL(&sql, collection: collection, seq: seq, name: write.name,
                                  version: (etag: write.etag, contentType: write.contentType), now: now,
                                  author: write.author, from: from)))
            """)
    }

    /// A CTE writing the card's list row (and a comma), upserted: a replace keeps the row's
    /// place by resource; empty when the card has no listing fields.
    private static func listingSQL(of write: ResourceWrite, resourceID: String, from: String, collection: String,
                                   sql: inout SQLBuilder) -> String {
        guard let card = write.card, let listing = card.listing else { return "" }
        return """
            listing AS (
                INSERT INTO card_listings (collection_id, is_group, sort_key, name, resource_id, display_name, organization,
                                           email, phone, has_photo, search_text)
                SELECT \(collection), \(sql.bind(card.kind == "group")), \(sql.bind(listing.sortKey.withoutNUL)),
                       \(sql.bind(write.name)), \(resourceID), \(sql.bind(listing.displayName.withoutNUL)),
                       \(bindOptional(&sql, listing.organization?.withoutNUL))::TEXT, \(bindOptional(&sql, listing.email?.withoutNUL))::TEXT,
                       \(bindOptional(&sql, listing.phone?.withoutNUL))::TEXT, \(sql.bind(listing.hasPhoto)),
                       \(sql.bind(listing.searchText.withoutNUL))
                FROM \(from)
                \(listingConflictSQL)),
            """
    }

    /// A card's index rows that an update keeps: the old row `c` (`card_index`) is the new
    /// entry `e` (`new_entries`), at the same place. An update deletes only the rows the card
    /// no longer has and writes only its new ones: an edit of one field rewrote every row of
    /// the card, each in three btrees and the trigram index, about 35 µs a row (issue 34).
    static let sameIndexEntry = """
        e.position = c.position AND e.property = c.property AND e.value = c.value AND e.ascii = c.value_ascii \
        AND e.unicode = c.value_unicode
        """

    /// A list row written over the card's old one, left alone when it is the same (an edit of
    /// a field the list does not show writes no new row version, nor index entries for it).
    static let listingConflictSQL = """
        ON CONFLICT (resource_id) DO UPDATE SET collection_id = excluded.collection_id, is_group = excluded.is_group,
            sort_key = excluded.sort_key, name = excluded.name, display_name = excluded.display_name,
            organization = excluded.organization, email = excluded.email, phone = excluded.phone,
            has_photo = excluded.has_photo, search_text = excluded.search_text
        WHERE (card_listings.collection_id, card_listings.is_group, card_listings.sort_key, card_listings.name,
               card_listings.display_name, card_listings.organization, card_listings.email, card_listings.phone,
               card_listings.has_photo, card_listings.search_text)
              IS DISTINCT FROM (excluded.collection_id, excluded.is_group, excluded.sort_key, excluded.name,
                                excluded.display_name, excluded.organization, excluded.email, excluded.phone,
                                excluded.has_photo, excluded.search_text)
        """

    /// Deletes the resource (index and member rows cascade) and its dead properties, and
    /// leaves a tombstone in the change log.
    static func removeResource(_ connection: Connection, collectionID: Int64, id: Int64, name: String, seq: Int64, now: Double,
                               author: ChangeAuthor?) async throws {
        var sql = SQLBuilder()
        let collection = sql.bind(collectionID)
        let idPlaceholder = sql.bind(id)
        sql.append("""
            WITH gone AS (DELETE FROM resources WHERE id = \(idPlaceholder)),
            \(keptPartsSQL(&sql, id: idPlaceholder, newETag: nil, newParts: [])),
            properties AS (DELETE FROM dead_properties WHERE collection_id = \(collection) AND resource = \(sql.bind(name)))
            \(recordChangeSQL(&sql, collection: collection, seq: seq, name: name, version: nil, now: now, author: author, from: nil))
            """)
        try await connection.execute(sql.query)
    }

    /// A CTE run before the card `id` is replaced (by `newETag`'s body, whose parts are
    /// `newParts`) or deleted (nil): each large property of its body that the new body does
    /// not hold moves into the history's parts, copied out of the old body (the statement's
    /// snapshot still holds it) by where it starts, since the card's versions name it
    /// (`VersionBody`).
    static func keptPartsSQL(_ sql: inout SQLBuilder, id: String, newETag: String?, newParts: [VersionBody.Part]) -> String {
        """
        kept_parts AS (
            INSERT INTO card_version_parts (hash, data)
            SELECT p.hash, substring(old.data FROM (p.start + 1)::INTEGER FOR p.length::INTEGER)
            FROM resources old JOIN card_version_part_refs p ON p.etag = old.etag
            WHERE old.id = \(id) AND p.start IS NOT NULL AND old.etag IS DISTINCT FROM \(bindOptional(&sql, newETag))::TEXT
                  AND NOT (p.hash = ANY(\(sql.bind(newParts.map(\.hash)))::TEXT[]))
            ON CONFLICT (hash) DO NOTHING)
        """
    }

    /// Makes `seq` the latest change of `name`, replacing the previous one (whose version the
    /// trigger keeps): the card's new version (`version`), or its deletion (nil). Selected
    /// from `from` (a CTE: no row, no change) when given.
    static func recordChangeSQL(_ sql: inout SQLBuilder, collection: String, seq: Int64, name: String,
                                version: (etag: String, contentType: String)?, now: Double,
                                author: ChangeAuthor?, from: String?) -> String {
        // Typed: a NULL's type is not known from a select list.
        let values = """
            \(collection)::BIGINT, \(sql.bind(seq))::BIGINT, \(sql.bind(name))::TEXT, \(sql.bind(version == nil))::BOOLEAN,
            \(sql.bind(now))::DOUBLE PRECISION, \(bindOptional(&sql, author?.user))::TEXT,
            \(bindOptional(&sql, author?.credentialID))::BIGINT, \(bindOptional(&sql, version?.etag))::TEXT,
            \(bindOptional(&sql, version?.contentType))::TEXT
            """
        return """
            INSERT INTO changes (collection_id, seq, name, deleted, at, actor_user, actor_credential, etag, content_type)
            \(from.map { "SELECT \(values) FROM \($0)" } ?? "VALUES (\(values))")
            ON CONFLICT (collection_id, name) DO UPDATE SET \(changeUpdateSQL)
            """
    }

    /// What an upsert of a change row sets: every column but the key. A new seq moves the
    /// version the row held into `card_versions` (the trigger).
    static let changeUpdateSQL = """
        seq = excluded.seq, deleted = excluded.deleted, at = excluded.at, actor_user = excluded.actor_user, \
        actor_credential = excluded.actor_credential, etag = excluded.etag, content_type = excluded.content_type
        """

    /// Reads the columns in the order of `infoColumns`.
    static func resourceInfo(_ columns: inout Columns) throws -> ResourceInfo {
        let name = try columns.next(String.self)
        let contentType = try columns.next(String.self)
        let etag = try columns.next(String.self)
        let size = try columns.next(Int64.self)
        let modified = try columns.date()
        let seq = try columns.next(Int64.self)
        return ResourceInfo(name: name, contentType: contentType, etag: etag, size: Int(size), modified: modified, seq: seq)
    }

    /// Reads `infoColumns` and then the body; a NULL body is one left in the store.
    static func storedResource(_ columns: inout Columns) throws -> StoredResource {
        let info = try resourceInfo(&columns)
        guard let data = try columns.next(Data?.self) else { return StoredResource(info: info, data: Data(), bodyLeftOut: true) }
        return StoredResource(info: info, data: data)
    }
}

/// Binds an optional value (NULL for nil) and returns its placeholder.
func bindOptional<Value: PostgresDynamicTypeEncodable>(_ sql: inout SQLBuilder, _ value: Value?) -> String {
    guard let value else { return sql.bindNull() }
    return sql.bind(value)
}
