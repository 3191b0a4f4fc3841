import Foundation
import RoloStore
import GRDB
import GRDBSQLite

/// Read-only SQLite connections for the lookups of a request (a GET is one) and for the
/// bounded reads of a listing (a page), used through SQLite's C API with statements
/// prepared once per connection. GRDB's `DatabasePool.read` costs several times such a
/// lookup: a reader checkout, a hop through the reader's dispatch queue and back, BEGIN, a
/// schema-version check and COMMIT around the SELECT. On this 2-core machine the hop alone
/// was about 0.15 ms of a multiget (Docs/performance.md, "Pages on the calling thread").
/// Here one SELECT is the whole read: in WAL mode a statement outside a transaction reads
/// one consistent snapshot of the database, taken when it starts and let go when it is reset.
///
/// A lookup never waits for a connection: checking one out takes an idle one or opens a new
/// one, so a thread that blocks here for the microseconds of a read can never be waiting on
/// a thread it blocks (the deadlock `RowReaderTests` guards against). Lookups never suspend,
/// so the connections open at once are at most the threads running lookups; at most
/// `maximumIdle` of them stay open between lookups.
final class RowReaders: @unchecked Sendable {
    private let path: String
    /// Pragmas run on every new connection (page cache and map sizes of `Tuning`).
    private let setupSQL: String
    private let maximumIdle: Int
    /// Guards `idle` and `isClosed`; held only to push or pop a connection.
    private let lock = NSLock()
    private var idle: [RowReader] = []
    private var isClosed = false

    init(path: String, setupSQL: String, maximumIdle: Int) {
        self.path = path
        self.setupSQL = setupSQL
        self.maximumIdle = maximumIdle
    }

    /// Runs `body` with a connection of its own, on the calling thread.
    func read<T>(_ body: (RowReader) throws -> T) throws -> T {
        let reader = try checkOut()
        defer { checkIn(reader) }
        return try body(reader)
    }

    /// Closes the idle connections now and any checked-out one when its read ends; reads
    /// after this throw.
    func close() {
        let closing = lock.withLock {
            isClosed = true
            defer { idle = [] }
            return idle
        }
        for reader in closing { reader.close() }
    }

    private func checkOut() throws -> RowReader {
        let reused: RowReader? = try lock.withLock {
            if isClosed { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the store is closed") }
            return idle.popLast()
        }
        return try reused ?? RowReader(path: path, setupSQL: setupSQL)
    }

    private func checkIn(_ reader: RowReader) {
        let kept = lock.withLock {
            guard !isClosed, idle.count < maximumIdle else { return false }
            idle.append(reader)
            return true
        }
        if !kept { reader.close() }
    }
}

/// One read-only connection and its prepared statements, used by one thread at a time.
final class RowReader {
    /// The lookups these connections answer; each is prepared on first use and kept.
    enum Query: Int, CaseIterable {
        /// A collection (`SQLiteStore.collectionColumns`) and one of its resources with its body
        /// (`resourceColumns`, then `data`), by owner name, collection path and resource name.
        case locatedResource
        /// `locatedResource` with one more column: the password stamp of the login bound
        /// fourth (`accountPasswordStamp`'s), read in the same step. A GET's second statement
        /// cost about 7,700 of its 110,000 instructions (Docs/performance.md).
        case locatedResourceAndStamp
        /// A resource with its body by collection id and name.
        case storedResource
        /// A resource without its body by collection id and name.
        case resourceInfo
        /// A collection by owner name and path.
        case collection
        /// A collection by owner name and path (`collectionColumns`) and, through a LEFT JOIN,
        /// its resource by name without the body (`resourceColumns`, all NULL when absent).
        /// The join reads the covering index `resources_listing`, so a PUT or DELETE
        /// resolves its path in one statement, one snapshot.
        case collectionMember
        /// An app password by its public id: id, secret hash, read-only, all books, revoked,
        /// its user's name (`SQLiteStore.checkAppPassword`).
        case appPassword
        /// The book ids of a scoped app password, comma-separated in one row.
        case appPasswordBooks
        /// A user's password hash while the account password opens DAV
        /// (`SQLiteStore.accountPasswordStamp`).
        case accountPasswordStamp
        /// How many cards a book holds, counted up to a limit (`SQLiteStore.resourceCount`).
        case resourceCount

