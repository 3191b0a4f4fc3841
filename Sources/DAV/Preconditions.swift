import Foundation
import RoloStore

/// HTTP conditional headers: `If-Match` / `If-None-Match` become the store's
/// `WritePrecondition` (checked inside the write transaction); the WebDAV `If` header
/// (RFC 4918 §10.4) is evaluated against the current ETag.
enum Preconditions {
    /// The precondition for a write; `If-Match` wins when both headers are present. A
    /// jCard ETag counts as its card's stored one (`CardMediaType.storedETag`).
    static func write(_ headers: [String: String]) -> WritePrecondition {
        if let ifMatch = headers["if-match"] {
            let tags = entityTags(ifMatch).map(CardMediaType.storedETag)
            return tags == ["*"] ? .ifMatchAny : .ifMatch(tags)
        }
        if let ifNoneMatch = headers["if-none-match"] {
            let tags = entityTags(ifNoneMatch).map(CardMediaType.storedETag)
            return tags == ["*"] ? .ifNoneMatchAny : .ifNoneMatch(tags)
        }
        return .none
    }

    /// `"a", W/"b"` -> [`"a"`, `"b"`]; `*` -> [`*`]. Trims HTTP's optional white space
    /// (space, tab) on the bytes: Foundation's `trimmingCharacters(in:)` cost a PUT more
    /// than the rest of its precondition handling.
    static func entityTags(_ header: String) -> [String] {
        header.utf8.split(separator: UInt8(ascii: ",")).compactMap { part in
            var tag = part
            while let first = tag.first, first == 0x20 || first == 0x09 { tag = tag.dropFirst() }
            while let last = tag.last, last == 0x20 || last == 0x09 { tag = tag.dropLast() }
            if tag.starts(with: "W/".utf8) { tag = tag.dropFirst(2) }
            return tag.isEmpty ? nil : String(Substring(tag))
        }
    }

    /// Evaluates the `If` header: true when any of its lists holds. A state token holds when
    /// it is one of `activeTokens` (the locks on the resource); entity tags in brackets are
    /// compared with the resource's current (stored) ETag, a jCard one as its card's.
    static func ifHeaderHolds(_ header: String?, etag: String?, activeTokens: Set<String> = []) -> Bool {
        guard let header else { return true }
        var lists: [Bool] = []
        var index = header.startIndex
        var current: Bool?
        var negate = false
        while index < header.endIndex {
            let character = header[index]
            switch character {
            case "(":
                current = true; negate = false
            case ")":
                if let value = current { lists.append(value) }
                current = nil
            case "<":
                let end = header[index...].firstIndex(of: ">") ?? header.endIndex
                if let value = current {
                    let token = String(header[header.index(after: index)..<end])
                    let holds = activeTokens.contains(token)
                    current = value && (negate ? !holds : holds)
                    negate = false
                }
                index = end
            case "[":
                let end = header[index...].firstIndex(of: "]") ?? header.endIndex
                let tag = String(header[header.index(after: index)..<end]).trimmingCharacters(in: .whitespaces)
                let stripped = tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
                let matches = etag == CardMediaType.storedETag(stripped)
                current = (current ?? true) && (negate ? !matches : matches)
                negate = false
                index = end
            case "N", "n":
                if header[index...].lowercased().hasPrefix("not") {
                    negate = true
                    index = header.index(index, offsetBy: 2)
                }
            default:
                break
            }
            if index < header.endIndex { index = header.index(after: index) }
        }
        return lists.isEmpty || lists.contains(true)
    }

    /// The state tokens (lock tokens) named anywhere in the `If` header's lists.
    static func stateTokens(_ header: String?) -> [String] {
        guard let header else { return [] }
        var tokens: [String] = []
        var depth = 0
        var index = header.startIndex
        while index < header.endIndex {
            switch header[index] {
            case "(": depth += 1
            case ")": depth -= 1
            case "<":
                let end = header[index...].firstIndex(of: ">") ?? header.endIndex
                if depth > 0 { tokens.append(String(header[header.index(after: index)..<end])) }
                index = end
            case "[":
                index = header[index...].firstIndex(of: "]") ?? header.endIndex
            default: break
            }
            if index < header.endIndex { index = header.index(after: index) }
        }
        return tokens
    }
}
