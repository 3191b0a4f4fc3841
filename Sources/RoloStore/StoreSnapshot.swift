import Foundation

/// A whole store as logical records, for `rolo migrate` (issue 20): SQLite and PostgreSQL
/// lay their tables out differently, but agree on these. Everything a client or a user can
/// tell is carried as stored, never recomputed: ids (sync tokens name collections by id),
/// sync positions, the change log with its tombstones and compaction floor, ETags, card
/// bytes, password and app-password hashes with the pepper they were made under. Derived
/// rows (search index, group members, list rows, trigram tables) are rebuilt by the target
/// from `SnapshotResource.card`, which the caller computes from the bytes (the store parses
/// no vCards). Card versions (issue 31) are copied as stored too: each version's time, ETag,
/// author and credential, and the bodies and photo parts they share, so `rolo history` and
/// `rolo restore` answer the same on the copy. Web sessions are left behind: signing in again is cheap, and a session
/// cookie would be the one secret the copy spreads. Times are seconds since 1970, as both
/// stores keep them, so they come back bit for bit.
public enum SnapshotTable: String, Sendable, CaseIterable {
    // In an order that writes every row after the rows it refers to.
    case settings, users, collections, resources, changes, deadProperties, shares, appPasswords,
         accessHourly, accessDaily, pushRegistrations, trash, feeds,
         // After `changes`: a copied change row is its card's newest version (both back
         // ends keep it there), which the copy of that version then leaves alone.
         cardVersions, cardVersionBodies, cardVersionParts, cardVersionPartRefs,
         directoryEntries
}

public enum SnapshotRecord: Sendable, Hashable {
    case setting(key: String, value: Data)
    case user(SnapshotUser)
    case collection(SnapshotCollection)
    case resource(SnapshotResource)
    case change(SnapshotChange)
    case deadProperty(SnapshotDeadProperty)
    case share(SnapshotShare)
    case appPassword(SnapshotAppPassword)
    case access(SnapshotAccess)
    case pushRegistration(SnapshotPushRegistration)
    case trash(SnapshotTrash)
    case feed(SnapshotFeed)
    case cardVersion(SnapshotCardVersion)
    /// A version body as stored (`VersionBody`'s skeleton, or a whole body), once per ETag.
    case cardVersionBody(etag: String, data: Data)
    /// A large property (a photo) shared by version bodies, once per hash.
    case cardVersionPart(hash: String, data: Data)
    /// Which parts a body refers to (what the pruning keeps them by), and where each starts
    /// and how long it is in the whole body (nil: not known, for a body no card held at v15).
    case cardVersionPartRef(etag: String, hash: String, start: Int64?, length: Int64?)
    /// A user's directory entry (issue 32), its JSON as stored.
    case directoryEntry(userID: Int64, entry: Data)
}

/// A row of `card_versions`: the card as one change left it (its body by ETag).
public struct SnapshotCardVersion: Sendable, Hashable {
    public var collectionID: Int64
    public var seq: Int64
    public var name: String
    public var at: Double
    /// Nil for a deletion.
    public var etag: String?
    public var contentType: String?
    public var actorUser: String?
    public var actorCredential: Int64?

    public init(collectionID: Int64, seq: Int64, name: String, at: Double, etag: String?, contentType: String?,
                actorUser: String?, actorCredential: Int64?) {
        self.collectionID = collectionID; self.seq = seq; self.name = name; self.at = at; self.etag = etag
        self.contentType = contentType; self.actorUser = actorUser; self.actorCredential = actorCredential
    }
}

/// A feed at a secret URL (issue 33): the secret's hash is copied, so its URL keeps working.
public struct SnapshotFeed: Sendable, Hashable {
    public var id: Int64
    public var userID: Int64
    public var kind: String
    public var secretHash: Data
    /// Collection ids, space-separated, as both stores keep them ('' for every book).
    public var books: String
    public var created: Double
    public var lastRead: Double?

    public init(id: Int64, userID: Int64, kind: String, secretHash: Data, books: String, created: Double, lastRead: Double?) {
        self.id = id; self.userID = userID; self.kind = kind; self.secretHash = secretHash; self.books = books
        self.created = created; self.lastRead = lastRead
    }
}

