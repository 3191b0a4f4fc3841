import Foundation

/// The storage contract the DAV layer and server speak. It knows users, collections,
/// resources, ETags, dead properties, a search index and a change log, and nothing of
/// XML or HTTP. SQLite (`SQLiteStore`) is the embedded implementation; PostgreSQL
/// (`PostgresStore`, target RoloPostgres) implements the same protocol, so every semantic
/// (preconditions checked inside the write transaction, change-log rows written with the
/// resource, UID uniqueness) is part of this contract, not an SQLite trick. The store tests
/// run against both.
public protocol RoloStore: StoreCoordination {
    // MARK: Users
    /// Creates a user (bcrypt-hashed password) and its home with an address book `default`.
    func createUser(name: String, password: String) async throws
    func setPassword(user: String, password: String) async throws
    /// True when the user exists and the password matches its bcrypt hash.
    func verifyPassword(user: String, password: String) async throws -> Bool
    func listUsers() async throws -> [String]
    /// Deletes the user with every collection, resource and change row they own.
    func deleteUser(name: String) async throws

    // MARK: Collections
    /// Creates a collection at `path` (components below the user's home, e.g. ["default"]
    /// or ["files", "sub"]). The parent must exist (or be the home, `[]`).
    @discardableResult
    func createCollection(owner: String, path: [String], kind: CollectionKind,
                          displayName: String?, description: String?) async throws -> CollectionInfo
    /// The collection at `path` below the user's home, nil when absent.
    func collection(owner: String, path: [String]) async throws -> CollectionInfo?
    func collection(id: Int64) async throws -> CollectionInfo?
    /// Direct child collections of `parentPath` (`[]` = the home).
    func childCollections(owner: String, parentPath: [String]) async throws -> [CollectionInfo]
    func updateCollection(id: Int64, displayName: String??, description: String??) async throws
    /// Deletes the collection and everything under it.
    func deleteCollection(id: Int64) async throws

    // MARK: Resources
    /// Creates or replaces a resource. `precondition` is checked inside the write
    /// transaction. For address books `card` must be given: its UID is unique per book
    /// (`StoreError.uidConflict`), its index rows and members replace the old ones.
    /// Writes the resource, its index rows, a change row and the collection's new seq
    /// in one transaction.
    func putResource(collectionID: Int64, name: String, data: Data, contentType: String,
                     card: CardMetadata?, precondition: WritePrecondition) async throws -> PutResult
    func resource(collectionID: Int64, name: String) async throws -> StoredResource?
    /// The resource `name` in the user's collection at `collectionPath`, with that
    /// collection, in one lookup: all a GET needs. Nil when either is absent. A default
    /// implementation makes the two calls; a store may answer it in one round trip.
    func resource(owner: String, collectionPath: [String], name: String) async throws -> LocatedResource?
    /// Many resources in one query; absent names are simply missing from the result.
    func resources(collectionID: Int64, names: [String]) async throws -> [StoredResource]
    /// The same without the bodies, for answers that list no `address-data`. A default
    /// implementation reads the resources and drops the bodies.
    func resourceInfos(collectionID: Int64, names: [String]) async throws -> [ResourceInfo]
    /// Name, ETag, size, content type, modified of every resource, without bodies.
    func listResources(collectionID: Int64) async throws -> [ResourceInfo]
    /// Every resource with its body, in name order (exports, full scans).
    func allResources(collectionID: Int64) async throws -> [StoredResource]
    /// One page of `listResources`: the resources whose names sort after `name` (by their
    /// UTF-8 bytes; nil starts at the first), at most `limit`, in that order. Each page is
    /// its own short read, so a listing of any size holds one page at a time and no read
    /// transaction between pages. A default implementation filters the whole list.
    func listResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [ResourceInfo]
    /// One page of `allResources`, bodies included, the same way.
    func allResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [StoredResource]
    /// `resources(collectionID:names:)` for a listing: a body bigger than `bodyLimit` bytes
    /// stays in the store (`StoredResource.bodyLeftOut`), so a page of a multiget or sync
    /// holds small bodies only, and a card with a 10 MB photo is read alone when its turn
    /// comes. A default implementation reads every body and drops the big ones.
    func resources(collectionID: Int64, names: [String], bodyLimit: Int) async throws -> [StoredResource]
    /// `allResources(collectionID:after:limit:)` leaving bodies over `bodyLimit` in the store, the same way.
    func allResources(collectionID: Int64, after name: String?, limit: Int, bodyLimit: Int) async throws -> [StoredResource]
    func resourceInfo(collectionID: Int64, name: String) async throws -> ResourceInfo?
    /// The user's collection at `path` and, when it has one, its member resource `name`
    /// (without the body): what resolving a member's path needs (PUT, DELETE, PROPFIND),
    /// in one lookup. Nil when the collection is absent. A default implementation makes
    /// the two calls; a store may answer it in one read, as `SQLiteStore` does.
    func collectionMember(owner: String, path: [String], name: String) async throws -> CollectionMember?
    /// Deletes a resource, checking `precondition` inside the transaction; writes a
    /// tombstone in the change log. Throws `StoreError.notFound` when absent.
    func deleteResource(collectionID: Int64, name: String, precondition: WritePrecondition) async throws
    /// COPY or MOVE of one resource in a single transaction: writes `data` as `targetName`
    /// in `targetCollectionID` (replacing what is there, dead properties included), gives it
    /// the source's dead properties, and for a move deletes the source (a tombstone). A crash
    /// or an error leaves both places as they were: `preconditionFailed` when the source's
    /// ETag is no longer `sourceETag`, `uidConflict` when another resource of the target
    /// book has the card's UID (the moved source itself does not count).
    func transferResource(collectionID: Int64, name: String, sourceETag: String,
                          to targetCollectionID: Int64, name targetName: String,
                          data: Data, contentType: String, card: CardMetadata?, move: Bool) async throws -> PutResult
    /// Name of the resource in the book whose card has this UID.
    func resourceName(collectionID: Int64, uid: String) async throws -> String?

