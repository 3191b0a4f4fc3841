import Foundation

/// A submitted form: `application/x-www-form-urlencoded` fields, or `multipart/form-data`
/// fields and files (a photo, a .vcf to import). Repeated names keep every value in order.
public struct FormData: Sendable {
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
    }

    public struct File: Sendable, Hashable {
        public var name: String
        public var filename: String
        public var contentType: String
        public var data: Data
    }

    public var fields: [Field] = []
    public var files: [File] = []

    public init(fields: [Field] = [], files: [File] = []) {
        self.fields = fields; self.files = files
    }

    /// The last value of a field (nil when absent).
    public subscript(name: String) -> String? { fields.last { $0.name == name }?.value }

    public func values(_ name: String) -> [String] { fields.filter { $0.name == name }.map(\.value) }

    public func file(_ name: String) -> File? { files.last { $0.name == name && !$0.data.isEmpty } }

    public enum FormError: Error, Equatable {
        case unsupportedType
        case malformed
    }

    /// Reads a request body by its `Content-Type`.
    public static func parse(body: Data, contentType: String?) throws(FormError) -> FormData {
        let type = (contentType ?? "").lowercased()
        if type.hasPrefix("multipart/form-data") {
            guard let boundary = parameter("boundary", in: contentType ?? "") else { throw .malformed }
            return try parseMultipart(body, boundary: boundary)
        }
        if type.isEmpty || type.hasPrefix("application/x-www-form-urlencoded") {
            return FormData(fields: parseURLEncoded(String(decoding: body, as: UTF8.self)))
        }
        throw .unsupportedType
    }

    static func parseURLEncoded(_ text: String) -> [Field] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return Field(name: decodeComponent(parts[0]), value: parts.count > 1 ? decodeComponent(parts[1]) : "")
        }
    }

    /// `+` is a space; `%XX` a byte; bytes that are not UTF-8 become U+FFFD.
    static func decodeComponent(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "+") {
                bytes.append(0x20)
            } else if byte == UInt8(ascii: "%"), iterator.count >= 2,
                      let high = hexValue(iterator[iterator.startIndex]),
                      let low = hexValue(iterator[iterator.startIndex + 1]) {
                bytes.append(high << 4 | low)
                iterator = iterator.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A parameter of a header value (`boundary=…`, `name="…"`), quotes removed.
    static func parameter(_ name: String, in header: String) -> String? {
        for part in header.split(separator: ";").dropFirst() {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard pieces.count == 2, pieces[0].trimmingCharacters(in: .whitespaces).lowercased() == name else { continue }
            var value = pieces[1].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
            }
            return value
        }
        return nil
    }

    /// RFC 7578: parts separated by `--boundary`, each with its headers, a blank line and
    /// the content; the last boundary ends in `--`.
    static func parseMultipart(_ body: Data, boundary: String) throws(FormError) -> FormData {
        let bytes = [UInt8](body)
        let delimiter = Array(("--" + boundary).utf8)
        var form = FormData()
        var positions: [Int] = []
        var searchFrom = 0
        while let found = find(delimiter, in: bytes, from: searchFrom) {
            positions.append(found)
            searchFrom = found + delimiter.count
        }
        guard positions.count >= 2 else { throw .malformed }
        for (start, end) in zip(positions, positions.dropFirst()) {
            var partStart = start + delimiter.count
            // After the delimiter: CRLF (or LF) before the part's headers.
            if partStart < bytes.count, bytes[partStart] == 0x0D { partStart += 1 }
            if partStart < bytes.count, bytes[partStart] == 0x0A { partStart += 1 }
            // The part ends before the CRLF that precedes the next delimiter.
            var partEnd = end
            if partEnd > partStart, bytes[partEnd - 1] == 0x0A { partEnd -= 1 }
            if partEnd > partStart, bytes[partEnd - 1] == 0x0D { partEnd -= 1 }
            guard partStart <= partEnd else { throw .malformed }
            // The part's headers end at the first blank line (looked for in its first 16 KB).
            let window = Array(bytes[partStart..<min(partEnd, partStart + 16_384)])
            guard let split = find([0x0D, 0x0A, 0x0D, 0x0A], in: window, from: 0).map({ ($0, 4) })
                    ?? find([0x0A, 0x0A], in: window, from: 0).map({ ($0, 2) }) else { throw .malformed }
            let headerText = String(decoding: window.prefix(split.0), as: UTF8.self)
            let content = Data(bytes[(partStart + split.0 + split.1)..<partEnd])
            var disposition = "", type = "application/octet-stream"
            for line in headerText.split(whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }) {
                let pieces = line.split(separator: ":", maxSplits: 1)
                guard pieces.count == 2 else { continue }
                let name = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
                let value = pieces[1].trimmingCharacters(in: .whitespaces)
                if name == "content-disposition" { disposition = value }
                if name == "content-type" { type = value }
            }
            guard let name = parameter("name", in: disposition) else { continue }
            if let filename = parameter("filename", in: disposition) {
                form.files.append(File(name: name, filename: filename, contentType: type, data: content))
            } else {
                form.fields.append(Field(name: name, value: String(decoding: content, as: UTF8.self)))
            }
        }
        return form
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        let first = needle[0]
        var index = start
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first {
                var matched = true
                for offset in 1..<needle.count where haystack[index + offset] != needle[offset] {
                    matched = false
                    break
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }
}
