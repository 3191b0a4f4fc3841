/// The refusals both back ends give, spelled once: the same input gets the same error text
/// from SQLite and PostgreSQL because neither writes it.
extension StoreError {
    package static let tildeInHomeCollection =
        StoreError.invalidName("collection names in a home cannot contain '~' (reserved for shared books)")
    package static let addressBookHoldsNoCollections =
        StoreError.invalidName("address books live directly in the home and hold no collections")
    package static let appPasswordNameLength = StoreError.invalid("an app password needs a name (1-200 bytes)")
    package static let appPasswordNameReserved = StoreError.invalid("\"account password\" names the account's own password")
    package static let appPasswordNameControl = StoreError.invalid("an app password's name cannot contain control characters")
    package static let passwordTooShort = StoreError.invalid("a password needs at least 8 characters")
    package static let passwordTooLong = StoreError.invalid("a password can be at most 72 bytes (bcrypt reads no further)")
    package static let passwordControl = StoreError.invalid("a password cannot contain control characters")
    package static let shareWithOwner = StoreError.invalid("a book cannot be shared with its own owner")

    package static func appPasswordNameTaken(user: String, name: String) -> StoreError {
        .invalid("\(user) already has an app password named \(name)")
    }
    package static func noAddressBook(user: String, book: String) -> StoreError {
        .invalid("\(user) has no address book \(book)")
    }
    package static func notAnAddressBook(_ book: String) -> StoreError { .invalid("\(book) is not an address book") }
    package static func noSuchSharee(_ sharee: String) -> StoreError { .invalid("there is no user \(sharee)") }
    package static func pushRegistrationLimit(_ limit: Int) -> StoreError {
        .invalid("at most \(limit) push registrations per user and address book")
    }
}
