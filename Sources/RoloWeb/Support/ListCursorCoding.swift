import Foundation
import RoloStore

/// List cursors in URLs: opaque to the browser (base64url of sort key, NUL, card name),
/// and any text that does not decode to one is simply the start of the list.
enum ListCursorCoding {
    static func encode(_ cursor: ListingCursor) -> String {
        Tokens.base64URL(Data((cursor.sortKey + "\0" + cursor.name).utf8))
    }

    static func decode(_ text: String?) -> ListingCursor? {
        guard let text, !text.isEmpty, text.count <= 2048, let data = Tokens.fromBase64URL(text),
              let decoded = String(data: data, encoding: .utf8) else { return nil }
        let parts = decoded.split(separator: "\0", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        return ListingCursor(sortKey: String(parts[0]), name: String(parts[1]))
    }
}
