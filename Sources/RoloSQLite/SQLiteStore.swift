import CSQLiteConfig
import Foundation
import RoloStore
import GRDB

/// The embedded `RoloStore`: one SQLite file in WAL mode through a GRDB `DatabasePool`, so
/// readers (PROPFIND, GET, REPORT) never wait for a writer and every write is one
/// transaction. Hot paths use cached prepared statements and row cursors. Puts and deletes
/// of single resources share transactions through `GroupCommit` (one fsync for many).
public final class SQLiteStore: RoloStore, InlineResourceReads, Sendable {
    let pool: DatabasePool
    /// Read-only connections for single-row lookups on the calling thread (see `RowReaders`).
    let rowReaders: RowReaders
    /// Batches `putResource` and `deleteResource` into shared transactions.
    let groupCommit: GroupCommit
    /// Holds the newest read mark between writes (`ReadAnchor`).
    let readAnchor: ReadAnchor
    /// The writer's WAL hook's state, held for as long as the writer connection may call it.
    let writerCommits: WriterCommits
    /// Index entries written since the last merge (`SQLiteStore+PendingIndex.swift`).
    let pendingIndex: PendingIndexCount
    /// Whether a substring query of a book uses the trigram index (`SubstringIndexChoice`).
    let substringIndex: SubstringIndexChoice
    /// bcrypt work factor for new password hashes (10 in production, 4 in tests).
    let bcryptCost: UInt8
    /// Time stamped on everything written; `.fixed` for deterministic test servers.
    public let clock: StoreClock
    /// The key of app-password hashes (`SQLiteStore+AppPasswords.swift`); replaced when
    /// `rolo migrate` restores another store's (`finishRestore`).
    let pepperValue: LockedValue<Data>
    var pepper: Data { pepperValue.value }
    /// Committed changes of books, for push (published after each commit).
    public let bookChanges = BookChangeFeed()
    /// How many WebDAV locks the file holds (`SQLiteStore+Coordination.swift`).
    let lockRows = LockRowHint()
    /// Folder removed on `close()` for stores made by `temporary()`.
    private let temporaryFolder: URL?

    /// Opens (or creates) the database at `path`, creating parent folders and running
    /// migrations. A new file is created 0600 in folders 0700 (`PrivateFiles`); a file that
    /// cannot be opened or written throws `DatabaseFileError`, which says why in words.
    public convenience init(path: String, bcryptCost: UInt8 = 10, clock: StoreClock = .system,
                            tuning: Tuning = .default) throws {
        try self.init(path: path, bcryptCost: bcryptCost, clock: clock, tuning: tuning, temporaryFolder: nil)
    }

    /// SQLite's process-wide settings, applied once, before this process's first
    /// connection: memory statistics off, then the VFS that writes a commit's WAL frames in
    /// one call (both `CSQLiteConfig`). Had another part of the process opened a connection
    /// first, SQLite keeps its default memory statistics.
    static let processSettings: Int32 = {
        let statistics = rolo_sqlite_disable_memory_statistics()
        _ = rolo_sqlite_register_wal_combining_vfs()
        return statistics
    }()

