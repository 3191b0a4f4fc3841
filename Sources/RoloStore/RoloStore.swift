import Foundation

/// The whole storage contract, as the server and the CLI hold it: every role a back end
/// plays. SQLite (`SQLiteStore`, target RoloSQLite) is the embedded implementation;
/// PostgreSQL (`PostgresStore`, target RoloPostgres) implements the same roles, so every
/// semantic (preconditions checked inside the write transaction, change-log rows written
/// with the resource, UID uniqueness) is part of this contract, not a database's trick;
/// the store suite runs against both. A front end or a test double that needs less names
/// only the roles it uses (`CardStore`, `AccountStore`, `SharingStore`, `PushStore`,
/// `WebStore`, `StoreCoordination`, `StoreMaintenance`; snapshots: `StoreSnapshotting`).
public protocol RoloStore: CardStore, AccountStore, SharingStore, PushStore, WebStore, StoreCoordination,
                           StoreMaintenance {}

extension CardStore {
    public func importFinished(collectionID: Int64, cards: Int) async {}

    public func resourceInfos(collectionID: Int64, names: [String]) async throws -> [ResourceInfo] {
        try await resources(collectionID: collectionID, names: names).map(\.info)
    }

    public func resourceCount(collectionID: Int64, cap: Int) async throws -> Int {
        min(try await listResources(collectionID: collectionID).count, max(cap, 0))
    }

    public func queryHits(collectionID: Int64, predicate: IndexPredicate, limit: Int?, countingBook: Bool,
                          firstPage: Int, withBodies: Bool, bodyLimit: Int) async throws -> QueryHits {
        let names = try await query(collectionID: collectionID, predicate: predicate, limit: limit)
        let bookCards = countingBook ? try await resourceCount(collectionID: collectionID, cap: names.count + 1) : nil
        let first = Array(names.prefix(max(firstPage, 0)))
        let cards = first.isEmpty ? []
            : withBodies ? try await resources(collectionID: collectionID, names: first, bodyLimit: bodyLimit)
            : try await resourceInfos(collectionID: collectionID, names: first).map { StoredResource(info: $0, data: Data()) }
        return QueryHits(names: names, bookCards: bookCards, firstCards: cards)
    }

    public func listResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [ResourceInfo] {
        Self.page(of: try await listResources(collectionID: collectionID), name: \.name, after: name, limit: limit)
    }

    public func allResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [StoredResource] {
        Self.page(of: try await allResources(collectionID: collectionID), name: \.info.name, after: name, limit: limit)
    }

    public func resources(collectionID: Int64, names: [String], bodyLimit: Int, countingBookUpTo cap: Int) async throws
        -> (cards: [StoredResource], bookCards: Int) {
        let cards = try await resources(collectionID: collectionID, names: names, bodyLimit: bodyLimit)
        return (cards, try await resourceCount(collectionID: collectionID, cap: cap))
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
        let following = rows.filter { row in cursor.map { $0.precedesInBytes(name(row)) } ?? true }
        return Array(following.sorted { name($0).precedesInBytes(name($1)) }.prefix(limit))
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

/// The read behind the server's inline GET (`DAVService.inlineResponse(to:done:)`, answered
/// before the HTTP codec): the resource at a path with its book, and the account password
/// stamp (`AccountStore.accountPasswordStamp(user:)`) of the user whose cached login asks,
/// read together. Both back ends serve it, each as it reads best: SQLite on the calling
/// thread in microseconds (a row reader, never queued behind other work), PostgreSQL in one
/// prepared statement, one round trip where the full path takes two.
public protocol InlineResourceReads: Sendable {
    /// Calls `done` exactly once: with what `RoloStore.resource(owner:collectionPath:name:)`
    /// answers and `user`'s stamp, or nil when the read failed (the full path then answers,
    /// and reports the error). A store that reads without waiting calls it on the calling
    /// thread before returning, and must never block for long (no waiting for a connection,
    /// a lock or I/O beyond the read itself); one over a network calls it when its answer
    /// comes, on whatever thread that is.
    func readInline(owner: String, collectionPath: [String], name: String, stampOf user: String,
                    done: @escaping @Sendable (InlineRead?) -> Void)
}

/// What `InlineResourceReads.readInline` read.
public struct InlineRead: Sendable {
    /// The resource and its book; nil when there is none at the path.
    public var found: LocatedResource?
    /// The account's password stamp; nil for no such user, or one that cannot sign in with it.
    public var stamp: String?
    public init(found: LocatedResource?, stamp: String?) { self.found = found; self.stamp = stamp }
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
    /// What the database takes on disk, as its back end knows it (SQLite: the file and its
    /// write-ahead log; PostgreSQL: `pg_database_size`); nil when it cannot tell. Asked of the
    /// store so that no front end needs to know where, or what, the database is.
    public var databaseBytes: Int64?

    public init(users: Int, addressBooks: Int, cards: Int, databaseBytes: Int64? = nil) {
        self.users = users; self.addressBooks = addressBooks; self.cards = cards; self.databaseBytes = databaseBytes
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

/// `CardStore.queryHits`' answer.
public struct QueryHits: Sendable, Hashable {
    /// The matching cards' names, in the UTF-8 byte order of the names.
    public var names: [String]
    /// The book's count up to one more than the names; nil when not asked.
    public var bookCards: Int?
    /// The cards of the first names asked for, in the same order (bodies as asked).
    public var firstCards: [StoredResource]

    public init(names: [String], bookCards: Int?, firstCards: [StoredResource]) {
        self.names = names; self.bookCards = bookCards; self.firstCards = firstCards
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
    /// The changed cards that still exist, by name, when the store read them with the
    /// changes, from the same snapshot (PostgreSQL does: a sync that lists ETags then needs no
    /// second round trip for them); nil when it did not, and the caller reads them itself.
    public var cards: [String: ResourceInfo]?
    public init(changes: [Change], newSeq: Int64, truncated: Bool, cards: [String: ResourceInfo]? = nil) {
        self.changes = changes; self.newSeq = newSeq; self.truncated = truncated; self.cards = cards
    }

    /// Two change sets are equal when they tell the same changes: `cards` is what one store
    /// read ahead for its caller, and another store's answer without it says the same.
    public static func == (lhs: ChangeSet, rhs: ChangeSet) -> Bool {
        lhs.changes == rhs.changes && lhs.newSeq == rhs.newSeq && lhs.truncated == rhs.truncated
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(changes); hasher.combine(newSeq); hasher.combine(truncated)
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
