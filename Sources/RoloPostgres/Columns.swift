import Foundation
import PostgresNIO

/// Reads a row's columns in order, so that a reader of a column list (`collectionColumns`,
/// `infoColumns`) can be reused wherever the list appears in a longer row.
struct Columns {
    private let row: PostgresRandomAccessRow
    private(set) var index: Int
    /// The cells are binary whatever the row's description says (`init(legacyPrepared:)`).
    private let binary: Bool

    init(_ row: PostgresRow, from index: Int = 0) {
        self.row = row.makeRandomAccess()
        self.index = index
        binary = false
    }

    /// A row of postgres-nio's `PreparedQuery` (its future interface, `LoopReadConnections`):
    /// the rows come in binary, as every extended query asks, but the description kept from
    /// the statement's preparation says text, and the decoders go by it.
    init(legacyPrepared row: PostgresRow) {
        self.row = row.makeRandomAccess()
        index = 0
        binary = true
    }

    mutating func next<Value: PostgresDecodable>(_ type: Value.Type = Value.self) throws -> Value {
        defer { index += 1 }
        let cell = row[index]
        guard binary else { return try cell.decode(Value.self) }
        return try PostgresCell(bytes: cell.bytes, dataType: cell.dataType, format: .binary, columnName: cell.columnName,
                                columnIndex: cell.columnIndex).decode(Value.self)
    }

    mutating func date() throws -> Date { Date(timeIntervalSince1970: try next(Double.self)) }

    mutating func optionalDate() throws -> Date? { try next(Double?.self).map(Date.init(timeIntervalSince1970:)) }

    /// Whether the next column is NULL (without moving).
    var nextIsNull: Bool { row[index].bytes == nil }

    mutating func skip(_ count: Int) { index += count }
}