    private init(path: String, bcryptCost: UInt8, clock: StoreClock, tuning: Tuning, temporaryFolder: URL?) throws {
        _ = Self.processSettings
        do {
            try PrivateFiles.createFile(path)
        } catch let error as FileCreationError {
            throw DatabaseFileError(path: path, problem: error.description)
        }
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(10)
        configuration.maximumReaderCount = max(tuning.maximumReaders, 1)
        configuration.prepareDatabase { db in
            if !db.configuration.readonly {
                // GroupCommit runs each write in a savepoint, whose journal (the pages'
                // contents before it) SQLite spills to a temporary file past 64 KiB: one
                // extra write per touched page. In memory it lasts until the savepoint ends.
                try db.execute(sql: "PRAGMA temp_store = MEMORY")
            }
            try tuning.apply(to: db)
        }
        let pool = try Self.describingFileErrors(path) { try DatabasePool(path: path, configuration: configuration) }
        self.pool = pool
        // Durable against power loss, not only against a crashed process: every COMMIT
        // waits for the disk. Set here, not in prepareDatabase: turning WAL on, GRDB sets
        // the writer to NORMAL after prepareDatabase ran (commits then reach the disk only
        // at checkpoints).
        try Self.describingFileErrors(path) {
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        }
        substringIndex = SubstringIndexChoice(minimumBookCards: max(tuning.substringIndexMinimumCards, 0))
        let pendingIndex = PendingIndexCount()
        self.pendingIndex = pendingIndex
        let readAnchor = try ReadAnchor(path: path)
        self.readAnchor = readAnchor
        let writerCommits = try pool.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 1000
            let commits = WriterCommits(anchor: readAnchor, checkpointPages: Int32(clamping: pages))
            commits.install(on: db.sqliteConnection!)
            return commits
        }
        self.writerCommits = writerCommits
        groupCommit = GroupCommit(pool: pool, limits: GroupCommit.Limits(maximumWrites: max(tuning.maximumWritesPerCommit, 1)),
                                  upkeep: Self.pendingIndexUpkeep(pendingIndex, mergeAt: max(tuning.pendingIndexEntries, 1)),
                                  readAnchor: readAnchor)
        self.bcryptCost = bcryptCost
        self.clock = clock
        self.temporaryFolder = temporaryFolder
        try Self.describingFileErrors(path) { try Self.migrator.migrate(pool) }
        pepperValue = LockedValue(try Self.loadPepper(pool))
        // Entries a stopped server left pending (or trigram rows stale): merged now, not after the next burst.
        try pool.writeWithoutTransaction { db in
            if try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM card_index_pending) OR EXISTS (SELECT 1 FROM card_trigram_stale)
                """) == true {
                try Self.mergePendingIndex(db)
            }
        }
        // A thread blocks in a lookup only for the read itself. The threads that run them are
        // the event loops and the listings' read-ahead (`PrefetchingPages`): as many
        // connections as the pool has readers stay open; more open when needed.
        rowReaders = RowReaders(path: path, setupSQL: tuning.pragmas(readonly: true),
                                maximumIdle: max(1, tuning.maximumReaders))
        readAnchor.holdNewest()
    }

    /// A store on a fresh file in a temporary folder, removed by `close()`: for tests and
    /// ephemeral servers (a WAL pool needs a real file, not `:memory:`).
    public static func temporary(bcryptCost: UInt8 = 4, clock: StoreClock = .system,
                                 tuning: Tuning = .default) throws -> SQLiteStore {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("rolo-\(UUID().uuidString)", isDirectory: true)
        return try SQLiteStore(path: folder.appendingPathComponent("rolo.sqlite").path,
                               bcryptCost: bcryptCost, clock: clock, tuning: tuning, temporaryFolder: folder)
    }

    /// The database file.
    public var path: String { pool.path }

    /// Closes every connection; a temporary store also deletes its files. First the
    /// write-ahead log is copied into the database and truncated (`PRAGMA
    /// wal_checkpoint(TRUNCATE)`), once the read connections that could hold it back are
    /// closed: a stopped server leaves all its data in the one file, which a copy or backup
    /// of that file alone then holds whole, and the next start replays no log.
    public func close() throws {
        readAnchor.close()
        rowReaders.close()
        // A failed checkpoint (a read still open somewhere) leaves the log for the next
        // start to replay: the store closes all the same. It waits briefly, not the busy
        // timeout: a TRUNCATE checkpoint holds the file's write lock while it waits for other
        // processes' readers, and a process that reads and then writes (a `rolo` command
        // next to this one) waited for it in turn, both for 10 s, and then failed.
        try? pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA busy_timeout = 200")
            _ = try db.checkpoint(.truncate)
        }
        try pool.close()
        if let temporaryFolder {
            try? FileManager.default.removeItem(at: temporaryFolder)
        } else {
            Self.removeLogIfLastOut(path)
        }
    }

    /// Leaves the database one file when no other process has it open. GRDB closes the pool's
    /// writer before its readers (groue/GRDB.swift#739), and a read-only connection closing
    /// last cannot delete the write-ahead log, so every close left an empty `-wal` and a
    /// `-shm` beside the file, and a `rolo backup` from PostgreSQL, which renames its finished
    /// copy, left them under the copy's `.partial` name. One read-write connection opened and
    /// closed after the pool lets SQLite do what it does for the last connection out:
    /// checkpoint, then delete both, but only if no other connection, in any process, has the
    /// file open (it takes the file's exclusive lock to know). A failure leaves them as before.
    private static func removeLogIfLastOut(_ path: String) {
        // Never creates a file that is gone (opening creates a missing one).
        guard FileManager.default.fileExists(atPath: path), let last = try? DatabaseQueue(path: path) else { return }
        _ = try? last.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
        try? last.close()
    }

    /// Copies the live database to `path` with SQLite's online backup API: a consistent
    /// snapshot, taken while readers and writers keep working. The copy is created 0600.
    public func backup(to path: String) throws {
        do {
            try PrivateFiles.createFile(path)
        } catch let error as FileCreationError {
            throw DatabaseFileError(path: path, problem: error.description)
        }
        try Self.describingFileErrors(path) {
            let destination = try DatabaseQueue(path: path)
            try pool.backup(to: destination)
            try destination.close()
        }
    }

    /// Copies the write-ahead log into the database file and truncates it (after a big
    /// import, before measuring or copying the file).
    public func checkpoint() async throws {
        try await pool.writeWithoutTransaction { [readAnchor] db in try Self.truncatingCheckpoint(db, anchor: readAnchor) }
    }

    /// The checkpoint's body, on the writer: a TRUNCATE checkpoint waits for every reader,
    /// so the store's own anchor lets go for it.
    static func truncatingCheckpoint(_ db: Database, anchor: ReadAnchor) throws {
        anchor.release()
        defer { anchor.holdNewest() }
        _ = try db.checkpoint(.truncate)
    }

    /// Runs a lookup of a row on the calling thread, blocking it for the microseconds the
    /// read takes. GRDB's async `read` hops to a reader's dispatch queue and back, which costs
    /// more than such a read. These lookups never use the pool's readers: a thread blocked
    /// waiting for one may be the very thread (an event loop, or one of the few
    /// cooperative-pool threads) that the async reads holding them need in order to resume
    /// and give them back; seen as a server that stopped answering even `/health`.
    /// `RowReaders` never makes a lookup wait. Row lookups, and reads whose size the caller
    /// bounds (a page of a listing, a page of named cards, a resource's dead properties,
    /// a book's count up to a cap) read this way; reads that nothing bounds (a change log,
    /// an index scan, a whole book) keep the async `read`, so that an event loop never
    /// stops for them.
    func readOnCallingThread<T>(_ query: RowReader.Query, bind: (inout DirectBindings) -> Void,
                                row: (ColumnReader) -> T) throws -> T? {
        try rowReaders.read { reader in try reader.fetchOne(query, bind: bind, row: row) }
    }

    /// Seconds since 1970 by the store's clock, as the tables keep them.
    var now: Double { clock.now.timeIntervalSince1970 }
}