public struct SnapshotUser: Sendable, Hashable {
    public var id: Int64
    public var name: String
    /// The bcrypt hash as stored.
    public var passwordHash: String
    public var created: Double
    public var displayName: String?
    public var email: String?
    public var appPasswordsOnly: Bool
    public var admin: Bool
    public var disabled: Bool
    /// The home's ctag.
    public var homeSeq: Int64
    /// `UserAccount.source`.
    public var source: String

    public init(id: Int64, name: String, passwordHash: String, created: Double, displayName: String?, email: String?,
                appPasswordsOnly: Bool, admin: Bool, disabled: Bool, homeSeq: Int64, source: String = "local") {
        self.id = id; self.name = name; self.passwordHash = passwordHash; self.created = created
        self.displayName = displayName; self.email = email; self.appPasswordsOnly = appPasswordsOnly
        self.admin = admin; self.disabled = disabled; self.homeSeq = homeSeq; self.source = source
    }
}

public struct SnapshotCollection: Sendable, Hashable {
    public var id: Int64
    public var ownerID: Int64
    public var parentID: Int64?
    /// Components joined by '/', as both stores keep them.
    public var path: String
    /// `CollectionKind.rawValue`.
    public var kind: String
    public var displayName: String?
    public var description: String?
    public var syncSeq: Int64
    /// The compaction floor: tokens older than it are too old.
    public var minValidSeq: Int64
    public var created: Double
    public var modified: Double
    /// Kept so that push subscriptions stay valid.
    public var pushTopic: String

    public init(id: Int64, ownerID: Int64, parentID: Int64?, path: String, kind: String, displayName: String?,
                description: String?, syncSeq: Int64, minValidSeq: Int64, created: Double, modified: Double,
                pushTopic: String) {
        self.id = id; self.ownerID = ownerID; self.parentID = parentID; self.path = path; self.kind = kind
        self.displayName = displayName; self.description = description; self.syncSeq = syncSeq
        self.minValidSeq = minValidSeq; self.created = created; self.modified = modified; self.pushTopic = pushTopic
    }
}

public struct SnapshotResource: Sendable, Hashable {
    public var id: Int64
    public var collectionID: Int64
    public var name: String
    public var contentType: String
    /// As stored (never recomputed: clients hold it).
    public var etag: String
    public var modified: Double
    public var seq: Int64
    /// The card's UID and kind as stored with the resource (nil outside address books).
    public var uid: String?
    public var kind: String?
    public var data: Data
    /// Index entries, members and list row for the target to write; only `indexEntries`,
    /// `members` and `listing` are used (UID and kind come from the stored columns). Nil:
    /// the card gets no derived rows (plain collections, a card no parser reads).
    public var card: CardMetadata?

    public init(id: Int64, collectionID: Int64, name: String, contentType: String, etag: String, modified: Double,
                seq: Int64, uid: String?, kind: String?, data: Data, card: CardMetadata? = nil) {
        self.id = id; self.collectionID = collectionID; self.name = name; self.contentType = contentType
        self.etag = etag; self.modified = modified; self.seq = seq; self.uid = uid; self.kind = kind
        self.data = data; self.card = card
    }
}

public struct SnapshotChange: Sendable, Hashable {
    public var collectionID: Int64
    public var seq: Int64
    public var name: String
    public var deleted: Bool
    public var at: Double
    public var actorUser: String?
    public var actorCredential: Int64?

    public init(collectionID: Int64, seq: Int64, name: String, deleted: Bool, at: Double, actorUser: String?,
                actorCredential: Int64?) {
        self.collectionID = collectionID; self.seq = seq; self.name = name; self.deleted = deleted; self.at = at
        self.actorUser = actorUser; self.actorCredential = actorCredential
    }
}

public struct SnapshotDeadProperty: Sendable, Hashable {
    public var collectionID: Int64
    /// '' for the collection's own properties.
    public var resource: String
    public var namespace: String
    public var name: String
    public var xml: String
    public var language: String?

    public init(collectionID: Int64, resource: String, namespace: String, name: String, xml: String, language: String? = nil) {
        self.collectionID = collectionID; self.resource = resource; self.namespace = namespace; self.name = name
        self.xml = xml; self.language = language
    }
}

public struct SnapshotShare: Sendable, Hashable {
    public var id: Int64
    public var collectionID: Int64
    public var shareeID: Int64
    public var access: String
    public var state: String
    public var mountName: String
    public var mountDisplayName: String?
    public var created: Double
    public var modified: Double

