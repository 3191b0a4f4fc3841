import Synchronization

/// The lookup a request will make first once it is signed in (its book, or its book and
/// the member it names), told to the store before the sign-in, so that a store that reads
/// the login's password stamp over a network (PostgreSQL) can read both in one round trip.
///
/// The server binds one per request (`current`) from the request's path; the store fills it
/// while reading the stamp, and answers the matching lookup from it once (`take`). Only that
/// first lookup: whatever the request reads after it, a write's effect included, is read
/// afresh. The server binds one only for a store that reads it
/// (`AccountStore.readsLookupsAhead`): SQLite reads the stamp where the request runs, and a
/// round trip there costs nothing. Nothing read ahead reaches the request before the
/// sign-in and the access check that every lookup goes through.
public final class LookupAhead: Sendable {
    /// The collection's owner and path, as `CardStore.collection(owner:path:)` takes them.
    public let owner: String
    public let path: [String]
    /// The member the request names (`CardStore.collectionMember(owner:path:name:)`); nil
    /// when the request is on the collection itself.
    public let name: String?
    /// Whether the request is a PUT its store may judge with nothing of the card read: an
    /// update with one `If-Match` ETag, or a new card (`If-None-Match: *`), with no `If`
    /// header and no quota to check (`DAVService.mayWriteUnread`). A store that remembers
    /// the login's stamp and the book (PostgreSQL's `CardCache`) may then sign the request
    /// in and let its write go to the book's batch with nothing read (`fillUnread`): the
    /// batch's statement judges the ETag and the UID on the row it updates, or fails on a
    /// name or UID taken for a new card.
    public let writesUnread: Bool

    /// What the store found: the collection, with the member when one was named and exists;
    /// nil for no such collection.
    public struct Found: Sendable, Hashable {
        public var member: CollectionMember?
        /// The member's row, when the store read its key too (`takeMemberRow`).
        public var memberRow: MemberRow?
        public init(member: CollectionMember?, memberRow: MemberRow? = nil) {
            self.member = member; self.memberRow = memberRow
        }
    }

    /// The named member's row as the store read it with the lookup: its key, UID and seq. A
    /// store whose writes are checked against what a look-up found before the book's turn
    /// (PostgreSQL's batches, which check that the card still has `seq`) takes it for the
    /// request's write instead of reading the card again; a card written since is caught by
    /// that check like one written after any look-up.
    public struct MemberRow: Sendable, Hashable {
        public var collectionID: Int64
        public var id: Int64
        public var name: String
        public var etag: String
        public var uid: String?
        public var seq: Int64
        public init(collectionID: Int64, id: Int64, name: String, etag: String, uid: String?, seq: Int64) {
            self.collectionID = collectionID; self.id = id; self.name = name; self.etag = etag; self.uid = uid; self.seq = seq
        }
    }

    /// What the store read, and what of it is still to be answered.
    private struct State: Sendable {
        var read = false
        /// Nil once taken.
        var found: Found?
        /// Whether the owner's home held lock rows; nil: not read, or told already.
        var homeHasLocks: Bool?
        /// Nil once taken (`takeMemberRow`), apart from `found`.
        var memberRow: MemberRow?
        /// The book, from the store's memory, of an update judged on its ETag
        /// (`fillUnread`); nil once taken.
        var unreadBook: CollectionInfo?
        /// The book and name of the write that took `unreadBook` (`takeUnreadWrite`).
        var unreadWrite: (collectionID: Int64, name: String)?
    }

    private let state = Mutex(State())
    /// The seq of each book a look-up of this request read (`noteBook`).
    private let bookSeqs = Mutex<[Int64: Int64]>([:])

    public init(owner: String, path: [String], name: String?, writesUnread: Bool = false) {
        self.owner = owner; self.path = path; self.name = name
        self.writesUnread = writesUnread && name != nil
    }

    /// The request's lookup, when the server named it.
    @TaskLocal public static var current: LookupAhead?

