/// Rules for the names that become URL path segments: users, collections, resources.
enum Naming {
    static let maximumBytes = 255

    /// Throws `StoreError.invalidName` unless `name` is a safe single path segment.
    static func validate(_ name: String, what: String) throws {
        if name.isEmpty { throw StoreError.invalidName("\(what) name is empty") }
        if name.utf8.count > maximumBytes {
            throw StoreError.invalidName("\(what) name is longer than \(maximumBytes) bytes")
        }
        if name == "." || name == ".." { throw StoreError.invalidName("\(what) name cannot be \(name)") }
        if name.unicodeScalars.contains(where: { $0 == "/" || $0.value < 0x20 || $0.value == 0x7F }) {
            throw StoreError.invalidName("\(what) name contains '/' or a control character")
        }
    }
}
