/// Percent-encoding of href path segments (RFC 3986 `pchar`, conservatively: only
/// unreserved characters and `@` stay literal), so a name holding any character (a line
/// break from a UID, a space, `%`) is written the one way and the XML around stays
/// well-formed.
public enum PercentEncoding {
    private static let hex = Array("0123456789ABCDEF".utf8)

    static func encodeSegment(_ segment: String) -> String {
        // Most names (`<uuid>.vcf`) need no encoding: one table load per byte tells (a
        // listing checks every card's name).
        var segment = segment
        let literal = segment.withUTF8 { bytes in
            literalTable.withUnsafeBufferPointer { table in !bytes.contains { !table[Int($0)] } }
        }
        if literal { return segment }
        var out = [UInt8]()
        out.reserveCapacity(segment.utf8.count * 3)
        for byte in segment.utf8 {
            if isLiteral(byte) {
                out.append(byte)
            } else {
                out.append(0x25); out.append(hex[Int(byte >> 4)]); out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `isLiteral` of every byte value.
    private static let literalTable: [Bool] = (0...255).map { isLiteral(UInt8($0)) }

    private static func isLiteral(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E, 0x40: true
        default: false
        }
    }

    /// Decodes the `%XX` sequences of a path; nil when a sequence is malformed, the bytes
    /// are not UTF-8, or one encodes `/` or NUL. A path is split into names after decoding,
    /// so an encoded slash would read as two segments; no name may hold one (nor NUL, see
    /// `Naming`). Every other byte, control characters included, decodes.
    public static func decode(_ string: String) -> String? {
        guard string.utf8.contains(0x25) else { return string }
        var out = [UInt8]()
        var bytes = string.utf8.makeIterator()
        while let byte = bytes.next() {
            if byte == 0x25 {
                guard let high = bytes.next().flatMap(hexValue), let low = bytes.next().flatMap(hexValue) else { return nil }
                let decoded = high << 4 | low
                guard decoded != 0x2F, decoded != 0 else { return nil }
                out.append(decoded)
            } else {
                out.append(byte)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