        static let resourceColumns = "r.name, r.content_type, r.etag, r.size, r.modified, r.seq"
        static let collectionColumnCount: Int32 = 9
        /// `locatedResourceAndStamp`'s stamp: after the collection's, the resource's and the body.
        static let stampColumn: Int32 = collectionColumnCount + 7

        private static func locatedResourceSQL(extraColumn: String) -> String {
            """
            SELECT \(SQLiteStore.collectionColumns), \(resourceColumns), b.data\(extraColumn)
            FROM users u JOIN collections c ON c.owner_id = u.id
            JOIN resources r ON r.collection_id = c.id JOIN resource_bodies b ON b.resource_id = r.id
            WHERE u.name = ?1 AND c.path = ?2 AND r.name = ?3
            """
        }

        /// Whether the account password of `user` (a table alias) signs in: then its hash is
        /// the login's stamp.
        private static func signsInWithPassword(_ user: String) -> String {
            "\(user).disabled = 0 AND \(user).app_passwords_only = 0"
        }

        var sql: String {
            switch self {
            case .locatedResource: Self.locatedResourceSQL(extraColumn: "")
            case .locatedResourceAndStamp:
                // The owner's row is at hand when the login owns the book (the common case).
                Self.locatedResourceSQL(extraColumn: """
                    , CASE WHEN ?4 = ?1 THEN CASE WHEN \(Self.signsInWithPassword("u")) THEN u.password_hash END
                      ELSE (SELECT l.password_hash FROM users l WHERE l.name = ?4 AND \(Self.signsInWithPassword("l"))) END
                    """)
            case .storedResource: """
                SELECT \(Self.resourceColumns), b.data FROM resources r JOIN resource_bodies b ON b.resource_id = r.id
                WHERE r.collection_id = ? AND r.name = ?
                """
            case .resourceInfo: "SELECT \(Self.resourceColumns) FROM resources r WHERE r.collection_id = ? AND r.name = ?"
            case .collection: """
                SELECT \(SQLiteStore.collectionColumns) FROM users u JOIN collections c ON c.owner_id = u.id
                WHERE u.name = ? AND c.path = ?
                """
            case .collectionMember: """
                SELECT \(SQLiteStore.collectionColumns), \(Self.resourceColumns)
                FROM users u JOIN collections c ON c.owner_id = u.id
                LEFT JOIN resources r ON r.collection_id = c.id AND r.name = ?3
                WHERE u.name = ?1 AND c.path = ?2
                """
            case .appPassword: """
                SELECT a.id, a.secret_hash, a.read_only, a.all_books, a.revoked IS NOT NULL, u.name
                FROM app_passwords a JOIN users u ON u.id = a.user_id WHERE a.public_id = ? AND u.disabled = 0
                """
            case .appPasswordBooks: "SELECT group_concat(collection_id) FROM app_password_books WHERE app_password_id = ?"
            case .accountPasswordStamp:
                "SELECT u.password_hash FROM users u WHERE u.name = ? AND \(Self.signsInWithPassword("u"))"
            case .resourceCount: "SELECT count(*) FROM (SELECT 1 FROM resources WHERE collection_id = ? LIMIT ?)"
            }
        }
    }

    private var handle: OpaquePointer?
    private var statements: [OpaquePointer?] = Array(repeating: nil, count: Query.allCases.count)
    /// Statements of `forEachRow`, by their SQL. Callers build it from a few fixed shapes
    /// (listing pages, named reads padded to a power of two), so the set stays small.
    private var statementsBySQL: [String: OpaquePointer] = [:]

    fileprivate init(path: String, setupSQL: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        self.handle = handle
        guard code == SQLITE_OK, let handle else { throw error(code) }
        sqlite3_busy_timeout(handle, 10_000)
        let setup = sqlite3_exec(handle, setupSQL, nil, nil, nil)
        guard setup == SQLITE_OK else { throw error(setup) }
    }

    deinit { close() }

    fileprivate func close() {
        for statement in statements { sqlite3_finalize(statement) }
        for statement in statementsBySQL.values { sqlite3_finalize(statement) }
        statements = []
        statementsBySQL = [:]
        sqlite3_close_v2(handle)
        handle = nil
    }

