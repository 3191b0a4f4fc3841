import RoloStore
import Synchronization

/// The inline GET's reads, and a book's repeated reads (cards by name, listing pages, query
/// answers), kept in memory (`PostgresStore.readInline`, `resources(collectionID:names:…)`,
/// `listResources(collectionID:after:limit:)`, `queryHits`), so that what was read before
/// costs no round trip: on PostgreSQL the backend's share of a GET alone took more CPU than
/// SQLite's whole GET, and its share of a multiget of 100 about as much as SQLite's whole
/// multiget (Docs/performance.md).
///
/// **Kept true by notices.** A cached answer is served only while this process listens
/// for the database's notices (`PostgresStore.followCacheNotices`), and only if nothing it
/// heard since says it changed:
/// - A card's answer, and each of a book's reads (`BookCards`), remembers the book's seq as
///   its statement read it. Every write to a book moves that seq,
///   and the book's trigger announces the new one (`rolo_book_changes`) to every process;
///   this process's own writes note it before they are acknowledged (`bookChanged`). An
///   answer older than the newest seq heard for its book is not served.
/// - What else a GET's answer depends on (a user's password, disabled or app-passwords-only
///   flag, name; a book's path, kind, name or removal) is announced on
///   `rolo_sign_in_changes` by triggers, and forgets everything (`forgetAll`), as does this
///   process's own change of any of it.
/// - A read only fills the cache if nothing was forgotten between its start and its answer
///   (`Ticket`), so a read that raced a change never stores the older state.
///
/// **With other processes, GETs after a fence.** Between another process's commit and its
/// notice arriving here, a GET would answer the card as it was: measured with two processes,
/// a GET sent to one right after a PUT through the other answered the old card 15 times in
/// 2,000. So while this is the only Rolo process on the database (`setAlone`: every process,
/// `rolo` commands included, announces itself when it starts, and writes nothing until the
/// processes running then have acknowledged it, having stopped serving unfenced; and every
/// process counts the others each second) GETs are served at once: a process's own writes
/// note their seq before they are answered, so alone it never answers older than what it
/// acknowledged. With others, a GET is served at once while this process holds a read
/// lease (`ReadLeases`: every write, by any process, is answered only once each process
/// holding one has heard it, or that lease ran out); without one, only once a fence sent
/// after it asked has come back (`NoticesFence`): every notice of a commit acknowledged
/// before the fence was sent has then been applied here. A book's reads
/// are served with other processes to a request whose own look-up of the book read the seq
/// they were read at (`LookupAhead.bookSeq`): that look-up came after the request, so every
/// write acknowledged before it is in that seq, whichever process made it. Losing the
/// notices' connection stops the cache (and forgets it) until they are heard again; after a
/// failover the notices come from the new primary or the cache stays off. Writes never use
/// a kept card. Some writes take the rest from memory: an update judged on its ETag alone,
/// or a new card (`LookupAhead.writesUnread`), by the owner of the book, while this process
/// is alone, takes the login's stamp and the book (`writeTarget`), and its batch's
/// statement judges the card itself; a lock granted here forgets those
/// (`forgetWriteTargets`).
final class CardCache: Sendable {
    /// Taken when a read starts: its answer may be kept only if still current when it comes.
    struct Ticket: Sendable {
        fileprivate let generation: UInt64
    }

    /// Taken when a read of a book (cards by name, a page, a query) starts.
    struct BookTicket: Sendable {
        fileprivate let generation: UInt64
    }

    /// By bytes, as the database compares them: two card names that Swift's `==` takes for
    /// one ("é" and "e\u{301}") are two cards.
    private struct Key: Hashable, Sendable {
        var owner: ExactString
        var path: ExactString
        var name: ExactString

        init(owner: String, path: String, name: String) {
            self.owner = ExactString(owner)
            self.path = ExactString(path)
            self.name = ExactString(name)
        }
    }