    // MARK: Change log
    /// The latest state of each resource changed after `seq` (put or deleted), ordered by
    /// seq, at most `limit` (then `truncated` is true and `newSeq` continues from the last
    /// one returned). Throws `StoreError.syncTokenTooOld` when `seq` is older than the
    /// compacted log, and `StoreError.invalidSyncToken` when it is in the future. Seq 0
    /// (a client holding nothing) is never too old and gets no deletions.
    func changes(collectionID: Int64, since seq: Int64, limit: Int?) async throws -> ChangeSet
    /// Drops tombstones and change rows older than `date`; tokens older than the newest
    /// dropped tombstone become too old (`StoreError.syncTokenTooOld`).
    func compactChanges(olderThan date: Date) async throws

    // MARK: Dead properties
    /// Properties of a collection (name nil) or of a resource in it.
    func deadProperties(collectionID: Int64, resource: String?) async throws -> [DeadProperty]
    /// Sets and removes dead properties atomically.
    func updateDeadProperties(collectionID: Int64, resource: String?,
                              set: [DeadProperty], remove: [PropertyName]) async throws

    // MARK: Search and groups
    /// Names of resources in the book matching `predicate`, answered from the index.
    func query(collectionID: Int64, predicate: IndexPredicate, limit: Int?) async throws -> [String]
    /// Member UIDs of the group card `name` (leading `urn:uuid:` removed).
    func groupMembers(collectionID: Int64, groupName: String) async throws -> [String]
    /// Resource names of the group cards that list `uid` as a member.
    func groups(collectionID: Int64, containingUID uid: String) async throws -> [String]

    // MARK: Bulk
    /// Imports many cards in one transaction per `batchSize`; calls `progress` after each
    /// batch with the number done. Cards whose UID already exists are replaced.
    func importCards(collectionID: Int64, cards: [CardImport], batchSize: Int,
                     progress: (@Sendable (Int) -> Void)?) async throws

    /// Quota figures for the user's home.
    func usedBytes(owner: String) async throws -> Int64

    /// Whole-store counts for monitoring; cheap enough to call on every metrics scrape.
    func statistics() async throws -> StoreStatistics

