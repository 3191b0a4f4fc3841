import Foundation
import RoloStore

/// The `CardStore` role held in memory: a test double for front ends and suites that need
/// cards, books and their change log but no database (as `NIOEmbedded` stands in for sockets).
/// It plays only that role; accounts, shares, pushes and the web UI's tables belong to the
/// real back ends. Every refusal comes from the core's rules (`WriteRules`,
/// `CollectionRules`, `Naming`), the ones SQLite and PostgreSQL ask inside their
/// transactions, so it refuses what they refuse with the same error by construction; the
/// store suite (Tests/RoloStoreTests, `StoreBackend.cardBackends`) runs it beside them.
///
/// An actor: each call is one turn of it, which is what a back end's transaction gives.
/// A write works on a copy of the state and keeps it only when it succeeds, so a refused
/// write changes nothing, as a rolled-back transaction would.
public actor InMemoryCardStore: CardStore {
    var state = State()
    let clock: StoreClock

    /// A store whose users are `users`: user creation is `AccountStore`'s role, so the
    /// double only knows names that may own collections, and makes no `default` book.
    public init(users: [String] = [], clock: StoreClock = .system) throws {
        var initial = State()
        for user in users { try Self.add(user: user, to: &initial) }
        self.clock = clock
        state = initial
    }

    /// Makes `name` a user who may own collections; the name is checked as a user's is.
    public func addUser(_ name: String) throws {
        try Self.add(user: name, to: &state)
    }

    private static func add(user name: String, to state: inout State) throws {
        try Naming.validate(name, what: "user")
        guard state.users.insert(Exact(name)).inserted else { throw StoreError.userExists }
    }

    /// Runs `body` on a copy of the state and keeps the copy only when it returns: the
    /// double's transaction.
    func transaction<Result>(_ body: (inout State) throws -> Result) throws -> Result {
        var copy = state
        let result = try body(&copy)
        state = copy
        return result
    }

    /// How many rows of each kind the store holds: what a test asks where it would count a
    /// real back end's table rows (that a deletion cascades, that a refusal wrote nothing).
    public var tally: Tally {
        let books = state.collections.values
        return Tally(collections: books.count, plainCollections: books.filter { $0.info.kind == .plain }.count,
                     resources: books.reduce(0) { $0 + $1.resources.count },
                     changeRows: books.reduce(0) { $0 + $1.changes.count },
                     deadProperties: books.reduce(0) { $0 + $1.properties.values.reduce(0) { $0 + $1.count } })
    }

    public struct Tally: Sendable, Hashable {
        public var collections: Int
        public var plainCollections: Int
        public var resources: Int
        public var changeRows: Int
        public var deadProperties: Int
    }
}

// MARK: State

extension InMemoryCardStore {
    /// Everything the store holds, a value: copying it is how a write can be undone.
    struct State {
        var users: Set<Exact> = []
        var collections: [Int64: Book] = [:]
        var nextCollectionID: Int64 = 1
        /// `CardHistoryStore.historyCompleteSince`: the latest cutoff a pruning used.
        var historyCompleteSince: Date?
        /// Resource ids are never reused, as a database's row ids are not.
        var nextResourceID: Int64 = 1

        mutating func newResourceID() -> Int64 {
            defer { nextResourceID += 1 }
            return nextResourceID
        }

        func collectionID(owner: String, path: [String]) -> Int64? {
            collections.first { book in
                book.value.info.owner.isExactly(owner) && book.value.info.path.count == path.count
                    && zip(book.value.info.path, path).allSatisfy { $0.isExactly($1) }
            }?.key
        }

        /// The book `id`, or `StoreError.notFound`.
        func book(_ id: Int64) throws(StoreError) -> Book {
            guard let book = collections[id] else { throw StoreError.notFound }
            return book
        }
    }

