import Foundation
import GRDB
import PostgresNIO
import PostgresTestSupport
@testable import RoloPostgres
@testable import RoloSQLite
@testable import RoloStore
import RoloStoreTesting
import Synchronization
import Testing

/// The implementations the semantic suites run against, each test once per backend: the same
/// assertions, so all keep the same semantics. A suite claims the roles it uses: one that
/// calls only `CardStore` (through `StoreFixture.cards`) runs over `cardBackends`, the
/// in-memory double included; one that needs any other role runs over `allCases`.
enum StoreBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    /// `InMemoryCardStore` (RoloStoreTesting), which plays the `CardStore` role only.
    case memory

    /// The back ends of the whole `RoloStore`.
    static let allCases: [StoreBackend] = [.sqlite, .postgres]
    /// Every back end of the `CardStore` role.
    static let cardBackends: [StoreBackend] = allCases + [.memory]

    var testDescription: String { rawValue }
}

/// A store with user "alice" and her address book `default`: SQLite on a real file in a
/// fresh temporary folder, PostgreSQL on a fresh database of the test server
/// (`TestDatabase`), or the in-memory double. Tests call `close()` when done (a `defer`);
/// suites carry the `.closesStores` trait, which waits for a PostgreSQL store's database to
/// be dropped.
struct StoreFixture: Sendable {
    let backend: StoreBackend
    /// The store in its `CardStore` role: what suites over `StoreBackend.cardBackends` call.
    let cards: any CardStore
    let book: CollectionInfo
    private let cleanup: @Sendable () async -> Void

    /// The whole store, for suites over `StoreBackend.allCases`: the in-memory double has
    /// no other role, so asking it of a `.memory` fixture is a mistake in the suite.
    var store: any RoloStore {
        guard let store = cards as? any RoloStore else {
            preconditionFailure("the \(backend) backend plays only the CardStore role: call `cards`")
        }
        return store
    }

    /// The in-memory double, nil on another backend.
    var memory: InMemoryCardStore? { cards as? InMemoryCardStore }

    /// The SQLite store, for tests of SQLite's own machinery.
    var sqlite: SQLiteStore { cards as! SQLiteStore }
    /// The SQLite store, nil on another backend (for SQLite-only checks inside shared tests).
    var sqliteStore: SQLiteStore? { cards as? SQLiteStore }

    /// A fixture on an SQLite store the test opened and closes itself.
    init(sqlite store: SQLiteStore, book: CollectionInfo) {
        self.init(backend: .sqlite, store: store, book: book, cleanup: {})
    }

    /// A fixture over a store a test opened itself (with settings of its own), and what closes it.
    init(backend: StoreBackend, store: any CardStore, book: CollectionInfo, cleanup: @escaping @Sendable () async -> Void) {
        self.backend = backend; self.cards = store; self.book = book; self.cleanup = cleanup
    }

    static func make(_ backend: StoreBackend = .sqlite, tuning: SQLiteStore.Tuning = .default,
                     clock: StoreClock = .system) async throws -> StoreFixture {
        if backend == .memory {
            let store = try InMemoryCardStore(users: ["alice"], clock: clock)
            let book = try await Self.addDefaultBook(owner: "alice", to: store)
            return StoreFixture(backend: backend, store: store, book: book, cleanup: {})
        }
        let (store, cleanup) = try await openStore(backend, tuning: tuning, clock: clock)
        do {
            try await store.createUser(name: "alice", password: "secret")
            let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
            return StoreFixture(backend: backend, store: store, book: book, cleanup: cleanup)
        } catch {
            await cleanup()
            throw error
        }
    }

    /// A PostgreSQL store on a database of its own, with `configure`'s settings, user alice and
    /// her book; the database is dropped when the store is closed (`close()`).
    static func postgres(_ configure: (inout PostgresStore.Configuration) -> Void) async throws -> StoreFixture {
        let database = try await TestDatabase.create()
        var configuration = try database.configuration()
        configure(&configuration)
        let store: PostgresStore
        do { store = try await PostgresStore.open(configuration) } catch {
            await database.drop()
            throw error
        }
        let cleanup: @Sendable () async -> Void = {
            await store.close()
            await database.drop()
        }
        do {
            try await store.createUser(name: "alice", password: "secret")
            let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
            return StoreFixture(backend: .postgres, store: store, book: book, cleanup: cleanup)
        } catch {
            StoreCleanups.schedule(cleanup)
            throw error
        }
    }

    /// The book `AccountStore.createUser` makes with a user, made on the double, which has
    /// no accounts.
    private static func addDefaultBook(owner: String, to store: InMemoryCardStore) async throws -> CollectionInfo {
        try await store.createCollection(owner: owner, path: ["default"], kind: .addressBook, displayName: "Contacts",
                                         description: nil)
    }

    /// Another user with an address book `default`, as `AccountStore.createUser` makes one,
    /// on every backend.
    func addUser(_ name: String) async throws {
        if let memory {
            try await memory.addUser(name)
            _ = try await Self.addDefaultBook(owner: name, to: memory)
        } else {
            try await store.createUser(name: name, password: "secret")
        }
    }