    // MARK: Accounts
    /// The user's account record; nil when there is no such user.
    func account(name: String) async throws -> UserAccount?
    func updateAccount(name: String, _ update: UserAccountUpdate) async throws
    /// Users whose name, display name or e-mail contains `text` (case-insensitively), for
    /// picking a sharee (`principal-property-search`); at most `limit`.
    func searchAccounts(matching text: String, limit: Int) async throws -> [UserAccount]

    // MARK: Shares
    /// Shares the owner's book `book` (a top-level address book) with `sharee`, pending
    /// until the sharee accepts it unless `accepted`. Sharing again changes the access of
    /// the existing share. Throws `noSuchUser` for an unknown owner, `invalid` for an
    /// unknown sharee or the owner themself, `notFound` when the owner has no such book.
    @discardableResult
    func shareBook(owner: String, book: String, with sharee: String, access: ShareAccess, accepted: Bool) async throws -> Share
    /// The sharee accepts a pending share: it appears in their home. `notFound` when none.
    @discardableResult
    func acceptShare(sharee: String, owner: String, book: String) async throws -> Share
    /// Removes the share whichever side asks (the owner revoking, the sharee leaving); the
    /// mount disappears at once. `notFound` when there was none.
    func removeShare(owner: String, book: String, sharee: String) async throws
    /// The sharee's own display name for a mount (nil restores "<book> (<owner>)").
    func renameMount(sharee: String, name: String, displayName: String?) async throws
    /// Shares the user gave and received, pending ones included.
    func shares(of user: String) async throws -> [Share]
    /// Shares of one book (its owner's view: `DAV:invite`, `DAV:acl`).
    func shares(bookID: Int64) async throws -> [Share]
    /// The accepted share mounted as `name` in the sharee's home, as the sharee sees it.
    func mount(sharee: String, name: String) async throws -> CollectionInfo?
    /// Every accepted share of the sharee, as mounted collections, by mount name.
    func mounts(sharee: String) async throws -> [CollectionInfo]

    // MARK: App passwords
    /// A new app password; `books` are names in the user's home (own books or mounts), nil
    /// for every book. Throws `invalid` when the name is taken or a book is unknown.
    func createAppPassword(user: String, name: String, readOnly: Bool, books: [String]?) async throws -> NewAppPassword
    func appPasswords(user: String) async throws -> [AppPassword]
    /// Revokes the user's live app password `name`; takes effect on its next request.
    func revokeAppPassword(user: String, name: String) async throws
    /// Checks a presented app password (`rolo_<id>_<secret>`) for `user`: nil when it is
    /// not one, or not theirs, or the secret is wrong. Revoked ones are reported so. Asked on
    /// every request a device makes with one, so that a revocation takes effect on the next:
    /// an embedded store answers without suspending (`SQLiteStore`'s is synchronous), a
    /// network store with a round trip.
    func checkAppPassword(user: String, secret: String) async throws -> AppPasswordCheck?

    // MARK: Access history
    /// Adds tallies to the hourly history and notes where app passwords were last used:
    /// one batched write for a minute of requests, never one per request.
    func recordAccess(_ tallies: [AccessTally], uses: [CredentialUse]) async throws
    /// The user's history since `date`: their own credentials on every book they reached,
    /// and, per sharee, what other users did on the user's books (without their devices).
    func accessHistory(user: String, since date: Date) async throws -> [AccessRecord]
    /// Rolls hourly rows older than the retention into daily rows and deletes daily rows
    /// past theirs, and the history of credentials revoked longer than the hourly retention.
    func pruneAccessHistory(now: Date, retention: AccessRetention) async throws
    /// The latest change of each resource of the book with who made it, newest first.
    func attributedChanges(collectionID: Int64, limit: Int) async throws -> [AttributedChange]

