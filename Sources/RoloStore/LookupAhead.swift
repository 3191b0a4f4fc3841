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

    /// What the store found: the collection, with the member when one was named and exists;
    /// nil for no such collection.
    public struct Found: Sendable, Hashable {
        public var member: CollectionMember?
        public init(member: CollectionMember?) { self.member = member }
    }

    /// What the store read, and what of it is still to be answered.
    private struct State: Sendable {
        var read = false
        /// Nil once taken.
        var found: Found?
        /// Whether the owner's home held lock rows; nil: not read, or told already.
        var homeHasLocks: Bool?
    }

    private let state = Mutex(State())

    public init(owner: String, path: [String], name: String?) {
        self.owner = owner; self.path = path; self.name = name
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
            state = State(read: true, found: found, homeHasLocks: homeHasLocks)
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
}