    /// A collection with what lives in it: its resources, its change log (one row per name,
    /// its latest change, as the back ends keep it) and its dead properties.
    struct Book {
        var info: CollectionInfo
        var parentID: Int64?
        /// Tokens older than this were compacted away (`compactChanges`).
        var minimumValidSeq: Int64 = 0
        var resources = ByName<Resource>()
        /// The name of the resource holding each card UID: unique per book.
        var uids = ByName<String>()
        var changes = ByName<ChangeRow>()
        /// Dead properties by resource name, "" for the collection's own.
        var properties = ByName<[PropertyKey: String]>()
        /// Every version kept (issue 31), oldest first: one per write and deletion, as the back
        /// ends' trigger on their change rows records it.
        var versions: [CardVersion] = []

        /// Writes `write` as its name (a new resource or a replacement, whose dead
        /// properties stay) with its change row; the caller checked it and moves the seq.
        mutating func store(_ write: ResourceWrite, id: Int64, seq: Int64, now: Date) {
            if let previous = resources[write.name]?.uid { uids[previous] = nil }
            resources[write.name] = Resource(
                id: id, info: ResourceInfo(name: write.name, contentType: write.contentType, etag: write.etag,
                                           size: write.data.count, modified: now, seq: seq),
                data: write.data, uid: write.card?.uid, entries: write.entries, members: write.card?.members ?? [])
            if let uid = write.card?.uid { uids[uid] = write.name }
            changes[write.name] = ChangeRow(seq: seq, deleted: false, at: now, author: write.author)
            versions.append(CardVersion(name: write.name, seq: seq, at: now, etag: write.etag, contentType: write.contentType,
                                        data: write.data, user: write.author?.user, credentialID: write.author?.credentialID))
        }

        /// Deletes the resource and its dead properties and leaves a tombstone.
        mutating func remove(_ name: String, seq: Int64, now: Date, author: ChangeAuthor?) {
            if let uid = resources.removeValue(forKey: name)?.uid { uids[uid] = nil }
            properties[name] = nil
            changes[name] = ChangeRow(seq: seq, deleted: true, at: now, author: author)
            versions.append(CardVersion(name: name, seq: seq, at: now, etag: nil, contentType: nil, data: nil,
                                        user: author?.user, credentialID: author?.credentialID))
        }

        /// The book's new sync position after a write.
        mutating func advance(to seq: Int64, now: Date) {
            info.syncSeq = seq
            info.modified = now
        }

        /// What a write of `card` as `name` finds, judged by the core's `WriteRules`.
        func checkWrite(name: String, card: CardMetadata?, precondition: WritePrecondition) throws(StoreError) -> Resource? {
            let existing = resources[name]
            try WriteRules.checkWrite(name: name, card: card, precondition: precondition,
                                      existing: existing.map { ExistingResource(id: $0.id, etag: $0.info.etag, uid: $0.uid) },
                                      uidHolder: card.flatMap { uids[$0.uid] })
            return existing
        }

        /// Resources in name order: UTF-8 byte order, as the back ends sort.
        var sortedResources: [Resource] {
            resources.values.sorted { $0.info.name.precedesInBytes($1.info.name) }
        }
    }

    struct Resource {
        var id: Int64
        var info: ResourceInfo
        var data: Data
        /// Nil for a resource that is no card (a plain collection's file).
        var uid: String?
        var entries: [FoldedIndexEntry]
        var members: [String]

        var stored: StoredResource { StoredResource(info: info, data: data) }
    }

    struct ChangeRow {
        var seq: Int64
        var deleted: Bool
        var at: Date
        var author: ChangeAuthor?
    }
}

// MARK: Collections

extension InMemoryCardStore {
    @discardableResult
    public func createCollection(owner: String, path: [String], kind: CollectionKind,
                                 displayName: String?, description: String?) throws -> CollectionInfo {
        try CollectionRules.validateNewPath(path)
        let now = clock.now
        return try transaction { state in
            guard state.users.contains(Exact(owner)) else { throw StoreError.noSuchUser }
            var parentID: Int64?
            if path.count > 1 {
                guard let parent = state.collectionID(owner: owner, path: Array(path.dropLast())) else {
                    throw StoreError.parentNotFound
                }
                try CollectionRules.checkNesting(parent: state.book(parent).info.kind, child: kind)
                parentID = parent
            }
            if state.collectionID(owner: owner, path: path) != nil { throw StoreError.alreadyExists }
            let id = state.nextCollectionID
            state.nextCollectionID += 1
            let info = CollectionInfo(id: id, owner: owner, path: path, kind: kind, displayName: displayName,
                                      description: description, syncSeq: 0, created: now, modified: now)
            state.collections[id] = Book(info: info, parentID: parentID)
            return info
        }
    }