    // MARK: Push (WebDAV-Push)
    /// The time the store stamps on what it writes; push compares expiries and back-offs with it.
    var clock: StoreClock { get }
    /// Books whose content changed, published after each commit (`BookChangeFeed`).
    var bookChanges: BookChangeFeed { get }
    /// The book's push topic: random, stable across renames, never reused. `notFound`
    /// when there is no such book.
    func pushTopic(collectionID: Int64) async throws -> String
    /// The server's VAPID private key, made with `make` the first time it is asked for
    /// (by whichever process asks first).
    func pushKey(creatingWith make: @Sendable () -> Data) async throws -> Data
    /// Replaces the VAPID key and drops every registration: each was made for the old
    /// key, and clients register again when they see the new one.
    func rotatePushKey(to key: Data) async throws
    /// Registers, or renews the registration of the same user, book and push resource
    /// (same id, new keys and expiry). Throws `invalid` when the user already has `limit`
    /// other live registrations on the book.
    @discardableResult
    func registerPush(_ request: PushRegistrationRequest, limit: Int) async throws -> PushRegistration
    /// Deletes the user's registration; false when there is none, it is another user's,
    /// or it expired.
    func deletePushRegistration(id: String, user: String) async throws -> Bool
    /// The book's registrations that have not expired.
    func pushRegistrations(collectionID: Int64) async throws -> [PushRegistration]
    /// The user's registrations, expired ones included, for `rolo push list`.
    func pushRegistrations(user: String) async throws -> [PushRegistration]
    /// Notes how a delivery went; `.gone` deletes the registration.
    func recordPushOutcome(id: String, _ outcome: PushOutcome) async throws
    /// Deletes expired registrations; returns how many.
    @discardableResult
    func prunePushRegistrations() async throws -> Int

    // MARK: Lists, trash and sessions (the web UI)
    /// One page of a book's cards as a list shows them, sorted by (sort key, name), from
    /// the listing rows written with each card: never parsing a card, at most `limit`
    /// rows. `search` words (`CardListingFields.searchWords`) must each occur in a card's
    /// `searchText`.
    func cardListings(collectionID: Int64, filter: ListingFilter, search: [String], from position: ListingPosition,
                      limit: Int) async throws -> ListingPage
    /// The list rows of these cards (absent names are missing from the result).
    func cardListings(collectionID: Int64, names: [String]) async throws -> [CardListing]
    /// How many cards `cardListings` would list, counting no further than `cap` (a list
    /// says "1 000+" rather than count 50 000 rows on each keystroke).
    func cardCount(collectionID: Int64, filter: ListingFilter, search: [String], cap: Int) async throws -> Int
    /// Gives a listing row to cards written without one (before schema v9, or by a caller
    /// that had none): `listing` reads a card's bytes and returns its fields (nil skips the
    /// card). Returns how many were given one. The store calls it in batches; cheap when
    /// every card has its row.
    @discardableResult
    func backfillCardListings(_ listing: @Sendable (Data) -> CardListingFields?) async throws -> Int
    /// The distinct categories (CATEGORIES values) of the book's cards, sorted, at most `limit`.
    func categories(collectionID: Int64, limit: Int) async throws -> [String]
    /// Cards of the book that share an e-mail address, a phone number's digits or a
    /// normalised name with another card of the book: groups of names, for merge
    /// suggestions (never merged without a person). At most `limit` groups.
    func duplicateCandidates(collectionID: Int64, limit: Int) async throws -> [[String]]

    /// Does every write in one transaction, all or none (see `CardBatchWrite`): each put
    /// and trash moves the book's seq, writes the change log and publishes the change like
    /// `putResource`/`deleteResource`. Throws the first failing write's error
    /// (`preconditionFailed`, `uidConflict`, `notFound`) and writes nothing then.
    @discardableResult
    func applyCardBatch(collectionID: Int64, writes: [CardBatchWrite]) async throws -> CardBatchResult
    /// The book's trash, newest first, at most `limit`.
    func trash(collectionID: Int64, limit: Int) async throws -> [TrashedCard]
    /// A trash entry with the card's bytes and content type.
    func trashedCard(id: Int64) async throws -> (card: TrashedCard, data: Data, contentType: String)?
    /// The entries of one batch (a merge, to undo it).
    func trash(batch: String) async throws -> [TrashedCard]
    /// Empties trash entries older than `date` (30 days by default, from the maintenance).
    @discardableResult
    func purgeTrash(olderThan date: Date) async throws -> Int

