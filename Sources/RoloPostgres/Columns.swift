import Foundation
import PostgresNIO

/// Reads a row's columns in order, so that a reader of a column list (`collectionColumns`,
/// `infoColumns`) can be reused wherever the list appears in a longer row.
struct Columns {
    private let row: PostgresRandomAccessRow
    private(set) var index: Int

    init(_ row: PostgresRow, from index: Int = 0) {
        self.row = row.makeRandomAccess()
        self.index = index
    }

    mutating func next<Value: PostgresDecodable>(_ type: Value.Type = Value.self) throws -> Value {
        defer { index += 1 }
        return try row[index].decode(Value.self)
    }

    mutating func date() throws -> Date { Date(timeIntervalSince1970: try next(Double.self)) }

    mutating func optionalDate() throws -> Date? { try next(Double?.self).map(Date.init(timeIntervalSince1970:)) }

    /// Whether the next column is NULL (without moving).
    var nextIsNull: Bool { row[index].bytes == nil }

    mutating func skip(_ count: Int) { index += count }
}
