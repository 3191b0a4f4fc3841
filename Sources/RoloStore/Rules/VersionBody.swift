import Crypto
import Foundation

/// How a card version's bytes are kept (issue 31): each property longer than `partSize`
/// bytes (a PHOTO, LOGO or KEY, folded lines included) apart, under the SHA-256 of its bytes,
/// and in its place a NUL and those 64 hex digits. Versions that share a photo then keep it
/// once, and an edit of a phone number costs the text of the card, not its photo. The same
/// split on every back end, off the writer (as the ETag); `assemble` gives the bytes back
/// exactly. A body holding a NUL of its own is kept whole.
///
/// A part the current card still holds is not kept again (schema v15 / v8): the version
/// rows name it by hash (with where it starts in the body, `Part.start`), and the bytes are
/// read from the current card. Only when a write replaces or deletes a card, or moves it
/// away, does each part the new body no longer holds move into the history's parts
/// (`card_version_parts`), so a version's part is always in one of the two places.
package struct VersionBody: Sendable, Hashable {
    package static let partSize = 1024

    package struct Part: Sendable, Hashable {
        package var hash: String
        package var data: Data
        /// Where the part starts in the whole body (bytes), so a part the current card holds
        /// can be copied out of its body in SQL when the card is replaced.
        package var start: Int
    }

    /// The body with its large properties replaced by references.
    package var skeleton: Data
    package var parts: [Part]

    /// Most cards have no property of `partSize` bytes: they are their own skeleton, found
    /// by one pass over the bytes without a copy (the copy and the skeleton built for every
    /// PUT were 3 % of a SQLite PUT's CPU, issue 34).
    package init(_ data: Data) {
        let split = data.withUnsafeBytes { bytes -> (skeleton: Data, parts: [Part])? in
            guard bytes.count >= Self.partSize, memchr(bytes.baseAddress!, 0, bytes.count) == nil else { return nil }
            var large = false
            Self.forEachProperty(in: bytes) { start, spanEnd, _ in large = large || spanEnd - start >= Self.partSize }
            guard large else { return nil }
            var out: [UInt8] = [], parts: [Part] = []
            out.reserveCapacity(min(bytes.count, 4096))
            Self.forEachProperty(in: bytes) { start, spanEnd, lineEnd in
                if spanEnd - start >= Self.partSize {
                    let part = Data(bytes[start..<spanEnd])
                    let hash = Self.hex(SHA256.hash(data: part))
                    out.append(0)
                    out.append(contentsOf: hash.utf8)
                    if !parts.contains(where: { $0.hash == hash }) { parts.append(Part(hash: hash, data: part, start: start)) }
                } else {
                    out.append(contentsOf: bytes[start..<spanEnd])
                }
                out.append(contentsOf: bytes[spanEnd..<min(lineEnd + 1, bytes.count)])
            }
            return (Data(out), parts)
        }
        skeleton = split?.skeleton ?? data
        parts = split?.parts ?? []
    }

    /// Each property of the body, folded lines included: where it starts, where its bytes
    /// end (before the CR of its last line's CRLF) and where its last line ends (its LF, or
    /// the body's end).
    private static func forEachProperty(in bytes: UnsafeRawBufferPointer, _ visit: (Int, Int, Int) -> Void) {
        var start = 0
        while start < bytes.count {
            // Lines that begin with a space or a tab continue the property.
            var lineEnd = start
            while true {
                guard let found = memchr(bytes.baseAddress! + lineEnd, 10, bytes.count - lineEnd) else { lineEnd = bytes.count; break }
                let feed = UnsafeRawPointer(found) - bytes.baseAddress!
                if feed + 1 < bytes.count, bytes[feed + 1] == 32 || bytes[feed + 1] == 9 {
                    lineEnd = feed + 1
                    continue
                }
                lineEnd = feed
                break
            }
            var spanEnd = lineEnd
            if spanEnd < bytes.count, spanEnd > start, bytes[spanEnd - 1] == 13 { spanEnd -= 1 }
            visit(start, spanEnd, lineEnd)
            start = lineEnd + 1
        }
    }

    /// The hashes a skeleton refers to, in order.
    package static func references(in skeleton: Data) -> [String] {
        let bytes = [UInt8](skeleton)
        var hashes: [String] = [], index = 0
        while let nul = bytes[index...].firstIndex(of: 0) {
            guard nul + 65 <= bytes.count else { break }
            hashes.append(String(decoding: bytes[(nul + 1)..<(nul + 65)], as: UTF8.self))
            index = nul + 65
        }
        return hashes
    }

    /// The original bytes; nil when a part is missing.
    package static func assemble(_ skeleton: Data, parts: [String: Data]) -> Data? {
        guard skeleton.contains(0) else { return skeleton }
        let bytes = [UInt8](skeleton)
        var out = Data(), index = 0
        while let nul = bytes[index...].firstIndex(of: 0) {
            guard nul + 65 <= bytes.count,
                  let part = parts[String(decoding: bytes[(nul + 1)..<(nul + 65)], as: UTF8.self)] else { return nil }
            out.append(contentsOf: bytes[index..<nul])
            out.append(part)
            index = nul + 65
        }
        out.append(contentsOf: bytes[index...])
        return out
    }

    /// The original bytes of a version whose parts are in `stored` (the history's) or, for
    /// those the card still holds, in `currentBody`; nil when a part is in neither.
    package static func assemble(_ skeleton: Data, stored: [String: Data], currentBody: Data?) -> Data? {
        if let whole = assemble(skeleton, parts: stored) { return whole }
        guard let currentBody else { return nil }
        var parts = stored
        for part in VersionBody(currentBody).parts where parts[part.hash] == nil { parts[part.hash] = part.data }
        return assemble(skeleton, parts: parts)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func hex(_ digest: SHA256.Digest) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        for byte in digest {
            bytes.append(hexDigits[Int(byte >> 4)])
            bytes.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
