import RoloStore
import Synchronization

/// The inline GET's reads kept in memory (`PostgresStore.readInline`), so that a GET of a
/// card read before costs no round trip: on PostgreSQL the backend's share of a GET alone
/// took more CPU than SQLite's whole GET (Docs/performance.md).
///
/// **Kept true by notices.** A cached answer is served only while this process listens
/// for the database's notices (`PostgresStore.followCacheNotices`), and only if nothing it
/// heard since says it changed:
/// - A card's answer remembers its book's seq as read. Every write to a book moves that seq,
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
/// **Only while alone.** Between another process's commit and its notice arriving here, a
/// GET would answer the card as it was: measured with two processes, a GET sent to one right
/// after a PUT through the other answered the old card 15 times in 2,000. So the cache
/// serves only while this is the only Rolo process on the database (`setAlone`): every
/// process, `rolo` commands included, announces itself when it starts and is counted every
/// second. A process's own writes note their seq before they are answered, so alone it never
/// answers older than what it acknowledged. Losing the notices' connection stops the cache
/// (and forgets it) until they are heard again; after a failover the notices come from the
/// new primary or the cache stays off. Writes never use the cache.
final class CardCache: Sendable {
    /// Taken when a read starts: its answer may be kept only if still current when it comes.
    struct Ticket: Sendable {
        fileprivate let generation: UInt64
    }

    private struct Key: Hashable, Sendable {
        var owner: String
        var path: String
        var name: String
    }

    private struct State: Sendable {
        /// Which server's notices are heard (`PrimaryChoice` index), or nil while none are.
        var listeningTo: Int?
        /// Whether this is the only Rolo process on the database (`PostgresStore.followCacheNotices`).
        var alone = false
        /// Moves at every `forgetAll`, so that reads started before it keep nothing.
        var generation: UInt64 = 0
        var cards: [Key: LocatedResource] = [:]
        /// Users' password stamps as `InlineRead.stamp` gives them (nil: cannot sign in).
        var stamps: [String: String?] = [:]
        /// The newest seq heard for each book since the last `forgetAll`.
        var bookSeqs: [Int64: Int64] = [:]
        /// The cached card bodies' bytes.
        var bytes = 0
    }

    private let state = Mutex(State())
    /// Most bytes of card bodies kept; 0 turns the cache off.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 0)
    }

    var isEnabled: Bool { capacity > 0 }

    /// The cached answer for the card and `user`'s stamp, when both are cached and current
    /// and the notices of `server` (the current primary) are being heard.
    func read(owner: String, path: String, name: String, stampOf user: String, server: Int) -> InlineRead? {
        guard isEnabled else { return nil }
        return state.withLock { state -> InlineRead? in
            guard state.listeningTo == server, state.alone, let found = state.cards[Key(owner: owner, path: path, name: name)],
                  let stamp = state.stamps[user],
                  found.collection.syncSeq >= state.bookSeqs[found.collection.id, default: .min]
            else { return nil }
            return InlineRead(found: found, stamp: stamp)
        }
    }

    /// A ticket for a read about to start; nil when its answer could not be kept (not
    /// listening, or no cache).
    func ticket() -> Ticket? {
        guard isEnabled else { return nil }
        return state.withLock { $0.listeningTo == nil || !$0.alone ? nil : Ticket(generation: $0.generation) }
    }

    /// Keeps what a read started with `ticket` answered, unless something was forgotten or
    /// the book written since it started. A card not found is not kept (the next GET asks).
    func keep(_ read: InlineRead, owner: String, path: String, name: String, stampOf user: String, ticket: Ticket) {
        let size = read.found?.resource.data.count ?? 0
        state.withLock { state in
            guard state.listeningTo != nil, state.alone, state.generation == ticket.generation else { return }
            state.stamps[user] = .some(read.stamp)
            guard let found = read.found, size <= capacity / 8,
                  found.collection.syncSeq >= state.bookSeqs[found.collection.id, default: .min] else { return }
            if state.bytes + size > capacity {
                // Full: start again rather than track recency on every hit. A working set
                // larger than the cache is read from the database as before.
                state.cards.removeAll(keepingCapacity: true)
                state.bytes = 0
            }
            let key = Key(owner: owner, path: path, name: name)
            if let earlier = state.cards.updateValue(found, forKey: key) { state.bytes -= earlier.resource.data.count }
            state.bytes += size
        }
    }

    /// A book's seq moved to `seq` (a committed write, here or in another process): its
    /// cards' answers read before are no longer served.
    func bookChanged(_ collectionID: Int64, seq: Int64) {
        guard isEnabled else { return }
        state.withLock { state in
            if seq > state.bookSeqs[collectionID, default: .min] { state.bookSeqs[collectionID] = seq }
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
        guard isEnabled else { return }
        state.withLock { state in
            Self.forget(&state)
            state.listeningTo = nil
            state.alone = false
        }
    }

    /// Whether another Rolo process uses the database now. With one, the cache is off (and
    /// forgotten): between that process's commit and its notice, this one would answer the
    /// card as it was, and a client that wrote through one process and reads through the
    /// other (a round-robin balancer) would see its write undone for that moment.
    func setAlone(_ alone: Bool) {
        guard isEnabled else { return }
        state.withLock { state in
            guard state.alone != alone else { return }
            Self.forget(&state)
            state.alone = alone
        }
    }

    /// How many cards and stamps are kept, for tests.
    var counts: (cards: Int, stamps: Int) {
        state.withLock { ($0.cards.count, $0.stamps.count) }
    }

    var isListening: Bool { state.withLock { $0.listeningTo != nil } }

    /// Whether cached answers are served (listening, and alone on the database).
    var isServing: Bool { state.withLock { $0.listeningTo != nil && $0.alone } }

    private static func forget(_ state: inout State) {
        state.generation &+= 1
        state.cards.removeAll()
        state.stamps.removeAll()
        state.bookSeqs.removeAll()
        state.bytes = 0
    }
}