    /// Keeps a new session under the hash of its cookie token.
    func createWebSession(tokenHash: String, user: String, csrfToken: String) async throws
    /// The session, nil when unknown or its user is gone or disabled.
    func webSession(tokenHash: String) async throws -> WebSession?
    /// Notes that the session was used now (the idle timeout counts from it).
    func touchWebSession(tokenHash: String) async throws
    func deleteWebSession(tokenHash: String) async throws
    /// Ends every session of the user (password changed, disabled, signed out everywhere).
    func deleteWebSessions(user: String) async throws
    /// Deletes sessions idle since `idleSince` or created before `createdBefore`.
    @discardableResult
    func pruneWebSessions(idleSince: Date, createdBefore: Date) async throws -> Int

    /// Removes every user, collection, resource, dead property and change, and restarts
    /// the id counters, so a test harness's reset gives the same ids and sync tokens again.
    func eraseAll() async throws
}

extension RoloStore {
    public func resourceInfos(collectionID: Int64, names: [String]) async throws -> [ResourceInfo] {
        try await resources(collectionID: collectionID, names: names).map(\.info)
    }

    public func listResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [ResourceInfo] {
        Self.page(of: try await listResources(collectionID: collectionID), name: \.name, after: name, limit: limit)
    }

    public func allResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [StoredResource] {
        Self.page(of: try await allResources(collectionID: collectionID), name: \.info.name, after: name, limit: limit)
    }

    public func resources(collectionID: Int64, names: [String], bodyLimit: Int) async throws -> [StoredResource] {
        try await resources(collectionID: collectionID, names: names).map { $0.leavingOutBody(over: bodyLimit) }
    }

    public func allResources(collectionID: Int64, after name: String?, limit: Int, bodyLimit: Int) async throws -> [StoredResource] {
        try await allResources(collectionID: collectionID, after: name, limit: limit).map { $0.leavingOutBody(over: bodyLimit) }
    }

    /// The `limit` rows whose names follow `cursor` in UTF-8 byte order.
    private static func page<Row>(of rows: [Row], name: (Row) -> String, after cursor: String?,
                                  limit: Int) -> [Row] {
        let following = rows.filter { row in cursor.map { $0.utf8.lexicographicallyPrecedes(name(row).utf8) } ?? true }
        return Array(following.sorted { name($0).utf8.lexicographicallyPrecedes(name($1).utf8) }.prefix(limit))
    }

    public func collectionMember(owner: String, path: [String], name: String) async throws -> CollectionMember? {
        guard let collection = try await collection(owner: owner, path: path) else { return nil }
        return CollectionMember(collection: collection, resource: try await resourceInfo(collectionID: collection.id, name: name))
    }

    public func resource(owner: String, collectionPath: [String], name: String) async throws -> LocatedResource? {
        guard let collection = try await collection(owner: owner, path: collectionPath),
              let resource = try await resource(collectionID: collection.id, name: name) else { return nil }
        return LocatedResource(collection: collection, resource: resource)
    }
}

/// A store that can look one resource up without waiting: an embedded database read on the
/// calling thread in microseconds, never queued behind other work. The server answers a
/// GET of a card through it right on the event loop that read the request, without a task
/// (see `DAVService.immediateResponse(to:)`). A store whose reads go over a network
/// (`PostgresStore`) does not adopt it, and its GETs take the ordinary async path.
public protocol ImmediateResourceReads: Sendable {
    /// What `RoloStore.resource(owner:collectionPath:name:)` answers, read on the calling
    /// thread. It must never block for long: no waiting for a connection, a lock or I/O
    /// beyond the read itself.
    func resourceImmediately(owner: String, collectionPath: [String], name: String) throws -> LocatedResource?
}

/// A resource found by its path, with the collection holding it (whose kind decides how
/// the resource is served).
public struct LocatedResource: Sendable, Hashable {
    public var collection: CollectionInfo
    public var resource: StoredResource
    public init(collection: CollectionInfo, resource: StoredResource) {
        self.collection = collection; self.resource = resource
    }
}

