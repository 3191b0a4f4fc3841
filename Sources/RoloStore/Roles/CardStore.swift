import Foundation

/// The cards and their change log: collections in a user's home, the resources in them with
/// their ETags, dead properties and index, and what changed since a sync token. What DAV,
/// the web UI and imports write through; every rule a write obeys (names, preconditions,
/// UIDs) is decided in the core (`WriteRules`), inside the back end's transaction.
public protocol CardStore: Sendable {
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
    /// Many resources in one query, each once, in the UTF-8 byte order of their names;
    /// absent names are simply missing from the result.
    func resources(collectionID: Int64, names: [String]) async throws -> [StoredResource]
    /// The same without the bodies, for answers that list no `address-data`. A default
    /// implementation reads the resources and drops the bodies.
    func resourceInfos(collectionID: Int64, names: [String]) async throws -> [ResourceInfo]
    /// Name, ETag, size, content type, modified of every resource, without bodies.
    func listResources(collectionID: Int64) async throws -> [ResourceInfo]
    /// Every resource with its body, in name order (exports, full scans).
    func allResources(collectionID: Int64) async throws -> [StoredResource]
    /// How many resources the collection holds, counting no further than `cap`: whether a
    /// request read a whole book needs the count, not the names (a default implementation
    /// lists them).
    func resourceCount(collectionID: Int64, cap: Int) async throws -> Int
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
    /// `resources(collectionID:names:bodyLimit:)` and the book's count up to `cap`
    /// (`resourceCount(collectionID:cap:)`): the first page of a multiget that may read the
    /// whole book, which the access history flags. PostgreSQL reads both in one statement;
    /// a default implementation asks twice.
    func resources(collectionID: Int64, names: [String], bodyLimit: Int, countingBookUpTo cap: Int) async throws
        -> (cards: [StoredResource], bookCards: Int)
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
    /// Drops tombstones older than `date` (the log keeps one row per name, its latest
    /// change, so rows of live resources never pile up); tokens older than the newest
    /// dropped tombstone become too old (`StoreError.syncTokenTooOld`).
    func compactChanges(olderThan date: Date) async throws
    /// The latest change of each resource of the book with who made it, newest first.
    func attributedChanges(collectionID: Int64, limit: Int) async throws -> [AttributedChange]

    // MARK: Dead properties
    /// Properties of a collection (name nil) or of a resource in it.
    func deadProperties(collectionID: Int64, resource: String?) async throws -> [DeadProperty]
    /// Sets and removes dead properties atomically.
    func updateDeadProperties(collectionID: Int64, resource: String?,
                              set: [DeadProperty], remove: [PropertyName]) async throws

    // MARK: Search and groups
    /// Names of resources in the book matching `predicate`, answered from the index.
    func query(collectionID: Int64, predicate: IndexPredicate, limit: Int?) async throws -> [String]
    /// What an `addressbook-query` answered from the index reads first: `query`'s names, the
    /// book's count up to one more than them when `countingBook` (whether the hits are the
    /// whole book, which a query with address data tells the access history), and the cards
    /// of the first `firstPage` names, with their bodies up to `bodyLimit` when `withBodies`
    /// (as `resources(collectionID:names:bodyLimit:)`), else without (as `resourceInfos`).
    /// PostgreSQL reads it all in one statement; a default implementation asks in turn.
    func queryHits(collectionID: Int64, predicate: IndexPredicate, limit: Int?, countingBook: Bool,
                   firstPage: Int, withBodies: Bool, bodyLimit: Int) async throws -> QueryHits
    /// Member UIDs of the group card `name` (leading `urn:uuid:` removed).
    func groupMembers(collectionID: Int64, groupName: String) async throws -> [String]
    /// Resource names of the group cards that list `uid` as a member.
    func groups(collectionID: Int64, containingUID uid: String) async throws -> [String]

    // MARK: Bulk
    /// Imports many cards in one transaction per `batchSize`; calls `progress` after each
    /// batch with the number done. Cards whose UID already exists are replaced.
    func importCards(collectionID: Int64, cards: [CardImport], batchSize: Int,
                     progress: (@Sendable (Int) -> Void)?) async throws
    /// An import (`CardImporter.store`) has written `cards` cards into the book, in batches
    /// of `importCards` calls: the store may refresh what a bulk write leaves stale
    /// (PostgreSQL: the planner's statistics and the visibility map). Only speed depends on
    /// it, so it never fails. Does nothing by default.
    func importFinished(collectionID: Int64, cards: Int) async

    /// Quota figures for the user's home.
    func usedBytes(owner: String) async throws -> Int64
}