    public func collection(owner: String, path: [String]) -> CollectionInfo? {
        state.collectionID(owner: owner, path: path).flatMap { state.collections[$0]?.info }
    }

    public func collection(id: Int64) -> CollectionInfo? {
        state.collections[id]?.info
    }

    /// In path order (the joined path's UTF-8 bytes), as the back ends list them.
    public func childCollections(owner: String, parentPath: [String]) -> [CollectionInfo] {
        let parentID: Int64?
        if parentPath.isEmpty {
            parentID = nil
        } else {
            guard let id = state.collectionID(owner: owner, path: parentPath) else { return [] }
            parentID = id
        }
        return state.collections.values
            .filter { $0.info.owner.isExactly(owner) && $0.parentID == parentID }
            .map(\.info)
            .sorted { $0.path.joined(separator: "/").precedesInBytes($1.path.joined(separator: "/")) }
    }

    public func updateCollection(id: Int64, displayName: String??, description: String??) throws {
        let now = clock.now
        try transaction { state in
            var book = try state.book(id)
            if let displayName { book.info.displayName = displayName }
            if let description { book.info.description = description }
            book.info.modified = now
            state.collections[id] = book
        }
    }

    /// Deletes the collection and every collection below it, with all they hold.
    public func deleteCollection(id: Int64) throws {
        try transaction { state in
            _ = try state.book(id)
            var doomed: Set<Int64> = [id]
            var grew = true
            while grew {
                let below = state.collections.filter { $0.value.parentID.map(doomed.contains) ?? false }.keys
                grew = !Set(below).isSubset(of: doomed)
                doomed.formUnion(below)
            }
            for id in doomed { state.collections[id] = nil }
        }
    }

    public func usedBytes(owner: String) -> Int64 {
        state.collections.values.filter { $0.info.owner.isExactly(owner) }
            .reduce(0) { total, book in book.resources.values.reduce(total) { $0 + Int64($1.info.size) } }
    }

    // MARK: Dead properties

    /// In (namespace, name) order by their UTF-8 bytes, as the back ends return them.
    public func deadProperties(collectionID: Int64, resource: String?) -> [DeadProperty] {
        (state.collections[collectionID]?.properties[resource ?? ""] ?? [:])
            .map { DeadProperty(name: $0.key.propertyName, xmlValue: $0.value) }
            .sorted { utf8Precedes(($0.name.namespace, $0.name.name), ($1.name.namespace, $1.name.name)) }
    }

    /// Removals apply first, then sets, all or nothing (PROPPATCH is atomic).
    public func updateDeadProperties(collectionID: Int64, resource: String?,
                                     set: [DeadProperty], remove: [PropertyName]) throws {
        try transaction { state in
            var book = try state.book(collectionID)
            if let resource, book.resources[resource] == nil { throw StoreError.notFound }
            var properties = book.properties[resource ?? ""] ?? [:]
            for name in remove { properties[PropertyKey(name)] = nil }
            for property in set { properties[PropertyKey(property.name)] = property.xmlValue }
            book.properties[resource ?? ""] = properties.isEmpty ? nil : properties
            state.collections[collectionID] = book
        }
    }
}

/// Whether (a.0, a.1) sorts before (b.0, b.1) by their strings' UTF-8 bytes, as SQL's
/// `ORDER BY` on two text columns does.
private func utf8Precedes(_ a: (String, String), _ b: (String, String)) -> Bool {
    if !a.0.isExactly(b.0) { return a.0.precedesInBytes(b.0) }
    return a.1.precedesInBytes(b.1)
}
