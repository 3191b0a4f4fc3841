import DAVXML
import Foundation
import RoloStore

/// The rows of a listing read a page at a time, each page its own short store read, so a
/// multistatus of any size holds one page of rows, and no read transaction stays open
/// while the previous page is on its way to the client.
protocol ListingPages: Sendable {
    associatedtype Item: Sendable
    /// True once `nextPage()` has returned the last page.
    var isFinished: Bool { get }
    /// The next rows; may be empty (e.g. filtered out) while not yet finished.
    mutating func nextPage() async throws -> [Item]
    /// The book's number of cards when the pages may read them all, learnt with the first
    /// page (`CardReads.wholeBook`); nil when not counted so.
    var wholeBookCards: Int? { get }
}

extension ListingPages {
    var wholeBookCards: Int? { nil }
}

/// `Base`'s pages with the next one read while the caller writes the current one. The
/// first page is read where the caller runs (an SQLite store reads a page on the calling
/// thread: nothing could overlap it, and a hop to another thread and back cost more than a
/// small page's read). Each next page is read on `ReadAheadExecutor`'s threads while the
/// event loop writes the current one, so on two cores they overlap instead of taking
/// turns. At most one read is ahead; `cancel()` drops it when the answer ends early.
struct PrefetchingPages<Base: ListingPages>: ListingPages {
    /// The pages as of the last page returned (what `tail` of a listing reads).
    private(set) var base: Base
    private var ahead: Task<(Base, [Base.Item]), any Error>?

    init(_ base: Base) { self.base = base }

    var isFinished: Bool { base.isFinished }

    mutating func nextPage() async throws -> [Base.Item] {
        let page: [Base.Item]
        if let ahead {
            self.ahead = nil
            (base, page) = try await ahead.value
        } else {
            page = try await base.nextPage()
        }
        if !base.isFinished {
            let current = base
            ahead = Task(executorPreference: ReadAheadExecutor.shared) {
                var pages = current
                let page = try await pages.nextPage()
                return (pages, page)
            }
        }
        return page
    }

    /// Drops the page read ahead, if any.
    mutating func cancel() {
        ahead?.cancel()
        ahead = nil
    }
}