    /// What reads of one book found at one seq of the book.
    private struct BookCards: Sendable {
        /// The book's seq as the reads' statements read it.
        var seq: Int64
        /// Each name asked: its card (with its whole body), or nil when the book has none.
        var cards: [ExactString: StoredResource?] = [:]
        /// The book's cards counted up to `cap`, when a read counted them.
        var count: (value: Int, cap: Int)?
        /// Listing pages (`listResources(collectionID:after:limit:)`) by where they start.
        var pages: [Page: [ResourceInfo]] = [:]
        /// Queries' answers (`queryHits`).
        var queries: [QueryKey: QueryHits] = [:]
        var bytes = 0
    }

    /// A query as `PostgresStore.queryHits` is asked it; its predicate by the bytes of its
    /// description, so that texts Swift's `==` takes for one are two queries.
    struct QueryKey: Hashable, Sendable {
        var predicate: ExactString
        var limit: Int?
        var countingBook: Bool
        var firstPage: Int
        var withBodies: Bool
        var bodyLimit: Int

        init(predicate: IndexPredicate, limit: Int?, countingBook: Bool, firstPage: Int, withBodies: Bool, bodyLimit: Int) {
            self.predicate = ExactString(String(reflecting: predicate))
            self.limit = limit
            self.countingBook = countingBook
            self.firstPage = firstPage
            self.withBodies = withBodies
            self.bodyLimit = bodyLimit
        }
    }

    private struct Page: Hashable, Sendable {
        var after: ExactString
        var limit: Int
    }

    private struct State: Sendable {
        /// Which server's notices are heard (`PrimaryChoice` index), or nil while none are.
        var listeningTo: Int?
        /// Whether this is the only Rolo process on the database (`PostgresStore.followCacheNotices`).
        var alone = false
        /// Moves each time another process's announcement is heard (`heardAnotherProcess`).
        var arrivals: UInt64 = 0
        /// Until when this process holds a read lease (`ReadLeases`): with others on the
        /// database, kept answers are served without a fence until then.
        var leasedUntil: ContinuousClock.Instant?
        /// When a read last asked for a kept answer with another process on the database: a
        /// lease is renewed only while reads ask (`wantsLease`).
        var askedAt: ContinuousClock.Instant?

        /// Whether kept answers may be served without a fence now.
        var unfenced: Bool {
            alone || leasedUntil.map { ContinuousClock.now < $0 } ?? false
        }
        /// Moves at every `forgetAll`, so that reads started before it keep nothing.
        var generation: UInt64 = 0
        var cards: [Key: LocatedResource] = [:]
        /// Reads of books (cards by name, pages, queries), by book.
        var books: [Int64: BookCards] = [:]
        /// Users' password stamps as `InlineRead.stamp` gives them (nil: cannot sign in), by
        /// the login's bytes: two user names equal only as Unicode are two users.
        var stamps: [ExactString: String?] = [:]
        /// Address books of their owners' homes by owner and path, each with no lock rows in
        /// the home when read, for updates judged on their ETag (`writeTarget`).
        var writeTargets: [WriteTargetKey: CollectionInfo] = [:]
        /// The newest seq heard for each book since the last `forgetAll`.
        var bookSeqs: [Int64: Int64] = [:]
        /// The cached card bodies' bytes (both kinds).
        var bytes = 0

        /// Room for `size` more bytes within `capacity`: when full, everything kept goes
        /// rather than tracking recency on every hit. A working set larger than the cache is
        /// read from the database as before.
        mutating func makeRoom(for size: Int, within capacity: Int) {
            guard bytes + size > capacity else { return }
            cards.removeAll(keepingCapacity: true)
            books.removeAll(keepingCapacity: true)
            bytes = 0
        }
    }

