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