/// Runs the read-ahead of listings on Dispatch's worker threads. With NIO's event loops as
/// Swift's global executor, a plain `Task` stays on the loop that starts it, so the next
/// page would be read on the thread that writes the current one, in turn rather than at
/// the same time.
final class ReadAheadExecutor: TaskExecutor {
    static let shared = ReadAheadExecutor()
    private let queue = DispatchQueue(label: "rolo.read-ahead", qos: .userInitiated, attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// How a listing writes one item's response. `rows` is a plain call, for responses written
/// straight from the row (`CardResponseWriter`); `generic` may suspend (the property
/// registry, dead properties). The difference matters: with NIO's event loops as Swift's
/// global executor, a job runs isolated to its loop's serial executor, so entering any
/// nonisolated async function hops to the generic executor, which is an enqueue on the
/// loop and a later turn of it. Called per card, that was two hops per card: 20,000 for a
/// 10,000-card PROPFIND, a quarter of its CPU. Items are therefore written in runs (up to
/// a chunk or the end of a page), one async call per run.
enum ItemWriter<Item: Sendable>: Sendable {
    case rows(@Sendable (Item, inout Multistatus) -> Void)
    case generic(@Sendable (Item, inout Multistatus) async throws -> Void)

    /// Writes items off the front of `page` until the page is done or `multistatus` holds
    /// `limit` bytes not yet handed over.
    func write(_ page: inout ArraySlice<Item>, into multistatus: inout Multistatus, until limit: Int) async throws {
        switch self {
        case .rows(let write):
            while multistatus.pendingByteCount < limit, let item = page.popFirst() { write(item, &multistatus) }
        case .generic(let write):
            while multistatus.pendingByteCount < limit, let item = page.popFirst() { try await write(item, &multistatus) }
        }
    }
}

extension DAVService {
    /// A 207 whose responses come from `pages`. `multistatus` already holds what comes before
    /// them (a collection's own response); `writer` writes one row's response; `tail`
    /// writes what comes after (a 507 for truncation, 404s of a multiget) once the pages are
    /// done, and the document ends with `syncToken` when given.
    ///
    /// An answer that fits in one chunk of `streamChunkSize` bytes is returned whole, with
    /// its length. A bigger one is streamed: the first chunk written here goes out first,
    /// then the rest of the rows are read page by page while the body is sent chunk after
    /// chunk. No buffer ever holds more than a chunk (bigger buffers come from glibc's mmap
    /// and cost a page fault per 4 KB touched, and a whole answer was copied twice more on
    /// its way to the socket), and the chunk buffer is reused once the connection has
    /// copied a chunk out of it. A failure once streaming (a store error on a later page)
    /// aborts the connection (`DAVBodyStream`); every failure that can be known in advance
    /// happened before the 207 was decided.
    func pagedMultistatus<Pages: ListingPages>(
        _ multistatus: consuming Multistatus, pages: Pages, syncToken: String? = nil,
        writer: ItemWriter<Pages.Item>, reads: CardReads? = nil,
        tail: @escaping @Sendable (Pages, inout Multistatus) -> Void = { _, _ in }
    ) async throws -> DAVResponse {
        let chunkSize = configuration.streamChunkSize
        let chunkCapacity = chunkSize + chunkSize / 4
        var pages = PrefetchingPages(pages)
        var multistatus = multistatus
        multistatus.reserve(bytes: chunkCapacity)
        var page = try await pages.nextPage()[...]
        var reads = reads
        if let cards = pages.base.wholeBookCards { reads?.wholeBook = cards }
        while true {
            do {
                let before = page.count
                try await writer.write(&page, into: &multistatus, until: chunkSize)
                reads?.count(before - page.count)
            } catch {
                pages.cancel()
                throw error
            }
            // A body left in the store is read while the answer is sent: streamed.
            if multistatus.pendingByteCount >= chunkSize || multistatus.holdsStoredBodies { break }
            if pages.isFinished {
                tail(pages.base, &multistatus)
                return multistatusResponse(multistatus.finish(syncToken: syncToken))
            }
            page = try await pages.nextPage()[...]
        }
        let start = multistatus
        let remaining = pages
        let firstPage = page
        let counted = reads
        let stream = DAVBodyStream { [self] write in
            var multistatus = start
            var pages = remaining
            var page = firstPage
            do {
                while true {
                    if multistatus.pendingByteCount >= chunkSize || multistatus.holdsStoredBodies {
                        try await multistatus.send(chunkSize: chunkSize, read: readStoredBody, write: write)
                    }
                    let before = page.count
                    try await writer.write(&page, into: &multistatus, until: chunkSize)
                    counted?.count(before - page.count)
                    if multistatus.pendingByteCount >= chunkSize { continue }
                    if pages.isFinished { break }
                    page = try await pages.nextPage()[...]
                }
            } catch {
                pages.cancel()
                throw error
            }
            tail(pages.base, &multistatus)
            if multistatus.holdsStoredBodies {
                try await multistatus.send(chunkSize: chunkSize, read: readStoredBody, write: write)
            }
            try await write(multistatus.finishBytes(syncToken: syncToken))
        }
        return DAVResponse(status: 207, headers: [("Content-Type", Self.multistatusContentType)], streamedBody: stream)
    }
}

extension DAVService {
    /// A body a page left in the store, read when its response is sent. A card changed
    /// since its page was read gives its new body (its response still names the ETag the
    /// page read, so the client's next sync fetches it again); a card deleted meanwhile has
    /// no body to give, and the answer is aborted like any store failure while streaming.
    func readStoredBody(_ body: StoredBody) async throws -> Data {
        guard let stored = try await store.resource(collectionID: body.collectionID, name: body.name) else {
            throw DAVError(500, message: "The card \(body.name) was deleted while the answer was sent.")
        }
        return stored.data
    }
}

/// Where a listing counts the cards whose address data it served (the access history).
struct CardReads: Sendable {
    let tally: RequestTally
    let book: Int64
    /// The number of cards in the book, when this request may read them all: once it has
    /// read as many, the access history flags a full download.
    var wholeBook: Int?

    /// Nil unless the request keeps a tally and the answer carries address data: a listing
    /// of ETags reads no card.
    init?(_ request: DAVRequest, book: Int64, withBodies: Bool) {
        guard let tally = request.tally else { return nil }
        tally.book(book)
        guard withBodies else { return nil }
        self.tally = tally; self.book = book
    }

    /// The book's size as `wholeBook` wants it, from a count that stops at `most + 1`: a
    /// request reading at most `most` cards can read the whole book only if it holds no more.
    static func wholeBook(counted cards: Int, atMost most: Int) -> Int? {
        most > 0 && cards <= most ? cards : nil
    }

    func count(_ cards: Int) {
        tally.read(cards, book: book)
        if let wholeBook, wholeBook > 0, tally.counts.cardsRead >= wholeBook { tally.fullDownload(book: book) }
    }
}

extension DAVService {
    /// `CardReads` for a request that reads at most `most` cards of `book` (a multiget's
    /// hrefs, a query's hits), flagging a full download when it reads as many as the book
    /// holds: the whole book read a piece at a time is still the whole book (Docs/privacy.md
    /// tells users to watch the flag). The book is counted only when the answer carries
    /// address data and a tally is kept, with one count that stops at `most + 1`, or the
    /// one the caller read with its hits (`bookCards`, `CardStore.queryHits`). A
    /// multiget naming one card twice counts it twice: the flag may then come early, never late.
    func coveringReads(_ request: DAVRequest, book: Int64, withBodies: Bool, atMost most: Int,
                       bookCards counted: Int? = nil) async throws -> CardReads? {
        guard var reads = CardReads(request, book: book, withBodies: withBodies), most > 0 else {
            return CardReads(request, book: book, withBodies: withBodies)
        }
        let cards: Int
        if let counted { cards = counted } else {
            cards = try await store.resourceCount(collectionID: book, cap: most == .max ? .max : most + 1)
        }
        reads.wholeBook = CardReads.wholeBook(counted: cards, atMost: most)
        return reads
    }

    /// Whether `coveringReads` would count the book: the request keeps a tally and its
    /// answer carries address data.
    func countsWholeBookReads(_ request: DAVRequest, withBodies: Bool) -> Bool {
        request.tally != nil && withBodies
    }
}

/// The cards of a book in name order, `pageSize` at a time, with their bodies or without;
/// a body over `bodyLimit` bytes is left in the store (`StoredResource.bodyLeftOut`).
struct BookPages: ListingPages {
    let store: any CardStore
    let collectionID: Int64
    let withBodies: Bool
    let pageSize: Int
    let bodyLimit: Int
    private var lastName: String?
    private(set) var isFinished = false

    init(store: any CardStore, collectionID: Int64, withBodies: Bool, pageSize: Int, bodyLimit: Int) {
        self.store = store; self.collectionID = collectionID; self.withBodies = withBodies; self.pageSize = pageSize
        self.bodyLimit = bodyLimit
    }

    /// Reads one row more than a page: when it is there, more pages follow (it starts the
    /// next one); when not, this page is the last. Judged by a full page alone, a book of
    /// exactly a page's multiple of cards (carddav-bench's 1,000 and 10,000) cost one more
    /// read that found nothing, which on PostgreSQL is a round trip from a read-ahead thread.
    mutating func nextPage() async throws -> [StoredResource] {
        let asked = pageSize < Int.max ? pageSize + 1 : pageSize
        var page: [StoredResource]
        if withBodies {
            page = try await store.allResources(collectionID: collectionID, after: lastName, limit: asked, bodyLimit: bodyLimit)
        } else {
            page = try await store.listResources(collectionID: collectionID, after: lastName, limit: asked)
                .map { StoredResource(info: $0, data: Data()) }
        }
        isFinished = page.count <= pageSize
        if !isFinished { page.removeLast(page.count - pageSize) }
        lastName = page.last?.info.name ?? lastName
        return page
    }
}

/// Named cards of a book (an index query's hits), `pageSize` names per store read, in the
/// order of `names`; names no longer in the book are skipped.
struct NamedCardPages: ListingPages {
    let cards: NamedCardReader
    let names: [String]
    let pageSize: Int
    /// The cards of the first page's names, read with the names (`CardStore.queryHits`).
    private var firstPage: [StoredResource]?
    private var position = 0
    var isFinished: Bool { position >= names.count }

    init(_ cards: NamedCardReader, names: [String], pageSize: Int, firstPage: [StoredResource]? = nil) {
        self.cards = cards; self.names = names; self.pageSize = pageSize; self.firstPage = firstPage
    }

    mutating func nextPage() async throws -> [StoredResource] {
        let chunk = Array(names[position..<min(position + pageSize, names.count)])
        position += chunk.count
        let byName: [String: StoredResource]
        if let read = firstPage {
            firstPage = nil
            byName = NamedCardReader.byName(read)
        } else {
            byName = try await cards.read(chunk)
        }
        return chunk.compactMap { byName[$0] }
    }
}

/// Reads named cards of a book, with their bodies only when the answer carries them (and
/// then only those up to `bodyLimit` bytes: see `DAVConfiguration.pageBodyLimit`).
struct NamedCardReader: Sendable {
    let store: any CardStore
    let collectionID: Int64
    let withBodies: Bool
    let bodyLimit: Int

    /// The cards found, by name (bodies empty unless `withBodies`).
    func read(_ names: [String]) async throws -> [String: StoredResource] {
        guard !names.isEmpty else { return [:] }
        let found = withBodies
            ? try await store.resources(collectionID: collectionID, names: names, bodyLimit: bodyLimit)
            : try await store.resourceInfos(collectionID: collectionID, names: names).map { StoredResource(info: $0, data: Data()) }
        return Self.byName(found)
    }

    /// `read(_:)`'s cards (with their bodies) and the book's count up to `cap`, read together
    /// (`CardStore.resources(collectionID:names:bodyLimit:countingBookUpTo:)`).
    func read(_ names: [String], countingBookUpTo cap: Int) async throws -> (cards: [String: StoredResource], bookCards: Int) {
        let (found, bookCards) = try await store.resources(collectionID: collectionID, names: names, bodyLimit: bodyLimit,
                                                           countingBookUpTo: cap)
        return (Self.byName(found), bookCards)
    }

    /// The cards by name, the first of each name kept.
    static func byName(_ found: [StoredResource]) -> [String: StoredResource] {
        var byName: [String: StoredResource] = [:]
        byName.reserveCapacity(found.count)
        for card in found where byName[card.info.name] == nil { byName[card.info.name] = card }
        return byName
    }
}

/// A change of a sync-collection answer with the card as it is now (nil when deleted).
struct ChangedCard: Sendable {
    var change: ChangeSet.Change
    var card: StoredResource?
}

/// The entries of a change set, `pageSize` at a time, with the present cards read per page.
struct ChangePages: ListingPages {
    let cards: NamedCardReader
    let changes: [ChangeSet.Change]
    let pageSize: Int
    /// The changed cards as the store read them with the changes (`ChangeSet.cards`): used
    /// when no body is wanted, instead of reading them again.
    let known: [String: ResourceInfo]?
    private var position = 0
    var isFinished: Bool { position >= changes.count }

    init(_ cards: NamedCardReader, changes: ChangeSet, pageSize: Int) {
        self.cards = cards; self.changes = changes.changes; self.pageSize = pageSize
        known = cards.withBodies ? nil : changes.cards
    }

    mutating func nextPage() async throws -> [ChangedCard] {
        let chunk = changes[position..<min(position + pageSize, changes.count)]
        position += chunk.count
        if let known {
            // A name without a row was deleted by then: no card, as `read` finds none.
            return chunk.map { ChangedCard(change: $0, card: $0.deleted ? nil : known[$0.name].map { StoredResource(info: $0, data: Data()) }) }
        }
        let byName = try await cards.read(chunk.filter { !$0.deleted }.map(\.name))
        return chunk.map { ChangedCard(change: $0, card: $0.deleted ? nil : byName[$0.name]) }
    }
}