/// A collection and, when present, one of its resources by name: a member path resolved.
public struct CollectionMember: Sendable, Hashable {
    public var collection: CollectionInfo
    /// Nil when the collection has no resource of that name.
    public var resource: ResourceInfo?
    public init(collection: CollectionInfo, resource: ResourceInfo?) {
        self.collection = collection; self.resource = resource
    }
}

/// How much the store holds, for the `/metrics` gauges.
public struct StoreStatistics: Sendable, Equatable {
    public var users: Int
    public var addressBooks: Int
    /// Resources stored in address books.
    public var cards: Int

    public init(users: Int, addressBooks: Int, cards: Int) {
        self.users = users; self.addressBooks = addressBooks; self.cards = cards
    }
}

/// An address book, or a plain WebDAV collection in a user's home.
public enum CollectionKind: String, Sendable, Codable {
    case addressBook = "addressbook"
    case plain
}

public struct CollectionInfo: Sendable, Hashable {
    public var id: Int64
    public var owner: String
    /// Components below the home, e.g. ["default"].
    public var path: [String]
    public var kind: CollectionKind
    public var displayName: String?
    public var description: String?
    /// Seq of the newest change; the book's ctag and sync token derive from it.
    public var syncSeq: Int64
    public var created: Date
    public var modified: Date
    /// Set when the book is seen through a sharee's mount (`mount(sharee:name:)`): `owner`
    /// and `path` stay the owner's, the mount says where the sharee sees it and what they may do.
    public var mount: Mount?

    public init(id: Int64, owner: String, path: [String], kind: CollectionKind, displayName: String?,
                description: String?, syncSeq: Int64, created: Date, modified: Date, mount: Mount? = nil) {
        self.id = id; self.owner = owner; self.path = path; self.kind = kind
        self.displayName = displayName; self.description = description
        self.syncSeq = syncSeq; self.created = created; self.modified = modified; self.mount = mount
    }
}

public struct ResourceInfo: Sendable, Hashable {
    public var name: String
    public var contentType: String
    /// Strong ETag including quotes, e.g. `"3f2a…"`.
    public var etag: String
    public var size: Int
    public var modified: Date
    public var seq: Int64

    public init(name: String, contentType: String, etag: String, size: Int, modified: Date, seq: Int64) {
        self.name = name; self.contentType = contentType; self.etag = etag
        self.size = size; self.modified = modified; self.seq = seq
    }
}

public struct StoredResource: Sendable, Hashable {
    public var info: ResourceInfo
    /// The bytes exactly as the client sent them; empty when `bodyLeftOut`.
    public var data: Data
    /// A listing read left the body in the store, being bigger than the read's `bodyLimit`;
    /// `resource(collectionID:name:)` reads it.
    public var bodyLeftOut: Bool

    public init(info: ResourceInfo, data: Data, bodyLeftOut: Bool = false) {
        self.info = info; self.data = data; self.bodyLeftOut = bodyLeftOut
    }

    /// The same resource without its body when that is bigger than `limit` bytes.
    public func leavingOutBody(over limit: Int) -> StoredResource {
        data.count > limit ? StoredResource(info: info, data: Data(), bodyLeftOut: true) : self
    }
}

/// What the caller extracted from a vCard for the index; the store never parses vCards.
public struct CardMetadata: Sendable, Hashable {
    public var uid: String
    /// "person", "organization" or "group".
    public var kind: String
    /// (property name upper-cased, value as text) pairs for addressbook-query; the store
    /// case-folds them for the collations itself.
    public var indexEntries: [IndexEntry]
    /// Member UIDs of a group card, leading `urn:uuid:` removed.
    public var members: [String]
    /// The card's list row (`RoloStore.cardListings`); nil leaves the card out of lists
    /// until `backfillCardListings` gives it one.
    public var listing: CardListingFields?

    public init(uid: String, kind: String, indexEntries: [IndexEntry], members: [String],
                listing: CardListingFields? = nil) {
        self.uid = uid; self.kind = kind; self.indexEntries = indexEntries; self.members = members
        self.listing = listing
    }
}

public struct IndexEntry: Sendable, Hashable {
    public var property: String
    public var value: String
    public init(property: String, value: String) {
        self.property = property.uppercased(); self.value = value
    }
}