    /// Whether the store still has to read it.
    public var isWaiting: Bool { state.withLock { !$0.read } }

    /// Keeps what the store read (once; later reads are ignored), and, when it read that
    /// too, whether the owner's home held any lock rows (`StoreCoordination.writeLocks`).
    public func fill(_ found: Found, homeHasLocks: Bool? = nil) {
        state.withLock { state in
            guard !state.read else { return }
            state = State(read: true, found: found, homeHasLocks: homeHasLocks, memberRow: found.memberRow)
        }
    }

    /// Keeps `book`, which the store answered from memory with the login's stamp, for a
    /// write judged by the store (`writesUnread`): nothing was read, the member included,
    /// and the owner's home held no lock rows as far as the store knows. Ignored once the
    /// store read or filled anything.
    public func fillUnread(book: CollectionInfo) {
        state.withLock { state in
            guard !state.read, writesUnread else { return }
            state = State(read: true, found: nil, homeHasLocks: false, memberRow: nil, unreadBook: book)
        }
    }

    /// The book kept by `fillUnread`, once, for this request's write of `name` in
    /// `path`: the caller then writes without reading the member, and says so to the store
    /// through `takeUnreadWrite`. Nil when the store read the lookup, or for another one.
    public func takeUnreadBook(owner: String, path: [String], name: String) -> CollectionInfo? {
        guard owner == self.owner, path == self.path, name == self.name else { return nil }
        return state.withLock { state in
            guard let book = state.unreadBook else { return nil }
            state.unreadBook = nil
            state.unreadWrite = (book.id, name)
            return book
        }
    }

    /// True, once, when this request's write to `name` in `collectionID` is the write
    /// that took its book unread (`takeUnreadBook`): its store judges the card itself.
    public func takeUnreadWrite(collectionID: Int64, name: String) -> Bool {
        state.withLock { state in
            guard let write = state.unreadWrite, write.collectionID == collectionID, write.name == name else { return false }
            state.unreadWrite = nil
            return true
        }
    }

    /// True, once, when the store read that `home` (the owner's) held no lock rows with
    /// the lookup: the request's first check of the locks covering a write may skip its
    /// read. A lock another request takes in between is missed as it would be had it come
    /// a moment after the check, which a write never rules out either.
    public func homeHeldNoLocks(_ home: String) -> Bool {
        guard home == owner else { return false }
        return state.withLock { state in
            defer { state.homeHasLocks = nil }
            return state.homeHasLocks == false
        }
    }

    /// What was read ahead for exactly this lookup (`name` nil: the collection itself), once;
    /// nil when it was not read, was taken already, or names another lookup.
    public func take(owner: String, path: [String], name: String?) -> Found? {
        guard owner == self.owner, path == self.path, name == self.name else { return nil }
        return state.withLock { state in
            defer { state.found = nil }
            return state.found
        }
    }

    /// A look-up of this request read `book` (its seq included) from the database, after
    /// the request arrived: every write acknowledged before the request is in that seq.
    /// A store that keeps reads of books in memory may answer this request's reads of the
    /// book from what it read at exactly that seq (PostgreSQL's `CardCache`), whichever
    /// process wrote last. The first seq noted for a book stands.
    public func noteBook(_ book: CollectionInfo) {
        bookSeqs.withLock { seqs in
            if seqs[book.id] == nil { seqs[book.id] = book.syncSeq }
        }
    }

    /// The seq a look-up of this request read for book `collectionID`, if one did.
    public func bookSeq(_ collectionID: Int64) -> Int64? {
        bookSeqs.withLock { $0[collectionID] }
    }

    /// The member's row read with the lookup, once, for the request's write to
    /// `name` in the book `collectionID`; nil when none was read (no such member, or a store
    /// that reads none) or it was taken already.
    public func takeMemberRow(collectionID: Int64, name: String) -> MemberRow? {
        state.withLock { state in
            guard let row = state.memberRow, row.collectionID == collectionID, row.name == name else { return nil }
            state.memberRow = nil
            return row
        }
    }
}
