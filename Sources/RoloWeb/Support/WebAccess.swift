import Synchronization

/// What one web request did to one book, for the access history: the server adds it to the
/// same hourly counts as the user's DAV requests (credential 0, the account password: the
/// web UI signs in with it), so an owner sees what a sharee read through the web UI too.
public struct WebAccess: Sendable, Hashable {
    /// The signed-in user.
    public var user: String
    public var bookID: Int64
    /// Contacts whose details the answer showed: the rows of a list page, a contact.
    public var cardsRead = 0
    public var cardsWritten = 0
    public var cardsDeleted = 0
    /// An export of a whole book (or of a group or search, read in full).
    public var fullDownload = false

    public init(user: String, bookID: Int64) { self.user = user; self.bookID = bookID }
}

/// Counts a request's reads and writes while its page runs (pages run parts concurrently).
final class WebTally: Sendable {
    private let counts = Mutex((read: 0, written: 0, deleted: 0, full: false))

    func read(_ cards: Int) { counts.withLock { $0.read += cards } }
    func wrote(_ cards: Int) { counts.withLock { $0.written += cards } }
    func deleted(_ cards: Int) { counts.withLock { $0.deleted += cards } }
    func fullDownload() { counts.withLock { $0.full = true } }

    func access(user: String, bookID: Int64) -> WebAccess {
        let counts = counts.withLock { $0 }
        var access = WebAccess(user: user, bookID: bookID)
        access.cardsRead = counts.read; access.cardsWritten = counts.written
        access.cardsDeleted = counts.deleted; access.fullDownload = counts.full
        return access
    }
}
