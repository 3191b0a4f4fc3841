/// Rules for the names that become URL path segments: users, collections, resources.
enum Naming {
    static let maximumBytes = 255

    /// Throws `StoreError.invalidName` unless `name` is a safe single path segment: no `/`
    /// (collection paths are stored joined by it) and no control character. User and
    /// collection names appear in logs, configuration and listings, where a line break or
    /// escape sequence would do harm.
    static func validate(_ name: String, what: String) throws {
        try validateSegment(name, what: what)
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw StoreError.invalidName("\(what) name contains a control character")
        }
    }

    /// Throws `StoreError.invalidName` unless `name` can be a resource's name. Control
    /// characters are allowed: clients name a card after its UID, and a UID with a line
    /// break (`%0A` in the URL) is real; the name is kept exactly and only ever written out
    /// percent-encoded. NUL is not: no vCard text holds one, and C APIs end strings there.
    static func validateResource(_ name: String) throws {
        try validateSegment(name, what: "resource")
        if name.unicodeScalars.contains("\0") { throw StoreError.invalidName("resource name contains NUL") }
    }

    private static func validateSegment(_ name: String, what: String) throws {
        if name.isEmpty { throw StoreError.invalidName("\(what) name is empty") }
        if name.utf8.count > maximumBytes {
            throw StoreError.invalidName("\(what) name is longer than \(maximumBytes) bytes")
        }
        if name == "." || name == ".." { throw StoreError.invalidName("\(what) name cannot be \(name)") }
        if name.unicodeScalars.contains("/") { throw StoreError.invalidName("\(what) name contains '/'") }
    }
}
