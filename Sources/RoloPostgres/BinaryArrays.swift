import NIOCore
import PostgresNIO
import RoloStore

/// Reads one-dimensional arrays in PostgreSQL's binary format straight from a cell's bytes,
/// for the listings and multigets that come back as one row of arrays. postgres-nio's
/// generic `[Element]` decoding goes through `PostgresDecodable` for every element: in a
/// PROPFIND of 10,000 cards (six arrays a page) it was a third of Rolo's CPU, most of it
/// retains and releases of its generic value witnesses (`perf`, 2026-11-29). The format is
/// small and fixed (PostgreSQL's `array_send`): the number of dimensions, a has-NULLs flag
/// and the element type, then each dimension's size and lower bound, then each element as
/// its length and bytes. The arrays read here are `array_agg`s of NOT NULL columns.
enum BinaryArray {
    /// A cell that is not such an array (a NULL element, a second dimension, short bytes).
    struct Malformed: Error, CustomStringConvertible {
        let column: Int
        var description: String { "column \(column) is not a one-dimensional array without NULLs" }
    }

    static func strings(_ row: PostgresRandomAccessRow, _ column: Int, binary: Bool = false) throws -> [String]? {
        try elements(row, column, binary: binary) { buffer, length in buffer.readString(length: length) }
    }

    static func int64s(_ row: PostgresRandomAccessRow, _ column: Int, binary: Bool = false) throws -> [Int64]? {
        try elements(row, column, binary: binary) { buffer, length in length == 8 ? buffer.readInteger(as: Int64.self) : nil }
    }

    static func doubles(_ row: PostgresRandomAccessRow, _ column: Int, binary: Bool = false) throws -> [Double]? {
        try elements(row, column, binary: binary) { buffer, length in
            length == 8 ? buffer.readInteger(as: UInt64.self).map(Double.init(bitPattern:)) : nil
        }
    }

    /// `bytea` elements, each a slice of the row's buffer (no copy).
    static func buffers(_ row: PostgresRandomAccessRow, _ column: Int, binary: Bool = false) throws -> [ByteBuffer]? {
        try elements(row, column, binary: binary) { buffer, length in buffer.readSlice(length: length) }
    }

    /// The elements of the array in `column`, read by `element` from the buffer at each one
    /// (given its length); nil when the cell is NULL. `binary`: the cell is binary whatever
    /// the row's description says (a row of postgres-nio's `PreparedQuery`, `Columns.init(legacyPrepared:)`).
    private static func elements<Element>(_ row: PostgresRandomAccessRow, _ column: Int, binary: Bool,
                                          _ element: (inout ByteBuffer, Int) -> Element?) throws -> [Element]? {
        let cell = row[column]
        guard var buffer = cell.bytes else { return nil }
        let malformed = Malformed(column: column)
        guard binary || cell.format == .binary, let dimensions = buffer.readInteger(as: Int32.self),
              buffer.readInteger(as: Int32.self) != nil, buffer.readInteger(as: UInt32.self) != nil else { throw malformed }
        if dimensions == 0 { return [] }
        guard dimensions == 1, let count = buffer.readInteger(as: Int32.self), count >= 0,
              buffer.readInteger(as: Int32.self) != nil else { throw malformed }
        var elements: [Element] = []
        elements.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let length = buffer.readInteger(as: Int32.self), length >= 0, buffer.readableBytes >= Int(length),
                  let value = element(&buffer, Int(length)) else { throw malformed }
            elements.append(value)
        }
        return elements
    }
}
