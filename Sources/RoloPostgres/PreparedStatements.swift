import PostgresNIO
import Synchronization

/// A statement whose text never changes, prepared once per connection and from then on only
/// bound and run. Rolo's hot reads are short index lookups that PostgreSQL plans in several
/// times the time it takes to run them (0.1 ms against 0.02 ms for a GET's lookup), so
/// preparing them halves the database's CPU per request. Only for fixed text: statements
/// assembled from parts stay unnamed.
///
/// Every value must be bound non-NULL and with the same type each time: the parameter types
/// are those of the first execution on a connection.
protocol PreparedSQL {
    static var sql: String { get }
}

/// A statement that reads for several requests in one round trip (`LoopReadConnections.read`):
/// its parameters are `columns` text arrays, the requests' values column by column, and it
/// answers one row per request in their order.
protocol GatheredSQL: PreparedSQL {
    static var columns: Int { get }
    /// Whether the reads queued when a batch is answered wait for the answered readers' next
    /// reads (`LoopReadConnections.sendQueued`): true where a reader asks again at once.
    static var waitsForItsReaders: Bool { get }
}

extension GatheredSQL {
    static var waitsForItsReaders: Bool { false }
}

/// postgres-nio's prepared statement for a `PreparedSQL`: named after the type (short:
/// PostgreSQL cuts statement names at 63 bytes, and a fully qualified generic name is
/// longer, so two would share one), its rows coming back undecoded for the store's own
/// readers (`Columns`). The `PreparedSQL` types' names are unique in the module.
struct Prepared<SQL: PreparedSQL>: PostgresPreparedStatement {
    typealias Row = PostgresRow
    static var name: String { "rolo_" + String(describing: SQL.self) }
    static var sql: String { SQL.sql }
    let bindings: PostgresBindings
    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

extension Connection {
    /// Every row of the prepared statement `statement`, bound to `values` in order ($1, $2…).
    func rows<SQL: PreparedSQL>(_ statement: SQL.Type, _ values: any PostgresDynamicTypeEncodable...) async throws -> [PostgresRow] {
        try await run(statement, values)
    }

    /// The first row of the prepared statement, nil when none.
    func first<SQL: PreparedSQL>(_ statement: SQL.Type, _ values: any PostgresDynamicTypeEncodable...) async throws -> PostgresRow? {
        try await run(statement, values).first
    }

    private func run<SQL: PreparedSQL>(_ statement: SQL.Type, _ values: [any PostgresDynamicTypeEncodable]) async throws -> [PostgresRow] {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value) }
        return try await runPrepared(SQL.self, bindings)
    }

    /// Every row of `SQL` prepared on this connection and run with `bindings`.
    fileprivate func runPrepared<SQL: PreparedSQL>(_ statement: SQL.Type, _ bindings: PostgresBindings) async throws -> [PostgresRow] {
        try await bounded {
            var rows: [PostgresRow] = []
            for try await row in try await connection.execute(Prepared<SQL>(bindings: bindings), logger: logger) {
                rows.append(row)
            }
            return rows
        }
    }
}

/// A statement assembled at run time (`SQLBuilder`) whose text is the same every time for
/// one form of it (the card writes: an insert or a replace, with or without a list row):
/// prepared under the form's type, with the text of the first query built in that form.
/// A query whose text differs from its form's (a bug) runs unnamed instead, so a prepared
/// statement never runs with another statement's bindings.
protocol AssembledSQL: PreparedSQL {}

extension AssembledSQL {
    static var sql: String { AssembledTexts.text(of: Self.self) ?? "" }
}

enum AssembledTexts {
    private static let texts = Mutex<[ObjectIdentifier: String]>([:])

    static func text(of form: Any.Type) -> String? {
        texts.withLock { $0[ObjectIdentifier(form)] }
    }

    /// Records `text` as the form's text if it has none yet; whether `text` is the form's.
    static func matches(_ text: String, form: Any.Type) -> Bool {
        texts.withLock { texts in
            let key = ObjectIdentifier(form)
            if let known = texts[key] { return known == text }
            texts[key] = text
            return true
        }
    }
}

extension Connection {
    /// Every row of `query`, prepared as `form` when its text is the form's.
    func rows<SQL: AssembledSQL>(_ query: PostgresQuery, as form: SQL.Type) async throws -> [PostgresRow] {
        guard AssembledTexts.matches(query.sql, form: form) else {
            logger.error("an assembled statement differs from its form's text; run unprepared", metadata: ["form": "\(form)"])
            return try await rows(query)
        }
        return try await runPrepared(SQL.self, query.binds)
    }
}

/// Statements whose text follows a request's shape, not its values (an addressbook-query:
/// its leaves, their collations and match types; the values are bound), prepared on a
/// connection the first time that connection runs the text, then only bound and run. Parsing
/// and planning a query answered with its cards took PostgreSQL 0.45-0.6 ms where running it
/// took 0.1 (one card found by e-mail among 10,000, issue 34); prepared, the server plans it
/// anew only for its first five runs, then keeps a generic plan when that is no dearer.
///
/// Prepared with postgres-nio's `PreparedQuery`, whose statements a connection keeps until it
/// closes: the table holds them by connection, at most `perConnection` texts each, and when
/// one more comes they are released; the entries of closed connections go whenever a
/// statement is prepared. A statement that fails is dropped from the table, so the next run
/// prepares it afresh.
final class ShapedStatements: Sendable {
    static let perConnection = 64

    /// One connection's statements; only touched under `table`'s lock.
    private final class Prepared: @unchecked Sendable {
        weak var connection: PostgresConnection?
        var statements: [String: PreparedQuery] = [:]
        init(_ connection: PostgresConnection) { self.connection = connection }
    }

    private let table = Mutex<[ObjectIdentifier: Prepared]>([:])

    /// Connections the table holds statements for, and how many of them are closed.
    var heldConnections: (all: Int, closed: Int) {
        table.withLock { table in (table.count, table.values.filter { $0.connection?.isClosed ?? true }.count) }
    }

    /// Every row of `sql` (built `SQLBuilder.keepingData()`), prepared on `connection` unless
    /// it is already. The rows are `PreparedQuery`'s: binary cells described as text.
    func rows(_ sql: SQLBuilder, on connection: Connection) async throws -> [PostgresRow] {
        guard let values = sql.data else { preconditionFailure("a shaped statement's values were not kept") }
        let postgres = connection.connection
        let key = ObjectIdentifier(postgres)
        let known = table.withLock { table in table[key].flatMap { $0.connection === postgres ? $0.statements[sql.text] : nil } }
        let statement: PreparedQuery
        if let known {
            statement = known
        } else {
            statement = try await connection.bounded { try await postgres.prepare(query: sql.text).get() }
            let released = table.withLock { table -> [PreparedQuery] in
                // A closed connection's entry goes: its statements hold the connection, so
                // it would otherwise never be freed.
                table = table.filter { $0.value.connection.map { !$0.isClosed } ?? false }
                let prepared = table[key].flatMap { $0.connection === postgres ? $0 : nil } ?? Prepared(postgres)
                table[key] = prepared
                var released: [PreparedQuery] = []
                if prepared.statements.count >= Self.perConnection {
                    released = Array(prepared.statements.values)
                    prepared.statements = [:]
                }
                prepared.statements[sql.text] = statement
                return released
            }
            for old in released { old.deallocate().whenComplete { _ in } }
        }
        do {
            return try await connection.bounded { try await statement.execute(values).get() }
        } catch {
            table.withLock { table in _ = table[key]?.statements.removeValue(forKey: sql.text) }
            throw error
        }
    }
}
