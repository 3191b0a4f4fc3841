import RoloStore
import GRDB

extension SQLiteStore {
    /// How much memory the store may hold, traded against speed. SQLite's page caches and a
    /// memory-mapped file are what made a server's resident set grow with its books (every
    /// mapped page read counts as resident: 64 MiB caches and a 256 MiB map gave 300 MiB
    /// after serving a 100 000-card book), so they are bounded here. The defaults cap
    /// SQLite's caches at 48 MiB (the writer's 16, and 4 for each of the pool's 4 readers and
    /// of the 4 row readers kept open, which only fill as far as reads use them) with the
    /// import, query and sync aims still met; figures in Docs/performance.md.
    public struct Tuning: Sendable, Hashable {
        /// Page cache of the one writer connection, KiB; default 16 MiB. An import
        /// transaction bigger than this spills pages to the WAL before commit, which measured
        /// no slower than a 128 MiB cache.
        public var writerCacheKiB: Int
        /// Page cache of each reader connection, KiB; default 4 MiB. Reads that miss it come
        /// from the operating system's file cache, which no process is charged for.
        public var readerCacheKiB: Int
        /// Bytes of the file read through a memory map; default 0 (plain reads). A map saves
        /// a copy per page, but every mapped page read stays in the resident set.
        public var mmapBytes: Int
        /// Reader connections at most (concurrent reads, each with its cache); default 4. As
        /// many row readers (`RowReaders`, for lookups and pages) stay open between reads.
        public var maximumReaders: Int
        /// Puts and deletes that one commit takes at most (`GroupCommit`); default 64.
        /// 1 gives every write its own transaction and fsync (for comparisons).
        public var maximumWritesPerCommit: Int
        /// How far the write-ahead log grows before a commit copies it into the database
        /// (SQLite's automatic checkpoint); default 32 MiB, SQLite's own is 1000 pages
        /// (4 MiB). A checkpoint writes every page the log holds to its place in the file
        /// and waits for the disk, on the writer, in the middle of PUTs: the index leaves a
        /// stream of PUTs touches again and again are written once per checkpoint, so
        /// fewer, larger checkpoints write less (Docs/performance.md, "Writes through PUT: round `putfast`").
        public var checkpointBytes: Int
        /// Index entries of PUTs that may wait in `card_index_pending` before the writer
        /// merges them between two batches, even in the middle of a burst; default 131,072
        /// (some 14,000 cards of a few phones and emails each). Queries scan the pending
        /// entries, so this bounds that scan: 89,000 of them made a query 6 ms slower.
        public var pendingIndexEntries: Int
        /// Books with fewer cards than this answer `contains` and `ends-with` by scanning
        /// their own index rows rather than through the database-wide trigram index
        /// (`SubstringIndexChoice`); default 5,000. 0 sends every book to the index.
        public var substringIndexMinimumCards: Int

        public init(writerCacheKiB: Int = 16_384, readerCacheKiB: Int = 4_096, mmapBytes: Int = 0, maximumReaders: Int = 4,
                    maximumWritesPerCommit: Int = 64, checkpointBytes: Int = 32 << 20, pendingIndexEntries: Int = 131_072,
                    substringIndexMinimumCards: Int = SubstringIndexChoice.defaultMinimumBookCards) {
            self.writerCacheKiB = writerCacheKiB
            self.readerCacheKiB = readerCacheKiB
            self.mmapBytes = mmapBytes
            self.maximumReaders = maximumReaders
            self.maximumWritesPerCommit = maximumWritesPerCommit
            self.checkpointBytes = checkpointBytes
            self.pendingIndexEntries = pendingIndexEntries
            self.substringIndexMinimumCards = substringIndexMinimumCards
        }

        /// The defaults documented on each property.
        public static let `default` = Tuning()

        /// Applies the cache and map sizes to a new connection (readers are read-only) and
        /// the checkpoint size to the writer, the connection that commits.
        func apply(to db: Database) throws {
            if !db.configuration.readonly {
                // Counted in pages of this file.
                let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(max(checkpointBytes / max(pageSize, 512), 1))")
            }
            try db.execute(sql: pragmas(readonly: db.configuration.readonly))
        }

        /// The statements that set a new connection's cache and map sizes.
        func pragmas(readonly: Bool) -> String {
            let cacheKiB = readonly ? readerCacheKiB : writerCacheKiB
            // A negative cache_size counts KiB rather than pages.
            return "PRAGMA cache_size = \(-max(cacheKiB, 0)); PRAGMA mmap_size = \(max(mmapBytes, 0))"
        }
    }
}
