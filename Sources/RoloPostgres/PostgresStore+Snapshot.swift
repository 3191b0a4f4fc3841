import Foundation
import PostgresNIO
import RoloStore

/// `rolo migrate` from and into PostgreSQL (`StoreSnapshot.swift`): pages read by key in one
/// REPEATABLE READ transaction, restores written one transaction per batch; ids are
/// inserted as they were, so the identity sequences are moved past them at the end.
extension PostgresStore: StoreSnapshotting {
    /// A connection of its own, outside the pool, in one REPEATABLE READ transaction: every
    /// page reads the database as it was at the first, whatever other processes write.
    public func snapshotReader() async throws -> any StoreSnapshotReading {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: try connectionConfiguration(), id: 1,
                                                              logger: logger)
        } catch {
            throw StoreError.unavailable(Self.describe(error))
        }
        let reader = PostgresSnapshotReader(connection: Connection(connection: connection, logger: logger))
        do {
            try await reader.connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            // Counting a big table may take longer than a request's statement is allowed.
            try await reader.connection.execute("SET LOCAL statement_timeout = 0")
        } catch {
            await reader.close()
            throw Self.mapped(error)
        }
        return reader
    }

    static func snapshotCounts(_ connection: Connection) async throws -> [SnapshotTable: Int] {
        var counts: [SnapshotTable: Int] = [:]
        for table in SnapshotTable.allCases {
            let row = try await connection.first(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(Self.snapshotSource(table).table)"))
            counts[table] = Int(try row?.decode(Int64.self) ?? 0)
        }
        return counts
    }

    public func holdsData() async throws -> Bool {
        try await autocommit { connection in
            try await connection.first("""
                SELECT EXISTS (SELECT 1 FROM users) OR EXISTS (SELECT 1 FROM collections) OR EXISTS (SELECT 1 FROM resources)
                """)?.decode(Bool.self) ?? false
        }
    }

    static func snapshotPage(_ connection: Connection, _ table: SnapshotTable, after last: SnapshotRecord?,
                             limit: Int) async throws -> [SnapshotRecord] {
        let source = Self.snapshotSource(table)
        var sql = SQLBuilder()
        let condition = Self.keyCondition(after: last, key: source.key, sql: &sql)
        sql.append("""
            SELECT \(source.columns) FROM \(source.table) WHERE \(condition)
            ORDER BY \(source.key.joined(separator: ", ")) LIMIT \(limit)
            """)
        var records = try await connection.rows(sql.query).map { row in
            var columns = Columns(row)
            return try Self.record(table, &columns)
        }
        if table == .appPasswords, !records.isEmpty {
            let ids = records.compactMap { if case .appPassword(let p) = $0 { p.id } else { nil } }
            var books: [Int64: [Int64]] = [:]
            for row in try await connection.rows("""
                SELECT app_password_id, collection_id FROM app_password_books
                WHERE app_password_id = ANY(\(ids)::BIGINT[]) ORDER BY app_password_id, collection_id
                """) {
                let (password, book) = try row.decode((Int64, Int64).self)
                books[password, default: []].append(book)
            }
            records = records.map { record in
                guard case .appPassword(var password) = record else { return record }
                password.books = books[password.id] ?? []
                return .appPassword(password)
            }
        }
        return records
    }

    public func restore(_ records: [SnapshotRecord]) async throws {
        try await changingSignInOrBooks {
            try await transaction { connection in
                // A batch of big cards may take longer than a request's statement is allowed.
                let connection = connection.unbounded
                try await connection.execute("SET LOCAL statement_timeout = 0")
                // Resources and change rows, most of a store, go many to a statement: one
                // round trip each was most of the copy's time.
                var index = records.startIndex
                while index < records.endIndex {
                    switch records[index] {
                    case .resource:
                        let run = records[index...].prefix { if case .resource = $0 { true } else { false } }.prefix(50)
                        try await Self.restoreResources(run.compactMap { if case .resource(let r) = $0 { r } else { nil } }, connection)
                        index += run.count
                    case .change:
                        let run = records[index...].prefix { if case .change = $0 { true } else { false } }.prefix(1000)
                        try await Self.restoreChanges(run.compactMap { if case .change(let c) = $0 { c } else { nil } }, connection)
                        index += run.count
                    case .cardVersion, .cardVersionPartRef:
                        let run = records[index...].prefix { Self.sameKind($0, records[index]) }.prefix(1000)
                        try await Self.restoreHistory(run, connection)
                        index += run.count
                    case .cardVersionBody, .cardVersionPart:
                        let run = records[index...].prefix { Self.sameKind($0, records[index]) }.prefix(50)
                        try await Self.restoreHistory(run, connection)
                        index += run.count
                    default:
                        try await Self.restore(records[index], connection)
                        index += 1
                    }
                }
            }
        }
    }

    /// Both the same kind of history record (what one `restoreHistory` statement takes).
    private static func sameKind(_ a: SnapshotRecord, _ b: SnapshotRecord) -> Bool {
        switch (a, b) {
        case (.cardVersion, .cardVersion), (.cardVersionBody, .cardVersionBody), (.cardVersionPart, .cardVersionPart),
             (.cardVersionPartRef, .cardVersionPartRef): true
        default: false
        }
    }

    public func finishRestore() async throws {
        try await autocommit { connection in
            for table in ["users", "collections", "resources", "shares", "app_passwords", "trash", "feeds"] {
                try await connection.execute(PostgresQuery(unsafeSQL: """
                    SELECT setval(pg_get_serial_sequence('\(table)', 'id'), coalesce((SELECT max(id) FROM \(table)), 0) + 1, false)
                    """))
            }
            let connection = connection.unbounded
            try await connection.execute("SET statement_timeout = 0")
            // The planner's statistics, the visibility map (listings read from the index
            // alone) and the trigram indexes' pending entries, all at once: otherwise
            // autovacuum does it over the first minutes of serving, and searches then took up
            // to twice as long (Docs/performance.md, "The web UI's search among a million
            // cards on PostgreSQL").
            try await connection.execute("VACUUM (ANALYZE)")
            try await connection.execute("RESET statement_timeout")
        }
        let pepper = try await loadPepper()
        pepperValue.withLock { $0 = pepper }
    }

    // MARK: Reading

    /// The core's column lists (`SnapshotTable.columns`); `user` is a reserved word here.
    private static func snapshotSource(_ table: SnapshotTable) -> SnapshotSource {
        let source = SnapshotSource(table)
        switch table {
        case .trash:
            return source.replacing(columns: ["user": "\"user\""], of: table)
        case .cardVersions:
            // Each card's current version too, which is its change row (v13).
            return source.replacing(table: "\(SnapshotTable.allCardVersions) AS card_versions", of: table)
        default:
            return source
        }
    }

    private enum KeyValue { case int(Int64), text(String) }

    /// `(key columns) > (the last record's key)`, or true for the first page.
    private static func keyCondition(after last: SnapshotRecord?, key: [String], sql: inout SQLBuilder) -> String {
        guard let last else { return "true" }
        let values: [KeyValue] = switch last {
        case .setting(let key, _): [.text(key)]
        case .user(let user): [.int(user.id)]
        case .collection(let collection): [.int(collection.id)]
        case .resource(let resource): [.int(resource.id)]
        case .change(let change): [.int(change.collectionID), .int(change.seq)]
        case .deadProperty(let property):
            [.int(property.collectionID), .text(property.resource), .text(property.namespace), .text(property.name)]
        case .share(let share): [.int(share.id)]
        case .appPassword(let password): [.int(password.id)]
        case .access(let access): [.int(access.userID), .int(access.credentialID), .int(access.bookID), .int(access.periodStart)]
        case .pushRegistration(let registration): [.text(registration.id)]
        case .trash(let entry): [.int(entry.id)]
        case .feed(let feed): [.int(feed.id)]
        case .cardVersion(let version): [.int(version.collectionID), .int(version.seq)]
        case .cardVersionBody(let etag, _): [.text(etag)]
        case .cardVersionPart(let hash, _): [.text(hash)]
        case .cardVersionPartRef(let etag, let hash, _, _): [.text(etag), .text(hash)]
        case .directoryEntry(let userID, _): [.int(userID)]
        }
        let placeholders = values.map { value in
            switch value {
            case .int(let int): sql.bind(int)
            case .text(let text): sql.bind(text)
            }
        }
        return "(\(key.joined(separator: ", "))) > (\(placeholders.joined(separator: ", ")))"
    }

    private static func record(_ table: SnapshotTable, _ c: inout Columns) throws -> SnapshotRecord {
        switch table {
        case .settings:
            return .setting(key: try c.next(), value: try c.next())
        case .users:
            return .user(SnapshotUser(id: try c.next(), name: try c.next(), passwordHash: try c.next(), created: try c.next(),
                                      displayName: try c.next(), email: try c.next(), appPasswordsOnly: try c.next(),
                                      admin: try c.next(), disabled: try c.next(), homeSeq: try c.next(), source: try c.next()))
        case .collections:
            return .collection(SnapshotCollection(id: try c.next(), ownerID: try c.next(), parentID: try c.next(), path: try c.next(),
                                                  kind: try c.next(), displayName: try c.next(), description: try c.next(),
                                                  syncSeq: try c.next(), minValidSeq: try c.next(), created: try c.next(),
                                                  modified: try c.next(), pushTopic: try c.next()))
        case .resources:
            return .resource(SnapshotResource(id: try c.next(), collectionID: try c.next(), name: try c.next(),
                                              contentType: try c.next(), etag: try c.next(), modified: try c.next(),
                                              seq: try c.next(), uid: try c.next(), kind: try c.next(), data: try c.next()))
        case .changes:
            return .change(SnapshotChange(collectionID: try c.next(), seq: try c.next(), name: try c.next(), deleted: try c.next(),
                                          at: try c.next(), actorUser: try c.next(), actorCredential: try c.next()))
        case .deadProperties:
            return .deadProperty(SnapshotDeadProperty(collectionID: try c.next(), resource: try c.next(), namespace: try c.next(),
                                                      name: try c.next(), xml: try c.next(), language: try c.next()))
        case .shares:
            return .share(SnapshotShare(id: try c.next(), collectionID: try c.next(), shareeID: try c.next(), access: try c.next(),
                                        state: try c.next(), mountName: try c.next(), mountDisplayName: try c.next(),
                                        created: try c.next(), modified: try c.next()))
        case .appPasswords:
            return .appPassword(SnapshotAppPassword(
                id: try c.next(), userID: try c.next(), publicID: try c.next(), name: try c.next(), secretHash: try c.next(),
                readOnly: try c.next(), allBooks: try c.next(), created: try c.next(), lastUsed: try c.next(),
                lastAddress: try c.next(), lastUserAgent: try c.next(), revoked: try c.next(), books: []))
        case .accessHourly, .accessDaily:
            return .access(SnapshotAccess(daily: table == .accessDaily, userID: try c.next(), credentialID: try c.next(),
                                          bookID: try c.next(), periodStart: try c.next(), requests: try c.next(),
                                          cardsRead: try c.next(), cardsWritten: try c.next(), cardsDeleted: try c.next(),
                                          fullDownload: try c.next()))
        case .pushRegistrations:
            return .pushRegistration(SnapshotPushRegistration(
                id: try c.next(), userID: try c.next(), collectionID: try c.next(), credentialID: try c.next(),
                pushResource: try c.next(), publicKey: try c.next(), authSecret: try c.next(), expires: try c.next(),
                created: try c.next(), lastSuccess: try c.next(), failures: try c.next(), firstFailure: try c.next(),
                retryAfter: try c.next()))
        case .trash:
            return .trash(SnapshotTrash(id: try c.next(), collectionID: try c.next(), batch: try c.next(), reason: try c.next(),
                                        name: try c.next(), uid: try c.next(), displayName: try c.next(), etag: try c.next(),
                                        replacedBy: try c.next(), contentType: try c.next(), data: try c.next(),
                                        trashed: try c.next(), user: try c.next()))
        case .feeds:
            return .feed(SnapshotFeed(id: try c.next(), userID: try c.next(), kind: try c.next(), secretHash: try c.next(),
                                      books: try c.next(), created: try c.next(), lastRead: try c.next()))
        case .cardVersions:
            return .cardVersion(SnapshotCardVersion(collectionID: try c.next(), seq: try c.next(), name: try c.next(), at: try c.next(),
                                                    etag: try c.next(), contentType: try c.next(), actorUser: try c.next(),
                                                    actorCredential: try c.next()))
        case .cardVersionBodies:
            return .cardVersionBody(etag: try c.next(), data: try c.next())
        case .cardVersionParts:
            return .cardVersionPart(hash: try c.next(), data: try c.next())
        case .cardVersionPartRefs:
            return .cardVersionPartRef(etag: try c.next(), hash: try c.next(), start: try c.next(), length: try c.next())
        case .directoryEntries:
            return .directoryEntry(userID: try c.next(), entry: try c.next())
        }
    }

    // MARK: Writing

    private static func restore(_ record: SnapshotRecord, _ connection: Connection) async throws {
        switch record {
        case .setting(let key, let value):
            try await connection.execute("""
                INSERT INTO settings (key, value) VALUES (\(key), \(value)) ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """)
        case .user(let u):
            try await connection.execute("""
                INSERT INTO users (id, name, password_hash, created, display_name, email, app_passwords_only, admin, disabled, home_seq,
                                   source)
                VALUES (\(u.id), \(u.name.withoutNUL), \(u.passwordHash), \(u.created), \(u.displayName?.withoutNUL),
                        \(u.email?.withoutNUL), \(u.appPasswordsOnly), \(u.admin), \(u.disabled), \(u.homeSeq), \(u.source.withoutNUL))
                """)
        case .collection(let c):
            try await connection.execute("""
                INSERT INTO collections (id, owner_id, parent_id, path, kind, display_name, description, sync_seq, min_valid_seq,
                                         created, modified, push_topic)
                VALUES (\(c.id), \(c.ownerID), \(c.parentID), \(c.path), \(c.kind), \(c.displayName?.withoutNUL),
                        \(c.description?.withoutNUL), \(c.syncSeq), \(c.minValidSeq), \(c.created), \(c.modified), \(c.pushTopic))
                """)
        case .resource(let r):
            try await restoreResources([r], connection)
        case .change(let c):
            try await restoreChanges([c], connection)
        case .deadProperty(let p):
            try await connection.execute("""
                INSERT INTO dead_properties (collection_id, resource, namespace, name, xml, language)
                VALUES (\(p.collectionID), \(p.resource), \(p.namespace), \(p.name), \(p.xml.withoutNUL),
                        \(p.language?.withoutNUL))
                """)
        case .share(let s):
            try await connection.execute("""
                INSERT INTO shares (id, collection_id, sharee_id, access, state, mount_name, mount_display_name, created, modified)
                VALUES (\(s.id), \(s.collectionID), \(s.shareeID), \(s.access), \(s.state), \(s.mountName),
                        \(s.mountDisplayName?.withoutNUL), \(s.created), \(s.modified))
                """)
        case .appPassword(let p):
            try await connection.execute("""
                INSERT INTO app_passwords (id, user_id, public_id, name, secret_hash, read_only, all_books, created, last_used,
                                           last_address, last_user_agent, revoked)
                VALUES (\(p.id), \(p.userID), \(p.publicID), \(p.name.withoutNUL), \(p.secretHash), \(p.readOnly), \(p.allBooks),
                        \(p.created), \(p.lastUsed), \(p.lastAddress?.withoutNUL), \(p.lastUserAgent?.withoutNUL), \(p.revoked))
                """)
            if !p.books.isEmpty {
                try await connection.execute("""
                    INSERT INTO app_password_books (app_password_id, collection_id) SELECT \(p.id), unnest(\(p.books)::BIGINT[])
                    """)
            }
        case .access(let a):
            var sql = SQLBuilder()
            sql.append("""
                INSERT INTO \(a.daily ? "access_daily" : "access_hourly") (user_id, credential_id, book_id, period_start, requests,
                    cards_read, cards_written, cards_deleted, full_download)
                VALUES (\(sql.bind(a.userID)), \(sql.bind(a.credentialID)), \(sql.bind(a.bookID)), \(sql.bind(a.periodStart)),
                        \(sql.bind(a.requests)), \(sql.bind(a.cardsRead)), \(sql.bind(a.cardsWritten)), \(sql.bind(a.cardsDeleted)),
                        \(sql.bind(a.fullDownload)))
                """)
            try await connection.execute(sql.query)
        case .pushRegistration(let p):
            try await connection.execute("""
                INSERT INTO push_registrations (id, user_id, collection_id, credential_id, push_resource, public_key, auth_secret,
                                                expires, created, last_success, failures, first_failure, retry_after)
                VALUES (\(p.id), \(p.userID), \(p.collectionID), \(p.credentialID), \(p.pushResource), \(p.publicKey),
                        \(p.authSecret), \(p.expires), \(p.created), \(p.lastSuccess), \(p.failures), \(p.firstFailure),
                        \(p.retryAfter))
                """)
        case .trash(let t):
            try await connection.execute("""
                INSERT INTO trash (id, collection_id, batch, reason, name, uid, display_name, etag, replaced_by, content_type, data,
                                   trashed, "user")
                VALUES (\(t.id), \(t.collectionID), \(t.batch), \(t.reason), \(t.name), \(t.uid.withoutNUL),
                        \(t.displayName.withoutNUL), \(t.etag), \(t.replacedBy), \(t.contentType), \(t.data), \(t.trashed), \(t.user))
                """)
        case .feed(let f):
            try await connection.execute("""
                INSERT INTO feeds (id, user_id, kind, secret_hash, books, created, last_read)
                VALUES (\(f.id), \(f.userID), \(f.kind), \(f.secretHash), \(f.books), \(f.created), \(f.lastRead))
                """)
        case .directoryEntry(let userID, let entry):
            try await connection.execute("INSERT INTO directory_entries (user_id, entry) VALUES (\(userID), \(entry))")
        case .cardVersion, .cardVersionBody, .cardVersionPart, .cardVersionPartRef:
            try await restoreHistory([record][...], connection)
        }
    }

    /// Card versions, bodies, parts or part references (one kind), many to a statement. Each
    /// card's current version is its change row, copied before (v13): only the versions
    /// before it are rows here. A body replaces what is there.
    private static func restoreHistory(_ records: ArraySlice<SnapshotRecord>, _ connection: Connection) async throws {
        guard let first = records.first else { return }
        var sql = SQLBuilder()
        var rows: [String] = []
        switch first {
        case .cardVersion:
            // Typed: a column of NULLs in a VALUES list outside an INSERT would be text.
            for case .cardVersion(let v) in records {
                rows.append("""
                    (\(sql.bind(v.collectionID))::BIGINT, \(sql.bind(v.seq))::BIGINT, \(sql.bind(v.name))::TEXT,
                     \(sql.bind(v.at))::DOUBLE PRECISION, \(bindOptional(&sql, v.etag))::TEXT,
                     \(bindOptional(&sql, v.contentType))::TEXT, \(bindOptional(&sql, v.actorUser))::TEXT,
                     \(bindOptional(&sql, v.actorCredential))::BIGINT)
                    """)
            }
            sql.append("""
                INSERT INTO card_versions (collection_id, seq, name, at, etag, content_type, actor_user, actor_credential)
                SELECT * FROM (VALUES \(rows.joined(separator: ", "))) AS v
                WHERE NOT EXISTS (SELECT 1 FROM changes c WHERE c.collection_id = v.column1 AND c.seq = v.column2)
                ON CONFLICT (collection_id, seq) DO UPDATE SET name = excluded.name, at = excluded.at, etag = excluded.etag,
                    content_type = excluded.content_type, actor_user = excluded.actor_user,
                    actor_credential = excluded.actor_credential
                """)
        case .cardVersionBody:
            for case .cardVersionBody(let etag, let data) in records { rows.append("(\(sql.bind(etag)), \(try sql.bind(data)))") }
            sql.append("""
                INSERT INTO card_version_bodies (etag, data) VALUES \(rows.joined(separator: ", "))
                ON CONFLICT (etag) DO UPDATE SET data = excluded.data
                """)
        case .cardVersionPart:
            for case .cardVersionPart(let hash, let data) in records { rows.append("(\(sql.bind(hash)), \(try sql.bind(data)))") }
            sql.append("INSERT INTO card_version_parts (hash, data) VALUES \(rows.joined(separator: ", "))")
        case .cardVersionPartRef:
            for case .cardVersionPartRef(let etag, let hash, let start, let length) in records {
                rows.append("(\(sql.bind(etag)), \(sql.bind(hash)), \(bindOptional(&sql, start))::BIGINT, \(bindOptional(&sql, length))::BIGINT)")
            }
            sql.append("INSERT INTO card_version_part_refs (etag, hash, start, length) VALUES \(rows.joined(separator: ", "))")
        default:
            return
        }
        try await connection.execute(sql.query)
    }

    /// The change rows as stored, in one statement, each with its card's version (v13) as the
    /// resources, copied before, hold it, and that version's body where the history has none
    /// yet (an SQLite source keeps no body for a current version, v17): the copy's own bodies
    /// replace it when they come.
    private static func restoreChanges(_ changes: [SnapshotChange], _ connection: Connection) async throws {
        var sql = SQLBuilder("WITH c (collection_id, seq, name, deleted, at, actor_user, actor_credential) AS (VALUES")
        // Typed: a column of NULLs in a VALUES list outside an INSERT would be text.
        for (index, c) in changes.enumerated() {
            let values = """
                (\(sql.bind(c.collectionID))::BIGINT, \(sql.bind(c.seq))::BIGINT, \(sql.bind(c.name))::TEXT,
                 \(sql.bind(c.deleted))::BOOLEAN, \(sql.bind(c.at))::DOUBLE PRECISION, \(bindOptional(&sql, c.actorUser))::TEXT,
                 \(bindOptional(&sql, c.actorCredential))::BIGINT)
                """
            sql.append((index == 0 ? " " : ", ") + values)
        }
        sql.append("""
            ),
            versions AS (
                SELECT c.*, r.etag, r.content_type, r.data
                FROM c LEFT JOIN resources r ON NOT c.deleted AND r.collection_id = c.collection_id AND r.name = c.name),
            inserted AS (
                INSERT INTO changes (collection_id, seq, name, deleted, at, actor_user, actor_credential, etag, content_type)
                SELECT collection_id, seq, name, deleted, at, actor_user, actor_credential, etag, content_type FROM versions)
            INSERT INTO card_version_bodies (etag, data)
            SELECT DISTINCT ON (etag) etag, data FROM versions WHERE etag IS NOT NULL
            ON CONFLICT (etag) DO NOTHING
            """)
        try await connection.execute(sql.query)
    }

    /// The resources as stored (ids, ETags, seqs and times) and the rows derived from their
    /// `card` (index entries, members, list row), in one statement: a chain of CTEs each.
    private static func restoreResources(_ resources: [SnapshotResource], _ connection: Connection) async throws {
        var sql = SQLBuilder("WITH ")
        for (index, r) in resources.enumerated() {
            try appendResource(r, suffix: "\(index)", to: &sql)
        }
        sql.append("done AS (SELECT 1) SELECT 1 FROM done")
        try await connection.execute(sql.query)
    }

    /// CTEs `r<suffix>`, `e<suffix>`… writing one resource and its derived rows, each followed by a comma.
    private static func appendResource(_ r: SnapshotResource, suffix: String, to sql: inout SQLBuilder) throws {
        let id = sql.bind(r.id)
        let collection = sql.bind(r.collectionID)
        let table = "r\(suffix)"
        sql.append("""
            \(table) AS (
                INSERT INTO resources (id, collection_id, name, content_type, etag, size, modified, seq, uid, kind, data)
                VALUES (\(id), \(collection), \(sql.bind(r.name)), \(sql.bind(r.contentType)), \(sql.bind(r.etag)),
                        \(sql.bind(Int64(r.data.count))), \(sql.bind(r.modified)), \(sql.bind(r.seq)),
                        \(bindOptional(&sql, r.uid?.withoutNUL)), \(bindOptional(&sql, r.kind)), \(try sql.bind(r.data)))
                RETURNING id),
            """)
        if let card = r.card {
            let entries = card.indexEntries.map(FoldedIndexEntry.init)
            let members = card.members
            sql.append("""
                e\(suffix) AS (
                    INSERT INTO card_index (resource_id, position, collection_id, property, value, value_ascii, value_unicode)
                    SELECT \(table).id, e.position, \(collection), e.property, e.value, e.ascii, e.unicode
                    FROM \(table), unnest(\(sql.bind(entries.indices.map { Int32($0) }))::INTEGER[], \(sql.bind(entries.map(\.property)))::TEXT[],
                                   \(sql.bind(entries.map { $0.value.withoutNUL }))::TEXT[],
                                   \(sql.bind(entries.map { $0.asciiFold.withoutNUL }))::TEXT[],
                                   \(sql.bind(entries.map { $0.unicode.withoutNUL }))::TEXT[]) AS e(position, property, value, ascii, unicode)),
                m\(suffix) AS (
                    INSERT INTO group_members (resource_id, position, collection_id, member_uid)
                    SELECT \(table).id, m.position, \(collection), m.uid
                    FROM \(table), unnest(\(sql.bind(members.indices.map { Int32($0) }))::INTEGER[],
                                   \(sql.bind(members.map(\.withoutNUL)))::TEXT[]) AS m(position, uid)),
                """)
            if let listing = card.listing {
                sql.append("""
                    l\(suffix) AS (
                        INSERT INTO card_listings (collection_id, is_group, sort_key, name, resource_id, display_name, organization,
                                                   email, phone, has_photo, search_text)
                        SELECT \(collection), \(sql.bind((r.kind ?? card.kind) == "group")), \(sql.bind(listing.sortKey.withoutNUL)),
                               \(sql.bind(r.name)), \(table).id, \(sql.bind(listing.displayName.withoutNUL)),
                               \(bindOptional(&sql, listing.organization?.withoutNUL))::TEXT,
                               \(bindOptional(&sql, listing.email?.withoutNUL))::TEXT,
                               \(bindOptional(&sql, listing.phone?.withoutNUL))::TEXT, \(sql.bind(listing.hasPhoto)),
                               \(sql.bind(listing.searchText.withoutNUL))
                        FROM \(table)),
                    """)
            }
        }
    }
}

/// Pages of a PostgreSQL database as it was when the reader began (`snapshotReader()`).
struct PostgresSnapshotReader: StoreSnapshotReading {
    let connection: Connection

    func snapshotCounts() async throws -> [SnapshotTable: Int] {
        do { return try await PostgresStore.snapshotCounts(connection) } catch { throw PostgresStore.mapped(error) }
    }

    func snapshotPage(_ table: SnapshotTable, after last: SnapshotRecord?, limit: Int) async throws -> [SnapshotRecord] {
        do {
            return try await PostgresStore.snapshotPage(connection, table, after: last, limit: limit)
        } catch {
            throw PostgresStore.mapped(error)
        }
    }

    func close() async {
        _ = try? await connection.execute("COMMIT")
        try? await connection.connection.close()
    }
}