public struct CardImport: Sendable {
    public var name: String
    public var data: Data
    public var contentType: String
    public var card: CardMetadata
    public init(name: String, data: Data, contentType: String = "text/vcard; charset=utf-8", card: CardMetadata) {
        self.name = name; self.data = data; self.contentType = contentType; self.card = card
    }
}

/// HTTP write preconditions, evaluated inside the write transaction.
public enum WritePrecondition: Sendable, Hashable {
    case none
    /// `If-Match: "etag"` (or several): the current ETag must be one of them.
    case ifMatch([String])
    /// `If-Match: *`: the resource must exist.
    case ifMatchAny
    /// `If-None-Match: *`: the resource must not exist.
    case ifNoneMatchAny
    /// `If-None-Match: "etag"`: the current ETag must be none of them.
    case ifNoneMatch([String])
}

public struct PutResult: Sendable, Hashable {
    public var etag: String
    public var created: Bool
    public var seq: Int64
    public init(etag: String, created: Bool, seq: Int64) {
        self.etag = etag; self.created = created; self.seq = seq
    }
}

public struct ChangeSet: Sendable, Hashable {
    public struct Change: Sendable, Hashable {
        public var name: String
        public var deleted: Bool
        public var seq: Int64
        public init(name: String, deleted: Bool, seq: Int64) {
            self.name = name; self.deleted = deleted; self.seq = seq
        }
    }
    public var changes: [Change]
    /// The seq to hand out as the next sync token.
    public var newSeq: Int64
    public var truncated: Bool
    public init(changes: [Change], newSeq: Int64, truncated: Bool) {
        self.changes = changes; self.newSeq = newSeq; self.truncated = truncated
    }
}

/// A property name in Clark terms: `{namespace}name`.
public struct PropertyName: Sendable, Hashable, CustomStringConvertible {
    public var namespace: String
    public var name: String
    public init(namespace: String, name: String) { self.namespace = namespace; self.name = name }
    public var description: String { "{\(namespace)}\(name)" }
}

/// A dead property: its name and its value as an XML fragment (the element's inner XML,
/// with namespace declarations it needs), stored and returned verbatim.
public struct DeadProperty: Sendable, Hashable {
    public var name: PropertyName
    public var xmlValue: String
    /// The `xml:lang` in scope where the property was set (RFC 4918 §4.3 says it is part of
    /// the value), nil when none was.
    public var language: String?
    public init(name: PropertyName, xmlValue: String, language: String? = nil) {
        self.name = name; self.xmlValue = xmlValue; self.language = language
    }
}

/// A query answerable from the index (RFC 6352 text-match semantics on case-folded values).
public indirect enum IndexPredicate: Sendable, Hashable {
    public enum Collation: String, Sendable { case asciiCasemap = "i;ascii-casemap", unicodeCasemap = "i;unicode-casemap", octet = "i;octet" }
    public enum MatchType: String, Sendable { case equals, contains, startsWith = "starts-with", endsWith = "ends-with" }
    /// Some value of `property` matches (or, negated, some value does not match).
    case textMatch(property: String, text: String, collation: Collation, match: MatchType, negate: Bool)
    case defined(property: String)
    case notDefined(property: String)
    case all([IndexPredicate])
    case any([IndexPredicate])
}

public enum StoreError: Error, Sendable, Hashable {
    case notFound
    case preconditionFailed
    /// Another resource in the book already has this UID.
    case uidConflict(existingName: String)
    case alreadyExists
    case parentNotFound
    case userExists
    case noSuchUser
    case syncTokenTooOld
    case invalidSyncToken
    case invalidName(String)
    /// A request that makes no sense whatever the state: sharing a book with its owner,
    /// a token name used twice, a book that is not one. The text says why.
    case invalid(String)
    /// The database cannot be reached or answer right now (a lost connection, a restarting
    /// server, a statement that ran out of time): nothing was changed that the caller can
    /// tell of, and the same request may succeed later. The server answers 503 with
    /// `Retry-After`. Only stores that talk to a database server throw it.
    case unavailable(String)
}