    public init(id: Int64, collectionID: Int64, shareeID: Int64, access: String, state: String, mountName: String,
                mountDisplayName: String?, created: Double, modified: Double) {
        self.id = id; self.collectionID = collectionID; self.shareeID = shareeID; self.access = access
        self.state = state; self.mountName = mountName; self.mountDisplayName = mountDisplayName
        self.created = created; self.modified = modified
    }
}

public struct SnapshotAppPassword: Sendable, Hashable {
    /// Kept: the access history and push registrations name credentials by id.
    public var id: Int64
    public var userID: Int64
    public var publicID: String
    public var name: String
    /// HMAC under the pepper (the `app-password-pepper` setting, copied too).
    public var secretHash: Data
    public var readOnly: Bool
    public var allBooks: Bool
    public var created: Double
    public var lastUsed: Double?
    public var lastAddress: String?
    public var lastUserAgent: String?
    public var revoked: Double?
    /// The books it is restricted to (collection ids), sorted.
    public var books: [Int64]

    public init(id: Int64, userID: Int64, publicID: String, name: String, secretHash: Data, readOnly: Bool,
                allBooks: Bool, created: Double, lastUsed: Double?, lastAddress: String?, lastUserAgent: String?,
                revoked: Double?, books: [Int64]) {
        self.id = id; self.userID = userID; self.publicID = publicID; self.name = name; self.secretHash = secretHash
        self.readOnly = readOnly; self.allBooks = allBooks; self.created = created; self.lastUsed = lastUsed
        self.lastAddress = lastAddress; self.lastUserAgent = lastUserAgent; self.revoked = revoked; self.books = books
    }
}

/// A row of `access_hourly` (`daily` false) or `access_daily`.
public struct SnapshotAccess: Sendable, Hashable {
    public var daily: Bool
    public var userID: Int64
    public var credentialID: Int64
    public var bookID: Int64
    public var periodStart: Int64
    public var requests: Int64
    public var cardsRead: Int64
    public var cardsWritten: Int64
    public var cardsDeleted: Int64
    public var fullDownload: Bool

    public init(daily: Bool, userID: Int64, credentialID: Int64, bookID: Int64, periodStart: Int64, requests: Int64,
                cardsRead: Int64, cardsWritten: Int64, cardsDeleted: Int64, fullDownload: Bool) {
        self.daily = daily; self.userID = userID; self.credentialID = credentialID; self.bookID = bookID
        self.periodStart = periodStart; self.requests = requests; self.cardsRead = cardsRead
        self.cardsWritten = cardsWritten; self.cardsDeleted = cardsDeleted; self.fullDownload = fullDownload
    }
}

public struct SnapshotPushRegistration: Sendable, Hashable {
    public var id: String
    public var userID: Int64
    public var collectionID: Int64
    public var credentialID: Int64
    public var pushResource: String
    public var publicKey: Data
    public var authSecret: Data
    public var expires: Double
    public var created: Double
    public var lastSuccess: Double?
    public var failures: Int64
    public var firstFailure: Double?
    public var retryAfter: Double?

    public init(id: String, userID: Int64, collectionID: Int64, credentialID: Int64, pushResource: String,
                publicKey: Data, authSecret: Data, expires: Double, created: Double, lastSuccess: Double?,
                failures: Int64, firstFailure: Double?, retryAfter: Double?) {
        self.id = id; self.userID = userID; self.collectionID = collectionID; self.credentialID = credentialID
        self.pushResource = pushResource; self.publicKey = publicKey; self.authSecret = authSecret
        self.expires = expires; self.created = created; self.lastSuccess = lastSuccess; self.failures = failures
        self.firstFailure = firstFailure; self.retryAfter = retryAfter
    }
}

public struct SnapshotTrash: Sendable, Hashable {
    public var id: Int64
    public var collectionID: Int64
    public var batch: String
    public var reason: String
    public var name: String
    public var uid: String
    public var displayName: String
    public var etag: String
    public var replacedBy: String?
    public var contentType: String
    public var data: Data
    public var trashed: Double
    public var user: String?

    public init(id: Int64, collectionID: Int64, batch: String, reason: String, name: String, uid: String,
                displayName: String, etag: String, replacedBy: String?, contentType: String, data: Data,
                trashed: Double, user: String?) {
        self.id = id; self.collectionID = collectionID; self.batch = batch; self.reason = reason; self.name = name
        self.uid = uid; self.displayName = displayName; self.etag = etag; self.replacedBy = replacedBy
        self.contentType = contentType; self.data = data; self.trashed = trashed; self.user = user
    }
}

