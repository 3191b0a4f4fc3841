/// An address book, like `CNContainer`: what a CardDAV address book collection holds.
public struct Container: Sendable, Hashable {
    /// Stable identifier (the collection's slug on the server).
    public var identifier: String
    /// Display name.
    public var name: String
    /// Free-text description (CARDDAV:addressbook-description).
    public var description: String?

    public init(identifier: String, name: String, description: String? = nil) {
        self.identifier = identifier
        self.name = name
        self.description = description
    }
}