    private let state = Mutex(State())
    /// Most bytes of card bodies kept; 0 turns the cache off.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 0)
    }

    var isEnabled: Bool { capacity > 0 }

    /// The cached answer for the card and `user`'s stamp, when both are cached and current
    /// by what has been heard of the notices of `server` (the current primary); nil otherwise.
    /// `needsFence` unless this process is alone on the database or holds a read lease: then the answer may be
    /// served only once a fence sent after the request asked has come back, and read again
    /// (`NoticesFence`), so that every change acknowledged before it was heard.
    func read(owner: String, path: String, name: String, stampOf user: String,
              server: Int) -> (answer: InlineRead, needsFence: Bool)? {
        guard isEnabled else { return nil }
        return state.withLock { state -> (answer: InlineRead, needsFence: Bool)? in
            Self.noteAsked(&state)
            guard state.listeningTo == server,
                  let found = state.cards[Key(owner: owner, path: path, name: name)],
                  let stamp = state.stamps[ExactString(user)],
                  found.collection.syncSeq >= state.bookSeqs[found.collection.id, default: .min]
            else { return nil }
            return (InlineRead(found: found, stamp: stamp), !state.unfenced)
        }
    }

    /// A book by its owner and path, as a write names it.
    private struct WriteTargetKey: Hashable, Sendable {
        var owner: ExactString
        var path: ExactString
    }

    /// Most books kept for writes: past it they all go, as the cards do when full.
    static let writeTargetLimit = 4096

    /// For a write its batch judges (`LookupAhead.writesUnread`) by `login` in its own
    /// book `path`: the login's stamp and the book, when both were kept and this process is
    /// alone on the database and hears `server`'s notices. Unlike every other answer here
    /// this one serves a write, so only alone: with another process, a lock it granted or a
    /// change of the book would not be heard before the write. Nil otherwise.
    ///
    /// The book's seq is as it was read, older than the book's now: the write only needs
    /// its key, kind and owner, which every change of them announces (`forgetAll`).
    func writeTarget(login: String, path: String, server: Int) -> (stamp: String, book: CollectionInfo)? {
        guard isEnabled else { return nil }
        return state.withLock { state -> (stamp: String, book: CollectionInfo)? in
            guard state.listeningTo == server, state.alone,
                  case let stamp?? = state.stamps[ExactString(login)],
                  let book = state.writeTargets[WriteTargetKey(owner: ExactString(login), path: ExactString(path))]
            else { return nil }
            return (stamp, book)
        }
    }

    /// Keeps what a request's sign-in read started with `ticket` found (`StampAndMemberSQL`):
    /// `login`'s stamp and its own address book `book` at `path`, whose home held no lock
    /// rows. Not kept when anything was forgotten since the read started (a lock granted
    /// here included, `forgetWriteTargets`).
    func keepWriteTarget(_ book: CollectionInfo, login: String, path: String, stamp: String, ticket: Ticket) {
        guard ExactString(book.owner) == ExactString(login), book.mount == nil, book.kind == .addressBook else { return }
        state.withLock { state in
            guard state.listeningTo != nil, state.alone, state.generation == ticket.generation else { return }
            if state.writeTargets.count >= Self.writeTargetLimit { state.writeTargets.removeAll(keepingCapacity: true) }
            state.stamps[ExactString(login)] = .some(stamp)
            state.writeTargets[WriteTargetKey(owner: ExactString(login), path: ExactString(path))] = book
        }
    }

    /// A lock is being granted, or was: no write goes unread on what was kept, and reads
    /// under way keep nothing (their look-up of the locks may predate the lock). Called
    /// before the grant's transaction and after it, so that a read between the two does not
    /// keep a home without locks either.
    func forgetWriteTargets() {
        guard isEnabled else { return }
        state.withLock { state in
            state.generation &+= 1
            state.writeTargets.removeAll()
        }
    }

    /// A ticket for a read about to start; nil when its answer could not be kept (not
    /// listening, or no cache).
    func ticket() -> Ticket? {
        guard isEnabled else { return nil }
        return state.withLock { $0.listeningTo == nil ? nil : Ticket(generation: $0.generation) }
    }

    /// Keeps what a read started with `ticket` answered, unless something was forgotten or
    /// the book written since it started. A card not found is not kept (the next GET asks).
    func keep(_ read: InlineRead, owner: String, path: String, name: String, stampOf user: String, ticket: Ticket) {
        let size = read.found?.resource.data.count ?? 0
        state.withLock { state in
            guard state.listeningTo != nil, state.generation == ticket.generation else { return }
            state.stamps[ExactString(user)] = .some(read.stamp)
            guard let found = read.found, size <= capacity / 8,
                  found.collection.syncSeq >= state.bookSeqs[found.collection.id, default: .min] else { return }
            state.makeRoom(for: size, within: capacity)
            let key = Key(owner: owner, path: path, name: name)
            if let earlier = state.cards.updateValue(found, forKey: key) { state.bytes -= earlier.resource.data.count }
            state.bytes += size
        }
    }

    /// The named cards of book `collectionID` in byte order, and its count up to `cap` (0
    /// when `cap` is 0), when every name was read before and is current, the count too, and
    /// the notices of `server` (the current primary) are being heard. A body over
    /// `bodyLimit` is left out, as the database's read leaves it.
    func cards(in collectionID: Int64, named names: [String], bodyLimit: Int, countingUpTo cap: Int,
               server: Int) -> (cards: [StoredResource], count: Int)? {
        guard !names.isEmpty else { return nil }
        let answer = fromBook(collectionID, server: server) { book -> (cards: [StoredResource], count: Int)? in
            var count = 0
            if cap > 0 {
                // A count below its cap is the book's size; one at its cap says "at least".
                guard let known = book.count, known.value < known.cap || cap <= known.cap else { return nil }
                count = min(known.value, cap)
            }
            var found: [StoredResource] = []
            found.reserveCapacity(names.count)
            for name in names {
                guard let entry = book.cards[ExactString(name)] else { return nil }
                if let card = entry { found.append(card.leavingOutBody(over: bodyLimit)) }
            }
            return (found, count)
        }
        guard var answer else { return nil }
        if !PostgresStore.inByteOrder(answer.cards.map(\.info.name)) {
            answer.cards.sort { $0.info.name.precedesInBytes($1.info.name) }
        }
        return answer
    }

    /// Keeps what a named read started with `ticket` found among `names` (and the book's
    /// count up to `cap`, when read). Cards whose body was left out are not kept.
    func keep(_ found: [StoredResource], asked names: [String], count: Int?, cap: Int, in collectionID: Int64, seq: Int64,
              ticket: BookTicket) {
        let kept = found.filter { !$0.bodyLeftOut && $0.data.count <= capacity / 8 }
        keep(in: collectionID, seq: seq, ticket: ticket, bytes: kept.reduce(0) { $0 + $1.data.count }) { book in
            var asked = Set(names.map(ExactString.init))
            for card in found { asked.remove(ExactString(card.info.name)) }
            for name in asked where book.cards[name] == nil { book.cards[name] = .some(nil) }
            var replaced = 0
            for card in kept {
                if case let earlier?? = book.cards.updateValue(card, forKey: ExactString(card.info.name)) {
                    replaced += earlier.data.count
                }
            }
            if let count, cap > 0, cap > book.count?.cap ?? 0 { book.count = (count, cap) }
            return replaced
        }
    }

    /// The listing page of book `collectionID` after `name` (at most `limit` infos), when read
    /// before and current, and the notices of `server` are being heard.
    func page(in collectionID: Int64, after name: String, limit: Int, server: Int) -> [ResourceInfo]? {
        fromBook(collectionID, server: server) { $0.pages[Page(after: ExactString(name), limit: limit)] }
    }

    /// Keeps a listing page read with `ticket`.
    func keep(page infos: [ResourceInfo], in collectionID: Int64, seq: Int64, after name: String, limit: Int,
              ticket: BookTicket) {
        keep(in: collectionID, seq: seq, ticket: ticket, bytes: Self.bytes(of: infos)) { book in
            book.pages.updateValue(infos, forKey: Page(after: ExactString(name), limit: limit)).map(Self.bytes(of:)) ?? 0
        }
    }

    /// A query's answer on book `collectionID`, when read before with the same `key` and
    /// current, and the notices of `server` are being heard.
    func hits(in collectionID: Int64, for key: QueryKey, server: Int) -> QueryHits? {
        fromBook(collectionID, server: server) { $0.queries[key] }
    }

    /// Keeps a query's answer read with `ticket`.
    func keep(hits: QueryHits, in collectionID: Int64, seq: Int64, for key: QueryKey, ticket: BookTicket) {
        keep(in: collectionID, seq: seq, ticket: ticket, bytes: Self.bytes(of: hits)) { book in
            book.queries.updateValue(hits, forKey: key).map(Self.bytes(of:)) ?? 0
        }
    }

    /// A ticket for a read of a book about to start (named cards, a page, a query); nil when
    /// its answer could not be kept (not listening, or no cache).
    func bookTicket() -> BookTicket? {
        guard isEnabled else { return nil }
        return state.withLock { $0.listeningTo == nil ? nil : BookTicket(generation: $0.generation) }
    }

    /// `answer` from book `collectionID`'s reads, while they are served: the notices of
    /// `server` heard, no newer seq of the book heard, and either this process alone on the
    /// database or holding a read lease, or the current request's own look-up of the book read the same seq
    /// (`LookupAhead.bookSeq`: then no write reached the book between those reads and the
    /// request's arrival, whichever process made it).
    private func fromBook<Answer>(_ collectionID: Int64, server: Int, _ answer: (BookCards) -> Answer?) -> Answer? {
        guard isEnabled else { return nil }
        let looked = LookupAhead.current?.bookSeq(collectionID)
        return state.withLock { state -> Answer? in
            Self.noteAsked(&state)
            guard state.listeningTo == server, let book = state.books[collectionID],
                  book.seq >= state.bookSeqs[collectionID, default: .min], state.unfenced || looked == book.seq
            else { return nil }
            return answer(book)
        }
    }

    /// Adds a read of `bytes`, made at the book's `seq`, to book `collectionID`'s (`add`
    /// returns the bytes of what it replaced), unless something was forgotten since the read
    /// started with `ticket`, a newer seq of the book was heard or read already, or it is too
    /// big for the cache. Reads at a newer seq replace the book's older ones.
    private func keep(in collectionID: Int64, seq: Int64, ticket: BookTicket, bytes: Int, _ add: (inout BookCards) -> Int) {
        guard bytes <= capacity / 8 else { return }
        state.withLock { state in
            guard state.listeningTo != nil, state.generation == ticket.generation,
                  seq >= state.bookSeqs[collectionID, default: .min] else { return }
            if let held = state.books[collectionID], held.seq > seq { return }
            state.makeRoom(for: bytes, within: capacity)
            var book = state.books.removeValue(forKey: collectionID) ?? BookCards(seq: seq)
            if book.seq < seq {
                state.bytes -= book.bytes
                book = BookCards(seq: seq)
            }
            let change = bytes - add(&book)
            book.bytes += change
            state.bytes += change
            state.books[collectionID] = book
        }
    }

    /// What a listing's infos hold, roughly: the strings' bytes and the fixed fields.
    private static func bytes(of infos: [ResourceInfo]) -> Int {
        infos.reduce(0) { $0 + 96 + $1.name.utf8.count + $1.etag.utf8.count + $1.contentType.utf8.count }
    }

    private static func bytes(of hits: QueryHits) -> Int {
        hits.names.reduce(0) { $0 + 16 + $1.utf8.count } + bytes(of: hits.firstCards.map(\.info))
            + hits.firstCards.reduce(0) { $0 + $1.data.count }
    }

    /// A book's seq moved to `seq` (a committed write, here or in another process): its
    /// cards' answers read before are no longer served.
    func bookChanged(_ collectionID: Int64, seq: Int64) {
        guard isEnabled else { return }
        state.withLock { state in
            guard seq > state.bookSeqs[collectionID, default: .min] else { return }
            state.bookSeqs[collectionID] = seq
            if let held = state.books[collectionID], held.seq < seq {
                state.books[collectionID] = nil
                state.bytes -= held.bytes
            }
        }
    }

    /// Something every answer may depend on changed: nothing kept is served, and reads
    /// already out keep nothing.
    func forgetAll() {
        guard isEnabled else { return }
        state.withLock { Self.forget(&$0) }
    }

    /// The notices of server `server` are heard from now on: what was kept before is not
    /// known to be current, so it is forgotten.
    func startedListening(to server: Int) {
        guard isEnabled else { return }
        state.withLock { state in
            Self.forget(&state)
            state.listeningTo = server
        }
    }

    /// The notices are no longer heard: the cache is off until they are again.
    func stoppedListening() {
        // Whether alone is known without a cache too: a process's writes wait for others'
        // acknowledgements unless it is alone (`ReadLeases`).
        state.withLock { state in
            Self.forget(&state)
            state.listeningTo = nil
            state.alone = false
            state.leasedUntil = nil
        }
    }

    /// This process read back a renewal of its read lease (`ReadLeases`) that lasts until
    /// `until`: every other process's write acknowledged before then waits for this one to
    /// hear it.
    func lease(until: ContinuousClock.Instant) {
        state.withLock { state in
            guard state.listeningTo != nil else { return }
            state.leasedUntil = max(state.leasedUntil ?? until, until)
        }
    }

    /// How long after the last read that asked for a kept answer a lease is still renewed.
    static let leaseDemand: Duration = .seconds(3)

    /// Whether reads asked for kept answers lately, with another process on the database:
    /// then a lease spares them fences (`ReadLeases.tick`). Alone, or idle, a process renews
    /// none, and costs the others' writes no wait and the database no notices.
    var wantsLease: Bool {
        state.withLock { state in
            !state.alone && state.askedAt.map { ContinuousClock.now - $0 < Self.leaseDemand } ?? false
        }
    }

    private static func noteAsked(_ state: inout State) {
        if !state.alone && state.listeningTo != nil { state.askedAt = .now }
    }

    /// No lease held from now on (`ReadLeases.stopLeasing`).
    func endLease() {
        state.withLock { $0.leasedUntil = nil }
    }

    /// Whether this process is alone on the database: its writes wait for nobody.
    var isAlone: Bool { state.withLock { $0.alone } }

    /// Whether this process holds a read lease now.
    var isLeased: Bool { state.withLock { $0.leasedUntil.map { ContinuousClock.now < $0 } ?? false } }

    /// When the read lease held runs out, if one was read back (it only ever moves later
    /// while held), for tests.
    var leaseEnd: ContinuousClock.Instant? { state.withLock { $0.leasedUntil } }

    /// Taken before the processes are counted: a count asked before another process's
    /// announcement was heard must not make this one alone again after it.
    struct Census: Sendable {
        fileprivate let arrivals: UInt64
    }

    func census() -> Census { Census(arrivals: state.withLock { $0.arrivals }) }

    /// Another process announced itself: GETs wait for fences from now on. Called as the
    /// notice is read, before this process acknowledges it (the newcomer waits for that).
    func heardAnotherProcess() {
        state.withLock { state in
            state.arrivals &+= 1
            guard state.alone else { return }
            Self.forget(&state)
            state.alone = false
        }
    }

    /// Whether another Rolo process uses the database now, as counted after `census` was
    /// taken. With one, kept answers are served only after a fence (and what was kept is
    /// forgotten): between that process's commit and its notice, this one would answer the
    /// card as it was, and a client that wrote through one process and reads through the
    /// other (a round-robin balancer) would see its write undone for that moment. A count
    /// asked before an announcement this process has heard since counts without the newcomer
    /// (its answer raced the notice): it leaves the process not alone, and the next count
    /// decides.
    func setAlone(_ alone: Bool, census: Census) {
        state.withLock { state in
            guard state.alone != alone, !alone || state.arrivals == census.arrivals else { return }
            Self.forget(&state)
            state.alone = alone
        }
    }

    /// How many cards of GETs, named cards, pages and queries, and stamps are kept, for tests.
    var counts: (cards: Int, named: Int, stamps: Int) {
        state.withLock { state in
            (state.cards.count, state.books.values.reduce(0) { $0 + $1.cards.count + $1.pages.count + $1.queries.count }, state.stamps.count)
        }
    }

    var isListening: Bool { state.withLock { $0.listeningTo != nil } }

    /// Whether cached answers are served (listening, and alone on the database).
    var isServing: Bool { state.withLock { $0.listeningTo != nil && $0.alone } }

    private static func forget(_ state: inout State) {
        state.generation &+= 1
        state.cards.removeAll()
        state.books.removeAll()
        state.stamps.removeAll()
        state.writeTargets.removeAll()
        state.bookSeqs.removeAll()
        state.bytes = 0
    }
}