    /// Binds the arguments, steps `query` once and reads its first row, if any. The
    /// statement is reset before this returns, which ends its read snapshot.
    func fetchOne<T>(_ query: Query, bind: (inout DirectBindings) -> Void, row: (ColumnReader) -> T) throws -> T? {
        let statement = try prepared(query)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        var bindings = DirectBindings(handle: statement)
        bind(&bindings)
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return row(ColumnReader(statement: statement))
        case SQLITE_DONE: return nil
        case let code: throw error(code, sql: query.sql)
        }
    }

    /// Binds the arguments and calls `row` for every row of the statement `sql` (prepared
    /// once per connection and kept: `sql` must come from a small fixed set of shapes). The
    /// statement is reset and its parameters cleared before this returns; parameters left
    /// unbound are NULL.
    func forEachRow(sql: String, bind: (inout DirectBindings) -> Void, row: (ColumnReader) throws -> Void) throws {
        let statement = try prepared(sql: sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        var bindings = DirectBindings(handle: statement)
        bind(&bindings)
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: try row(ColumnReader(statement: statement))
            case SQLITE_DONE: return
            case let code: throw error(code, sql: sql)
            }
        }
    }

    /// Runs `body`'s statements in one read transaction, so that they all see one snapshot
    /// (a lone statement already does).
    func inOneSnapshot<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func execute(_ sql: String) throws {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, sql: sql) }
    }

    private func prepared(sql: String) throws -> OpaquePointer {
        if let statement = statementsBySQL[sql] { return statement }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code, sql: sql) }
        statementsBySQL[sql] = statement
        return statement
    }

    private func prepared(_ query: Query) throws -> OpaquePointer {
        if let statement = statements[query.rawValue] { return statement }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, query.sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code, sql: query.sql) }
        statements[query.rawValue] = statement
        return statement
    }

    private func error(_ code: Int32, sql: String? = nil) -> DatabaseError {
        let message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
    }
}

/// A row's columns by index, so one decoder serves GRDB's `Row` and `ColumnReader`.
protocol ColumnSource {
    func int64(_ column: Int32) -> Int64
    func double(_ column: Int32) -> Double
    func text(_ column: Int32) -> String
    func optionalText(_ column: Int32) -> String?
    func data(_ column: Int32) -> Data
}

extension ColumnSource {
    func int(_ column: Int32) -> Int { Int(int64(column)) }
}

extension Row: ColumnSource {
    func int64(_ column: Int32) -> Int64 { self[Int(column)] }
    func double(_ column: Int32) -> Double { self[Int(column)] }
    func text(_ column: Int32) -> String { self[Int(column)] }
    func optionalText(_ column: Int32) -> String? { self[Int(column)] }
    func data(_ column: Int32) -> Data { self[Int(column)] }
}

/// The columns of the row a statement stands on, read by index from `offset` on, straight
/// from SQLite's C API.
struct ColumnReader: ColumnSource {
    fileprivate let statement: OpaquePointer
    var offset: Int32 = 0

    fileprivate init(statement: OpaquePointer, offset: Int32 = 0) {
        self.statement = statement; self.offset = offset
    }

    /// The row a GRDB statement stands on (while its cursor is on a row): listings read
    /// their columns straight from SQLite rather than through `Row`'s generic decoding.
    init(_ statement: Statement) {
        self.statement = statement.sqliteStatement
    }

    /// The same row, its columns counted from `offset` (for a row that joins two records).
    func advanced(by columns: Int32) -> ColumnReader {
        ColumnReader(statement: statement, offset: offset + columns)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, offset + column) }

    /// True when the column holds SQL NULL (a LEFT JOIN that found nothing).
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, offset + column) == SQLITE_NULL }

    func double(_ column: Int32) -> Double { sqlite3_column_double(statement, offset + column) }

    func text(_ column: Int32) -> String { optionalText(column) ?? "" }

    func optionalText(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, offset + column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, offset + column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Whether the column holds `text` byte for byte (NULL holds nil), read in place.
    func holds(_ column: Int32, _ text: String?) -> Bool {
        guard let bytes = sqlite3_column_text(statement, offset + column) else { return text == nil }
        guard var text else { return false }
        let count = Int(sqlite3_column_bytes(statement, offset + column))
        return text.withUTF8 { utf8 in
            utf8.count == count && (count == 0 || memcmp(utf8.baseAddress!, bytes, count) == 0)
        }
    }

    func data(_ column: Int32) -> Data {
        guard let bytes = sqlite3_column_blob(statement, offset + column) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, offset + column)))
    }
}
