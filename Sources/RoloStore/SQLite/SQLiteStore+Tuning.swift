import GRDB

extension SQLiteStore {
    /// How much memory the store may hold, traded against speed. SQLite's page caches and a
    /// memory-mapped file are what make a server's resident set grow with its books (mapped
    /// pages it reads count as resident), so they are bounded here. The defaults keep a
    /// server holding 100 000 cards well under 100 MiB while imports, listings and queries
    /// stay within their aims (Docs/performance.md).
    public struct Tuning: Sendable, Hashable {
        /// Page cache of the one writer connection, KiB. An import transaction bigger than
        /// this spills pages to the WAL before commit and reads them back when touched again.
        public var writerCacheKiB: Int
        /// Page cache of each reader connection, KiB. Reads miss into the operating system's
        /// file cache, which no process is charged for.
        public var readerCacheKiB: Int
        /// Bytes of the file read through a memory map (0: plain reads). Saves a copy per
        /// page, but every mapped page read stays in the resident set.
        public var mmapBytes: Int
        /// Reader connections at most, so concurrent reads (each with its cache) are bounded.
        public var maximumReaders: Int

        public init(writerCacheKiB: Int = 32_768, readerCacheKiB: Int = 4_096, mmapBytes: Int = 0, maximumReaders: Int = 4) {
            self.writerCacheKiB = writerCacheKiB
            self.readerCacheKiB = readerCacheKiB
            self.mmapBytes = mmapBytes
            self.maximumReaders = maximumReaders
        }

        /// The defaults documented on each property.
        public static let `default` = Tuning()

        /// Applies the cache and map sizes to a new connection (readers are read-only).
        func apply(to db: Database) throws {
            let cacheKiB = db.configuration.readonly ? readerCacheKiB : writerCacheKiB
            // A negative cache_size counts KiB rather than pages.
            try db.execute(sql: "PRAGMA cache_size = \(-max(cacheKiB, 0))")
            try db.execute(sql: "PRAGMA mmap_size = \(max(mmapBytes, 0))")
        }
    }
}
