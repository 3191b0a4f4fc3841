import Synchronization

/// What one request served, for the access history: which book, how many cards read,
/// written and deleted, and whether the answer was the whole book. Counts only: the
/// history must never become a record of who looked up whom. The engine adds to it while
/// it answers (a streamed listing page by page); the server reads it once the answer is sent.
public final class RequestTally: Sendable {
    public struct Counts: Sendable, Hashable {
        /// The book the request was about; nil for discovery above the books.
        public var bookID: Int64?
        public var cardsRead = 0
        public var cardsWritten = 0
        public var cardsDeleted = 0
        public var fullDownload = false

        public init(bookID: Int64? = nil) { self.bookID = bookID }
    }

    private let state = Mutex(Counts())

    public init() {}

    public var counts: Counts { state.withLock { $0 } }

    func book(_ id: Int64) { state.withLock { $0.bookID = id } }
    func read(_ cards: Int, book id: Int64) {
        guard cards > 0 else { return book(id) }
        state.withLock { $0.bookID = id; $0.cardsRead += cards }
    }
    func wrote(book id: Int64) { state.withLock { $0.bookID = id; $0.cardsWritten += 1 } }
    func deleted(book id: Int64) { state.withLock { $0.bookID = id; $0.cardsDeleted += 1 } }
    func fullDownload(book id: Int64) { state.withLock { $0.bookID = id; $0.fullDownload = true } }
}