    /// An empty store of `backend` (a whole `RoloStore`: not `.memory`) and what closes it.
    static func openStore(_ backend: StoreBackend, tuning: SQLiteStore.Tuning = .default,
                          clock: StoreClock = .system) async throws -> (any RoloStore, @Sendable () async -> Void) {
        switch backend {
        case .memory:
            preconditionFailure("the in-memory double plays only the CardStore role")
        case .sqlite:
            let store = try SQLiteStore.temporary(bcryptCost: 4, clock: clock, tuning: tuning)
            return (store, { try? store.close() })
        case .postgres:
            let database = try await TestDatabase.create()
            do {
                // The one tuning both back ends share: when a substring search takes the trigram index.
                var configuration = try database.configuration()
                configuration.substringIndexMinimumCards = tuning.substringIndexMinimumCards
                let store = try await PostgresStore.open(configuration, clock: clock)
                return (store, {
                    await store.close()
                    await database.drop()
                })
            } catch {
                await database.drop()
                throw error
            }
        }
    }

    /// Closes the store: at once for SQLite; for PostgreSQL when the test ends (the
    /// `.closesStores` trait waits for it), or in the background without the trait.
    func close() {
        if let sqlite = sqliteStore {
            try? sqlite.close()
            return
        }
        StoreCleanups.schedule(cleanup)
    }

    @discardableResult
    func put(_ name: String, uid: String? = nil, fn: String = "Someone", extra: [IndexEntry] = [],
             members: [String] = [], kind: String = "individual",
             precondition: WritePrecondition = .none) async throws -> PutResult {
        let uid = uid ?? name
        let data = Data(vcard(uid: uid, fn: fn).utf8)
        return try await cards.putResource(
            collectionID: book.id, name: name, data: data, contentType: "text/vcard; charset=utf-8",
            card: CardMetadata(uid: uid, kind: kind,
                               indexEntries: [IndexEntry(property: "UID", value: uid), IndexEntry(property: "FN", value: fn)] + extra,
                               members: members),
            precondition: precondition)
    }

    /// Each backend's own check of its invariants.
    func integrityCheck() async throws -> [String] {
        switch cards {
        case let store as SQLiteStore: try await store.integrityCheck()
        case let store as PostgresStore: try await store.integrityCheck()
        case let store as InMemoryCardStore: await store.integrityCheck()
        default: []
        }
    }

    /// An integer the SQL (the same on both backends) computes.
    func integer(_ sql: String) async throws -> Int64? {
        if let sqlite = sqliteStore { return try await sqlite.pool.read { db in try Int64.fetchOne(db, sql: sql) } }
        return try await (store as! PostgresStore).autocommit { try await $0.first(PostgresQuery(unsafeSQL: sql))?.decode(Int64?.self) }
    }

    /// The text values of the SQL's first column.
    func texts(_ sql: String) async throws -> [String] {
        if let sqlite = sqliteStore { return try await sqlite.pool.read { db in try String.fetchAll(db, sql: sql) } }
        return try await (store as! PostgresStore).autocommit { try await $0.rows(PostgresQuery(unsafeSQL: sql)).map { try $0.decode(String.self) } }
    }

    /// The bytes of the SQL's first column.
    func blobs(_ sql: String) async throws -> [Data] {
        if let sqlite = sqliteStore { return try await sqlite.pool.read { db in try Data.fetchAll(db, sql: sql) } }
        return try await (store as! PostgresStore).autocommit { try await $0.rows(PostgresQuery(unsafeSQL: sql)).map { try $0.decode(Data.self) } }
    }

    /// Moves SQLite's pending index entries into the value indexes now; PostgreSQL writes
    /// its index with each card, so there is nothing to do.
    func mergePendingIndex() async throws {
        try await sqliteStore?.mergePendingIndex()
    }
}

func vcard(uid: String, fn: String) -> String {
    "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(uid)\r\nFN:\(fn)\r\nEND:VCARD\r\n"
}

/// The cleanups of the stores a test opened, run when it ends (`.closesStores`).
final class StoreCleanups: Sendable {
    private let pending = Mutex<[@Sendable () async -> Void]>([])

    @TaskLocal static var current: StoreCleanups?

    /// Runs `cleanup` when the current test ends, or in the background outside one.
    static func schedule(_ cleanup: @escaping @Sendable () async -> Void) {
        if let current {
            current.pending.withLock { $0.append(cleanup) }
        } else {
            Task { await cleanup() }
        }
    }

    func runAll() async {
        for cleanup in pending.withLock({ pending in defer { pending = [] }; return pending }) { await cleanup() }
    }
}

extension PausableProxy {
    /// A proxy for this test's stores to connect through (`route`), stopped when the test
    /// ends: its held-up connections then go on, so that the stores close as usual.
    static func forThisTest() throws -> PausableProxy {
        let proxy = try PausableProxy()
        StoreCleanups.schedule { proxy.stop() }
        return proxy
    }
}

/// Closes the PostgreSQL stores of each test case when it ends, so that its database is
/// dropped (and its slot on the test server freed) before the next tests take their turn.
struct ClosesStoresTrait: TestTrait, SuiteTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        let cleanups = StoreCleanups()
        do {
            try await StoreCleanups.$current.withValue(cleanups) { try await function() }
        } catch {
            await cleanups.runAll()
            throw error
        }
        await cleanups.runAll()
    }
}

extension Trait where Self == ClosesStoresTrait {
    static var closesStores: Self { ClosesStoresTrait() }
}
