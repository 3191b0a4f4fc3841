import Foundation
import RoloStore

/// A complete `RoloStore` in memory for protocol tests: the same semantics the SQLite store
/// promises (preconditions checked with the write, UID unique per book, change log with
/// tombstones, seq per collection), so DAV tests exercise real behaviour, not a mock.
actor InMemoryStore: RoloStore {
    private struct Entry {
        var info: ResourceInfo
        var data: Data
        var card: CardMetadata?
    }

    private struct Change {
        var seq: Int64
        var name: String
        var deleted: Bool
    }

    private var passwords: [String: String] = [:]
    private var profiles: [String: (displayName: String?, email: String?)] = [:]
    private var collections: [Int64: CollectionInfo] = [:]
    private var entries: [Int64: [String: Entry]] = [:]
    private var changeLog: [Int64: [Change]] = [:]
    private var oldestValidSeq: [Int64: Int64] = [:]
    private var dead: [String: [DeadProperty]] = [:]
    private var nextID: Int64 = 1
    /// WebDAV write locks by token (InMemoryStore+Coordination.swift).
    var heldLocks: [String: WriteLock] = [:]
    /// Failed logins by "subnet:key" / "account:name".
    var loginFailures: [String: (count: Int, last: Date)] = [:]

    init() {}

    // MARK: Users

    func createUser(name: String, password: String) async throws {
        guard passwords[name] == nil else { throw StoreError.userExists }
        passwords[name] = password
        try await createCollection(owner: name, path: ["default"], kind: .addressBook, displayName: "Contacts", description: nil)
    }

    func setPassword(user: String, password: String) async throws {
        guard passwords[user] != nil else { throw StoreError.noSuchUser }
        passwords[user] = password
    }

    func verifyPassword(user: String, password: String) async throws -> Bool { passwords[user] == password }
    func accountPasswordStamp(user: String) async throws -> String? { passwords[user] }

    func listUsers() async throws -> [String] { passwords.keys.sorted() }

    func deleteUser(name: String) async throws {
        guard passwords.removeValue(forKey: name) != nil else { throw StoreError.noSuchUser }
        profiles[name] = nil
        for info in collections.values where info.owner == name { removeCollection(info.id) }
    }

    // MARK: Collections

    @discardableResult
    func createCollection(owner: String, path: [String], kind: CollectionKind,
                          displayName: String?, description: String?) async throws -> CollectionInfo {
        guard let name = path.last, !name.isEmpty, !name.contains("/") else { throw StoreError.invalidName(path.joined(separator: "/")) }
        if findCollection(owner: owner, path: path) != nil { throw StoreError.alreadyExists }
        if path.count > 1 {
            guard let parent = findCollection(owner: owner, path: Array(path.dropLast())) else { throw StoreError.parentNotFound }
            if entries[parent.id]?[name] != nil { throw StoreError.alreadyExists }
        }
        let now = Date()
        let info = CollectionInfo(id: nextID, owner: owner, path: path, kind: kind, displayName: displayName,
                                  description: description, syncSeq: 0, created: now, modified: now)
        nextID += 1
        collections[info.id] = info
        entries[info.id] = [:]
        return info
    }

    func collection(owner: String, path: [String]) async throws -> CollectionInfo? { findCollection(owner: owner, path: path) }

    func collection(id: Int64) async throws -> CollectionInfo? { collections[id] }

    func childCollections(owner: String, parentPath: [String]) async throws -> [CollectionInfo] {
        collections.values
            .filter { $0.owner == owner && $0.path.count == parentPath.count + 1 && $0.path.starts(with: parentPath) }
            .sorted { $0.path.lexicographicallyPrecedes($1.path) }
    }

    func updateCollection(id: Int64, displayName: String??, description: String??) async throws {
        guard var info = collections[id] else { throw StoreError.notFound }
        if let displayName { info.displayName = displayName }
        if let description { info.description = description }
        info.modified = Date()
        collections[id] = info
    }

    func deleteCollection(id: Int64) async throws {
        guard collections[id] != nil else { throw StoreError.notFound }
        removeCollection(id)
    }

    private func removeCollection(_ id: Int64) {
        guard let info = collections[id] else { return }
        for other in collections.values where other.owner == info.owner && other.path.count > info.path.count
            && other.path.starts(with: info.path) {
            removeCollection(other.id)
        }
        collections[id] = nil
        entries[id] = nil
        changeLog[id] = nil
        dead = dead.filter { !$0.key.hasPrefix("\(id)/") }
    }

    private func findCollection(owner: String, path: [String]) -> CollectionInfo? {
        collections.values.first { $0.owner == owner && $0.path == path }
    }

    // MARK: Resources

    func putResource(collectionID: Int64, name: String, data: Data, contentType: String,
                     card: CardMetadata?, precondition: WritePrecondition) async throws -> PutResult {
        guard var info = collections[collectionID] else { throw StoreError.notFound }
        guard !name.isEmpty, !name.contains("/") else { throw StoreError.invalidName(name) }
        if collections.values.contains(where: { $0.owner == info.owner && $0.path == info.path + [name] }) {
            throw StoreError.alreadyExists
        }
        let existing = entries[collectionID]?[name]
        guard Self.holds(precondition, etag: existing?.info.etag) else { throw StoreError.preconditionFailed }
        if info.kind == .addressBook {
            guard let card else { throw StoreError.invalidName("card metadata missing") }
            if let other = entries[collectionID]?.values.first(where: { $0.card?.uid == card.uid && $0.info.name != name }) {
                throw StoreError.uidConflict(existingName: other.info.name)
            }
        }
        info.syncSeq += 1
        info.modified = Date()
        collections[collectionID] = info
        let resourceInfo = ResourceInfo(name: name, contentType: contentType, etag: Self.etag(data), size: data.count,
                                        modified: Date(), seq: info.syncSeq)
        entries[collectionID, default: [:]][name] = Entry(info: resourceInfo, data: data, card: card)
        changeLog[collectionID, default: []].append(Change(seq: info.syncSeq, name: name, deleted: false))
        return PutResult(etag: resourceInfo.etag, created: existing == nil, seq: info.syncSeq)
    }

    func resource(collectionID: Int64, name: String) async throws -> StoredResource? {
        entries[collectionID]?[name].map { StoredResource(info: $0.info, data: $0.data) }
    }

    func resources(collectionID: Int64, names: [String]) async throws -> [StoredResource] {
        let book = entries[collectionID] ?? [:]
        return Set(names).compactMap { book[$0] }.map { StoredResource(info: $0.info, data: $0.data) }
    }

    func listResources(collectionID: Int64) async throws -> [ResourceInfo] {
        (entries[collectionID] ?? [:]).values.map(\.info).sorted { $0.name < $1.name }
    }

    func allResources(collectionID: Int64) async throws -> [StoredResource] {
        (entries[collectionID] ?? [:]).values.map { StoredResource(info: $0.info, data: $0.data) }.sorted { $0.info.name < $1.info.name }
    }

    func resourceInfo(collectionID: Int64, name: String) async throws -> ResourceInfo? { entries[collectionID]?[name]?.info }

    func deleteResource(collectionID: Int64, name: String, precondition: WritePrecondition) async throws {
        guard var info = collections[collectionID] else { throw StoreError.notFound }
        guard let existing = entries[collectionID]?[name] else { throw StoreError.notFound }
        guard Self.holds(precondition, etag: existing.info.etag) else { throw StoreError.preconditionFailed }
        entries[collectionID]?[name] = nil
        dead["\(collectionID)/\(name)"] = nil
        info.syncSeq += 1
        collections[collectionID] = info
        changeLog[collectionID, default: []].append(Change(seq: info.syncSeq, name: name, deleted: true))
    }

    func transferResource(collectionID: Int64, name: String, sourceETag: String,
                          to targetCollectionID: Int64, name targetName: String,
                          data: Data, contentType: String, card: CardMetadata?, move: Bool) async throws -> PutResult {
        // All or nothing, like the SQLite transaction: restore everything on any error.
        let snapshot = (collections, entries, changeLog, dead)
        do {
            guard let source = entries[collectionID]?[name] else { throw StoreError.notFound }
            guard source.info.etag == sourceETag else { throw StoreError.preconditionFailed }
            let properties = dead["\(collectionID)/\(name)"]
            if move { try await deleteResource(collectionID: collectionID, name: name, precondition: .none) }
            let result = try await putResource(collectionID: targetCollectionID, name: targetName, data: data,
                                               contentType: contentType, card: card, precondition: .none)
            dead["\(targetCollectionID)/\(targetName)"] = properties
            return result
        } catch {
            (collections, entries, changeLog, dead) = snapshot
            throw error
        }
    }

    func resourceName(collectionID: Int64, uid: String) async throws -> String? {
        entries[collectionID]?.values.first { $0.card?.uid == uid }?.info.name
    }

    // MARK: Change log

    func changes(collectionID: Int64, since seq: Int64, limit: Int?) async throws -> ChangeSet {
        guard let info = collections[collectionID] else { throw StoreError.notFound }
        if seq > info.syncSeq { throw StoreError.invalidSyncToken }
        if seq < oldestValidSeq[collectionID, default: 0] { throw StoreError.syncTokenTooOld }
        var latest: [String: Change] = [:]
        for change in changeLog[collectionID, default: []] where change.seq > seq { latest[change.name] = change }
        let ordered = latest.values.sorted { $0.seq < $1.seq }
        if let limit, ordered.count > limit {
            let page = ordered.prefix(limit)
            return ChangeSet(changes: page.map { .init(name: $0.name, deleted: $0.deleted, seq: $0.seq) },
                             newSeq: page.last!.seq, truncated: true)
        }
        return ChangeSet(changes: ordered.map { .init(name: $0.name, deleted: $0.deleted, seq: $0.seq) },
                         newSeq: info.syncSeq, truncated: false)
    }

    func compactChanges(olderThan date: Date) async throws {
        for (id, info) in collections {
            oldestValidSeq[id] = info.syncSeq
            changeLog[id] = []
        }
    }

    // MARK: Dead properties

    func deadProperties(collectionID: Int64, resource: String?) async throws -> [DeadProperty] {
        dead["\(collectionID)/\(resource ?? "")"] ?? []
    }

    func updateDeadProperties(collectionID: Int64, resource: String?, set: [DeadProperty], remove: [PropertyName]) async throws {
        guard collections[collectionID] != nil else { throw StoreError.notFound }
        let key = "\(collectionID)/\(resource ?? "")"
        var properties = dead[key] ?? []
        properties.removeAll { property in remove.contains(property.name) || set.contains { $0.name == property.name } }
        properties += set
        dead[key] = properties
    }

    // MARK: Search and groups

    func query(collectionID: Int64, predicate: IndexPredicate, limit: Int?) async throws -> [String] {
        let matches = (entries[collectionID] ?? [:]).values
            .filter { Self.evaluate(predicate, entries: $0.card?.indexEntries ?? []) }
            .map(\.info.name).sorted()
        return limit.map { Array(matches.prefix($0)) } ?? matches
    }

    func groupMembers(collectionID: Int64, groupName: String) async throws -> [String] {
        entries[collectionID]?[groupName]?.card?.members ?? []
    }

    func groups(collectionID: Int64, containingUID uid: String) async throws -> [String] {
        (entries[collectionID] ?? [:]).values.filter { $0.card?.members.contains(uid) ?? false }.map(\.info.name).sorted()
    }

    // MARK: Bulk

    func importCards(collectionID: Int64, cards: [CardImport], batchSize: Int,
                     progress: (@Sendable (Int) -> Void)?) async throws {
        var done = 0
        for card in cards {
            if let existing = try await resourceName(collectionID: collectionID, uid: card.card.uid), existing != card.name {
                try await deleteResource(collectionID: collectionID, name: existing, precondition: .none)
            }
            _ = try await putResource(collectionID: collectionID, name: card.name, data: card.data,
                                      contentType: card.contentType, card: card.card, precondition: .none)
            done += 1
            if done % max(batchSize, 1) == 0 { progress?(done) }
        }
        progress?(done)
    }

    func usedBytes(owner: String) async throws -> Int64 {
        collections.values.filter { $0.owner == owner }
            .reduce(0) { total, info in total + Int64((entries[info.id] ?? [:]).values.reduce(0) { $0 + $1.info.size }) }
    }

    func statistics() async throws -> StoreStatistics {
        let books = collections.values.filter { $0.kind == .addressBook }
        return StoreStatistics(users: passwords.count, addressBooks: books.count,
                               cards: books.reduce(0) { $0 + (entries[$1.id]?.count ?? 0) })
    }

    // MARK: Accounts, shares, app passwords, history
    // The protocol tests here cover one owner per book; sharing is tested through real
    // HTTP on SQLite (RoloServerTests). These answer as a server where nothing is shared.

    func account(name: String) async throws -> UserAccount? {
        passwords[name] == nil ? nil
            : UserAccount(name: name, displayName: profiles[name]?.displayName, email: profiles[name]?.email,
                          appPasswordsOnly: false, admin: false, homeSeq: 0)
    }
    /// Display name and e-mail only (what principal searches read).
    func updateAccount(name: String, _ update: UserAccountUpdate) async throws {
        guard passwords[name] != nil else { throw StoreError.noSuchUser }
        var profile = profiles[name] ?? (nil, nil)
        if let displayName = update.displayName { profile.displayName = displayName }
        if let email = update.email { profile.email = email }
        profiles[name] = profile
    }
    func searchAccounts(matching text: String, limit: Int) async throws -> [UserAccount] {
        var found: [UserAccount] = []
        for name in passwords.keys.sorted() {
            guard let account = try await account(name: name) else { continue }
            let fields = [account.name, account.displayName ?? "", account.email ?? ""]
            if fields.contains(where: { $0.lowercased().contains(text.lowercased()) }) { found.append(account) }
        }
        return Array(found.prefix(limit))
    }
    func shareBook(owner: String, book: String, with sharee: String, access: ShareAccess, accepted: Bool) async throws -> Share {
        throw StoreError.invalid("not in memory")
    }
    func acceptShare(sharee: String, owner: String, book: String) async throws -> Share { throw StoreError.notFound }
    func removeShare(owner: String, book: String, sharee: String) async throws { throw StoreError.notFound }
    func renameMount(sharee: String, name: String, displayName: String?) async throws { throw StoreError.notFound }
    func shares(of user: String) async throws -> [Share] { [] }
    func shares(bookID: Int64) async throws -> [Share] { [] }
    func mount(sharee: String, name: String) async throws -> CollectionInfo? { nil }
    func mounts(sharee: String) async throws -> [CollectionInfo] { [] }
    func createAppPassword(user: String, name: String, readOnly: Bool, books: [String]?) async throws -> NewAppPassword {
        throw StoreError.invalid("not in memory")
    }
    func appPasswords(user: String) async throws -> [AppPassword] { [] }
    func revokeAppPassword(user: String, name: String) async throws { throw StoreError.notFound }
    nonisolated func checkAppPassword(user: String, secret: String) throws -> AppPasswordCheck? { nil }
    func recordAccess(_ tallies: [AccessTally], uses: [CredentialUse]) async throws {}
    func accessHistory(user: String, since date: Date) async throws -> [AccessRecord] { [] }
    func pruneAccessHistory(now: Date, retention: AccessRetention) async throws {}
    func attributedChanges(collectionID: Int64, limit: Int) async throws -> [AttributedChange] { [] }

    // Push: a topic per book, nothing registered (the DAV push tests run on SQLite).
    nonisolated let bookChanges = BookChangeFeed()
    nonisolated var clock: StoreClock { .system }
    func pushTopic(collectionID: Int64) async throws -> String { "topic-\(collectionID)" }
    func pushKey(creatingWith make: @Sendable () -> Data) async throws -> Data { make() }
    func rotatePushKey(to key: Data) async throws {}
    func registerPush(_ request: PushRegistrationRequest, limit: Int) async throws -> PushRegistration {
        throw StoreError.invalid("push is not kept in memory")
    }
    func deletePushRegistration(id: String, user: String) async throws -> Bool { false }
    func pushRegistrations(collectionID: Int64) async throws -> [PushRegistration] { [] }
    func pushRegistrations(user: String) async throws -> [PushRegistration] { [] }
    func recordPushOutcome(id: String, _ outcome: PushOutcome) async throws {}
    func prunePushRegistrations() async throws -> Int { 0 }

    // The web UI's lists, trash and sessions: not used by the DAV engine (they run on SQLite).
    func cardListings(collectionID: Int64, filter: ListingFilter, search: [String], from position: ListingPosition,
                      limit: Int) async throws -> ListingPage { ListingPage(rows: [], previous: nil, next: nil) }
    func cardListings(collectionID: Int64, names: [String]) async throws -> [CardListing] { [] }
    func cardCount(collectionID: Int64, filter: ListingFilter, search: [String], cap: Int) async throws -> Int { 0 }
    func backfillCardListings(_ listing: @Sendable (Data) -> CardListingFields?) async throws -> Int { 0 }
    func duplicateCandidates(collectionID: Int64, limit: Int) async throws -> [[String]] { [] }
    func categories(collectionID: Int64, limit: Int) async throws -> [String] { [] }
    func applyCardBatch(collectionID: Int64, writes: [CardBatchWrite]) async throws -> CardBatchResult {
        throw StoreError.invalid("batches are not kept in memory")
    }
    func trash(collectionID: Int64, limit: Int) async throws -> [TrashedCard] { [] }
    func trashedCard(id: Int64) async throws -> (card: TrashedCard, data: Data, contentType: String)? { nil }
    func trash(batch: String) async throws -> [TrashedCard] { [] }
    func purgeTrash(olderThan date: Date) async throws -> Int { 0 }
    func createWebSession(tokenHash: String, user: String, csrfToken: String) async throws {}
    func webSession(tokenHash: String) async throws -> WebSession? { nil }
    func touchWebSession(tokenHash: String) async throws {}
    func deleteWebSession(tokenHash: String) async throws {}
    func deleteWebSessions(user: String) async throws {}
    func pruneWebSessions(idleSince: Date, createdBefore: Date) async throws -> Int { 0 }

    func eraseAll() async throws {
        passwords = [:]; profiles = [:]; collections = [:]; entries = [:]; changeLog = [:]; oldestValidSeq = [:]; dead = [:]
        nextID = 1
        heldLocks = [:]
        loginFailures = [:]
    }

    // MARK: Helpers

    private static func holds(_ precondition: WritePrecondition, etag: String?) -> Bool {
        switch precondition {
        case .none: true
        case .ifMatchAny: etag != nil
        case .ifMatch(let tags): etag.map(tags.contains) ?? false
        case .ifNoneMatchAny: etag == nil
        case .ifNoneMatch(let tags): etag.map { !tags.contains($0) } ?? true
        }
    }

    private static func etag(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "\"\(String(hash, radix: 16))-\(data.count)\""
    }

    private static func evaluate(_ predicate: IndexPredicate, entries: [IndexEntry]) -> Bool {
        switch predicate {
        case .all(let parts): return parts.allSatisfy { evaluate($0, entries: entries) }
        case .any(let parts): return parts.contains { evaluate($0, entries: entries) }
        case .defined(let property): return entries.contains { $0.property == property.uppercased() }
        case .notDefined(let property): return !entries.contains { $0.property == property.uppercased() }
        case .textMatch(let property, let text, let collation, let match, let negate):
            let values = entries.filter { $0.property == property.uppercased() }.map(\.value)
            let fold: (String) -> String = collation == .octet ? { $0 } : { $0.lowercased() }
            let needle = fold(text)
            return values.contains { value in
                let folded = fold(value)
                let hit = switch match {
                case .equals: folded == needle
                case .contains: folded.contains(needle)
                case .startsWith: folded.hasPrefix(needle)
                case .endsWith: folded.hasSuffix(needle)
                }
                return negate ? !hit : hit
            }
        }
    }
}