/// Reads a store's records, page by page.
public protocol StoreSnapshotReading: Sendable {
    /// Rows per table, for progress (`resources` is what the progress line counts).
    func snapshotCounts() async throws -> [SnapshotTable: Int]
    /// Up to `limit` records of `table` following `last` (the last record of the previous
    /// page, nil for the first), in key order: a big store is read with flat memory.
    func snapshotPage(_ table: SnapshotTable, after last: SnapshotRecord?, limit: Int) async throws -> [SnapshotRecord]
    /// Ends the reader's transaction and closes its connection.
    func close() async
}

/// A store that can be read and written as `SnapshotRecord`s (both stores are).
public protocol StoreSnapshotting: RoloStore {
    /// What `StoreMigration` copies from: the store as it is now, read in one read
    /// transaction on a connection of its own until `close()`, so the copy is consistent
    /// even if a server writes meanwhile (its later writes are not in the copy).
    func snapshotReader() async throws -> any StoreSnapshotReading
    /// True when the store holds any user, collection or resource: such a target is refused.
    func holdsData() async throws -> Bool
    /// Writes the records in one transaction, as they are: no seq moves, no change rows
    /// written for resources (the change log comes as records of its own). Settings replace
    /// the target's own (its pepper and push key were made for nobody yet).
    func restore(_ records: [SnapshotRecord]) async throws
    /// After the last `restore`: id counters past the copied ids, statistics, the pepper
    /// reloaded.
    func finishRestore() async throws
}

/// What `StoreMigration.run` did.
public struct MigrationSummary: Sendable, Equatable {
    /// Records copied per table.
    public var copied: [SnapshotTable: Int] = [:]
    /// Cards no parser could read: copied with their bytes and ETags but without index or list rows.
    public var unindexed = 0
    public init() {}
}

public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    case targetNotEmpty

    public var description: String {
        switch self {
        case .targetNotEmpty: "the target database already holds users, collections or cards; migrate copies into an empty database only"
        }
    }
}

/// Copies a whole store into an empty one (`rolo migrate`), table by table in key order,
/// `batchSize` records per read and per write transaction.
public enum StoreMigration {
    public static func run(from source: any StoreSnapshotting, to target: any StoreSnapshotting, batchSize: Int = 500,
                           metadata: @escaping @Sendable (Data) -> CardMetadata?,
                           progress: (@Sendable (_ cards: Int, _ total: Int) -> Void)? = nil) async throws -> MigrationSummary {
        guard try await !target.holdsData() else { throw MigrationError.targetNotEmpty }
        let reader = try await source.snapshotReader()
        do {
            let summary = try await copy(from: reader, to: target, batchSize: batchSize, metadata: metadata, progress: progress)
            await reader.close()
            return summary
        } catch {
            await reader.close()
            throw error
        }
    }

    private static func copy(from reader: any StoreSnapshotReading, to target: any StoreSnapshotting, batchSize: Int,
                             metadata: @escaping @Sendable (Data) -> CardMetadata?,
                             progress: (@Sendable (_ cards: Int, _ total: Int) -> Void)?) async throws -> MigrationSummary {
        let totalCards = try await reader.snapshotCounts()[.resources] ?? 0
        var summary = MigrationSummary()
        var addressBooks = Set<Int64>()
        var cards = 0
        progress?(0, totalCards)
        for table in SnapshotTable.allCases {
            var last: SnapshotRecord?
            var copied = 0
            while true {
                var page = try await reader.snapshotPage(table, after: last, limit: max(batchSize, 1))
                guard let end = page.last else { break }
                last = end
                for index in page.indices {
                    switch page[index] {
                    case .collection(let collection) where collection.kind == CollectionKind.addressBook.rawValue:
                        addressBooks.insert(collection.id)
                    case .resource(var resource) where addressBooks.contains(resource.collectionID):
                        resource.card = metadata(resource.data)
                        if resource.card == nil { summary.unindexed += 1 }
                        page[index] = .resource(resource)
                    default: break
                    }
                }
                try await target.restore(page)
                copied += page.count
                if table == .resources {
                    cards += page.count
                    progress?(cards, totalCards)
                }
            }
            summary.copied[table] = copied
        }
        try await target.finishRestore()
        return summary
    }
}
