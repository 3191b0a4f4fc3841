/// ASCII bytes the reader looks for.
enum Byte {
    static let lf: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let comma: UInt8 = 0x2C
    static let equals: UInt8 = 0x3D
    static let dquote: UInt8 = 0x22
    static let dot: UInt8 = 0x2E
    static let backslash: UInt8 = 0x5C
    static let caret: UInt8 = 0x5E
}

/// One physical line of the input: `start..<end` excludes the line break.
struct PhysicalLine {
    var start: Int
    var end: Int
    /// 1-based line number.
    var number: Int

    var isEmpty: Bool { start == end }
}

/// Splits a byte buffer at CRLF, bare LF or bare CR, in one pass.
struct PhysicalLineIterator {
    let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var number = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The number of the last line handed out (the last line of the input once exhausted).
    var lastNumber: Int { number }

    mutating func next() -> PhysicalLine? {
        guard position < bytes.count else { return nil }
        let start = position
        var index = start
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte == Byte.lf || byte == Byte.cr { break }
            index += 1
        }
        let end = index
        if index < count {
            if bytes[index] == Byte.cr, index + 1 < count, bytes[index + 1] == Byte.lf {
                index += 2
            } else {
                index += 1
            }
        }
        position = index
        number += 1
        return PhysicalLine(start: start, end: end, number: number)
    }
}
