import Foundation
import RoloStore
import GRDB
import GRDBSQLite

extension Statement {
    /// Resets the statement, lets `bind` set every parameter in order through the SQLite C
    /// API, and runs it to completion. On the import path this replaces `bound(_:)`: building
    /// GRDB's `StatementArguments` (an array of existentials per row) cost more than the
    /// insert. Throws `DatabaseError` like GRDB does, which rolls the transaction back.
    func run(binding bind: (inout DirectBindings) -> Void) throws {
        let handle = sqliteStatement
        sqlite3_reset(handle)
        var bindings = DirectBindings(handle: handle)
        bind(&bindings)
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else {
            let message = sqlite3_errmsg(sqlite3_db_handle(handle)).map { String(cString: $0) }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
        }
    }

    /// Runs a query for at most one row, bound as `run` binds, and reads that row's columns
    /// straight from SQLite (`ColumnReader`); nil when there is none. For the reads every write
    /// makes (its book, the card it replaces, the holder of its UID): GRDB's `Row.fetchOne`
    /// checked the arguments and copied the row with its column names, 2 % of a PUT's CPU.
    func firstRow<Value>(binding bind: (inout DirectBindings) -> Void, read: (ColumnReader) -> Value) throws -> Value? {
        let handle = sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        var bindings = DirectBindings(handle: handle)
        bind(&bindings)
        switch sqlite3_step(handle) {
        case SQLITE_ROW:
            return read(ColumnReader(self))
        case SQLITE_DONE:
            return nil
        case let code:
            let message = sqlite3_errmsg(sqlite3_db_handle(handle)).map { String(cString: $0) }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
        }
    }

    /// Runs a query bound as `run` binds and hands each row to `read`, its columns read
    /// straight from SQLite (`ColumnReader`), until the rows end or `read` returns false.
    func forEachRow(binding bind: (inout DirectBindings) -> Void, _ read: (ColumnReader) -> Bool) throws {
        let handle = sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        var bindings = DirectBindings(handle: handle)
        bind(&bindings)
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_ROW:
                guard read(ColumnReader(self)) else { return }
            case SQLITE_DONE:
                return
            case let code:
                let message = sqlite3_errmsg(sqlite3_db_handle(handle)).map { String(cString: $0) }
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
            }
        }
    }

    /// The same with `blob` bound where it lies (`DirectBindings.add(inPlace:)`) for the one
    /// step: SQLite copies a 10 MB card body once, into the record it writes, instead of
    /// first into a bound copy. The binding is cleared before the bytes' scope ends.
    func run(blob: Data, binding bind: (inout DirectBindings, UnsafeRawBufferPointer) -> Void) throws {
        try blob.withUnsafeBytes { bytes in
            let handle = sqliteStatement
            defer { sqlite3_clear_bindings(handle) }
            try run { bindings in bind(&bindings, bytes) }
        }
    }
}

/// The parameters of one statement run, bound left to right; SQLite copies texts and blobs.
struct DirectBindings {
    fileprivate let handle: SQLiteStatement
    private var index: Int32 = 0

    init(handle: SQLiteStatement) { self.handle = handle }

    /// SQLite's SQLITE_TRANSIENT: copy the bytes before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    mutating func add(_ value: Int64) {
        index += 1
        sqlite3_bind_int64(handle, index, value)
    }

    mutating func add(_ value: Int64?) {
        guard let value else {
            index += 1
            sqlite3_bind_null(handle, index)
            return
        }
        add(value)
    }

    mutating func add(_ value: Int) { add(Int64(value)) }

    mutating func add(_ value: Bool) { add(Int64(value ? 1 : 0)) }

    mutating func add(_ value: Double) {
        index += 1
        sqlite3_bind_double(handle, index, value)
    }

    mutating func add(_ value: String?) {
        index += 1
        guard var value else {
            sqlite3_bind_null(handle, index)
            return
        }
        let handle = handle, index = index
        _ = value.withUTF8 { bytes in
            if let base = bytes.baseAddress {
                sqlite3_bind_text(handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                                  Int32(bytes.count), Self.transient)
            } else {
                // A null pointer would bind NULL, not the empty text.
                sqlite3_bind_text(handle, index, "", 0, Self.transient)
            }
        }
    }

    /// Bytes SQLite reads where they are (SQLITE_STATIC): only inside `Statement.run(blob:)`,
    /// which keeps them alive until the step is done.
    mutating func add(inPlace bytes: UnsafeRawBufferPointer) {
        index += 1
        if let base = bytes.baseAddress {
            sqlite3_bind_blob(handle, index, base, Int32(bytes.count), nil)
        } else {
            sqlite3_bind_zeroblob(handle, index, 0)
        }
    }

    mutating func add(_ value: Data) {
        index += 1
        let handle = handle, index = index
        _ = value.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress {
                sqlite3_bind_blob(handle, index, base, Int32(bytes.count), Self.transient)
            } else {
                sqlite3_bind_zeroblob(handle, index, 0)
            }
        }
    }
}
