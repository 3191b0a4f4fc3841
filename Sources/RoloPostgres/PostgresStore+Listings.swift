import Foundation
import PostgresNIO
import RoloStore

/// Listings a page at a time (keyset pagination on the unique `(collection_id, name)` index,
/// whose "C" collation is byte order): each page is one short statement, and nothing is held
/// open between pages. Named lookups take the names as one array parameter.
extension PostgresStore {
    public func resources(collectionID: Int64, names: [String]) async throws -> [StoredResource] {
        try await named(names, in: collectionID, columns: "\(Self.infoColumns), r.data") { try Self.storedResource(&$0) }
    }

    public func resources(collectionID: Int64, names: [String], bodyLimit: Int) async throws -> [StoredResource] {
        try await cards(collectionID: collectionID, names: names, bodyLimit: bodyLimit, countingBookUpTo: 0).cards
    }

    public func resources(collectionID: Int64, names: [String], bodyLimit: Int, countingBookUpTo cap: Int) async throws
        -> (cards: [StoredResource], bookCards: Int) {
        let (cards, counted) = try await cards(collectionID: collectionID, names: names, bodyLimit: bodyLimit, countingBookUpTo: cap)
        if let counted { return (cards, counted) }
        return (cards, try await resourceCount(collectionID: collectionID, cap: cap))
    }

    /// The named cards, with the book's count up to `cap` read in the same statement (nil when
    /// the cards were read otherwise: none asked for, or too many bytes for one row). From
    /// the card cache when it holds them all, and kept there when read.
    private func cards(collectionID: Int64, names: [String], bodyLimit: Int, countingBookUpTo cap: Int) async throws
        -> (cards: [StoredResource], bookCards: Int?) {
        guard !names.isEmpty else { return ([], nil) }
        let names = Self.distinct(names)
        if let cached = cardCache.cards(in: collectionID, named: names, bodyLimit: bodyLimit, countingUpTo: cap,
                                        server: primary.currentIndex) {
            return (cached.cards, cached.count)
        }
        let ticket = cardCache.bookTicket()
        let read = try await databaseCards(collectionID: collectionID, names: names, bodyLimit: bodyLimit, countingBookUpTo: cap)
        if let ticket, let bookSeq = read.bookSeq {
            cardCache.keep(read.cards, asked: names, count: read.bookCards, cap: cap, in: collectionID, seq: bookSeq, ticket: ticket)
        }
        return (read.cards, read.bookCards)
    }

    /// The named cards, the book's count up to `cap` (nil when not read), and the book's seq
    /// they were read at (nil when read a row a card, each row in a snapshot of its own).
    private func databaseCards(collectionID: Int64, names: [String], bodyLimit: Int, countingBookUpTo cap: Int) async throws
        -> (cards: [StoredResource], bookCards: Int?, bookSeq: Int64?) {
        let limit = Int64(max(bodyLimit, 0))
        let (bytes, overflow) = Int64(names.count).multipliedReportingOverflow(by: limit)
        guard !overflow, bytes <= Self.arrayBodyBytes else {
            return (try await named(names, in: collectionID, columns: Self.bodyColumns(upTo: bodyLimit)) { try Self.storedResource(&$0) },
                    nil, nil)
        }
        let cap = Int64(max(cap, 0))
        let probed = names.count <= Self.probedNames
        let row = try await arraysRow(onLoop: probed ? CardsByNameSQL.self : nil,
                                      [PostgresData(int64: collectionID), Self.textArray(names), PostgresData(int64: limit),
                                       PostgresData(int64: cap)]) { connection in
            probed ? try await connection.first(CardsByNameSQL.self, collectionID, names, limit, cap)
                   : try await connection.first(CardsByNamesScanSQL.self, collectionID, names, limit, cap)
        }
        return (try Self.storedResources(arrays: row, bodyLimit: limit), try row.int64(Self.cardArraysCountColumn).map { Int($0) },
                try row.int64(Self.cardArraysCountColumn + 1))
    }

    public func resourceInfos(collectionID: Int64, names: [String]) async throws -> [ResourceInfo] {
        guard !names.isEmpty else { return [] }
        let names = Self.distinct(names)
        let row = try await arraysRow(onLoop: names.count <= Self.probedNames ? InfosByNameSQL.self : nil,
                                      [PostgresData(int64: collectionID), Self.textArray(names)]) { connection in
            names.count <= Self.probedNames ? try await connection.first(InfosByNameSQL.self, collectionID, names)
                                            : try await connection.first(InfosByNamesScanSQL.self, collectionID, names)
        }
        return try Self.resourceInfos(arrays: row)
    }

    public func listResources(collectionID: Int64) async throws -> [ResourceInfo] {
        try await page(of: collectionID, after: nil, limit: nil, columns: Self.infoColumns) { try Self.resourceInfo(&$0) }
    }

    public func allResources(collectionID: Int64) async throws -> [StoredResource] {
        try await page(of: collectionID, after: nil, limit: nil, columns: "\(Self.infoColumns), r.data") { try Self.storedResource(&$0) }
    }

    public func resourceCount(collectionID: Int64, cap: Int) async throws -> Int {
        // A multiget's or a query's look at the book's size, at most `cap` rows of an index:
        // short, so on the request's event loop's own connection when there is one.
        let cap = Int64(max(cap, 0))
        if let rows = await rowsOnLoop(ResourceCountSQL.self, [PostgresData(int64: collectionID), PostgresData(int64: cap)]) {
            guard let row = rows.first else { throw StoreError.unavailable("no row for a count") }
            var columns = Columns(legacyPrepared: row)
            return Int(try columns.next(Int64.self))
        }
        let row = try await autocommit { connection in
            try await connection.first(ResourceCountSQL.self, collectionID, cap)
        }
        return Int(try row?.decode(Int64.self) ?? 0)
    }

    enum ResourceCountSQL: PreparedSQL {
        static let sql = "SELECT \(bookCount(collection: "$1", cap: "$2"))"
    }

    /// The cards of book `collection` counted up to `cap` (both SQL expressions), for this
    /// count and the ones multigets and queries read with their rows. In name order, which is
    /// the `(collection_id, name)` index's, so the count reads that index alone. Without it, on
    /// a database where one book holds most cards (one user's server), the planner read the
    /// table instead, photos' pages and all: 0.86 against 0.41 ms for 1,001 of 10,000 cards.
    static func bookCount(collection: String, cap: String) -> String {
        "(SELECT count(*) FROM (SELECT 1 FROM resources WHERE collection_id = \(collection) ORDER BY name LIMIT \(cap)) AS counted)"
    }

    /// Book `collection`'s seq (an SQL expression), read in the statement's own snapshot
    /// beside the rows it reads: the card cache keeps those rows at that seq.
    static func bookSeq(collection: String) -> String {
        "(SELECT sync_seq FROM collections WHERE id = \(collection))"
    }

    /// A page of the book's listing: from the card cache when it holds it, and kept there
    /// when read (PROPFIND and the initial sync page through it).
    public func listResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [ResourceInfo] {
        if let cached = cardCache.page(in: collectionID, after: name ?? "", limit: limit, server: primary.currentIndex) {
            return cached
        }
        let ticket = cardCache.bookTicket()
        let (infos, bookSeq) = try await databasePage(collectionID: collectionID, after: name, limit: limit)
        if let ticket, let bookSeq {
            cardCache.keep(page: infos, in: collectionID, seq: bookSeq, after: name ?? "", limit: limit, ticket: ticket)
        }
        return infos
    }

    /// The page, and the book's seq it was read at.
    private func databasePage(collectionID: Int64, after name: String?, limit: Int) async throws -> ([ResourceInfo], Int64?) {
        let row = try await arraysRow(onLoop: InfoPageSQL.self, [PostgresData(int64: collectionID), PostgresData(string: name ?? ""),
                                                                 PostgresData(int64: Int64(max(limit, 0)))]) { connection in
            try await connection.first(InfoPageSQL.self, collectionID, name ?? "", Int64(max(limit, 0)))
        }
        return (try Self.resourceInfos(arrays: row), try row.int64(Self.infoPageSeqColumn))
    }

    public func allResources(collectionID: Int64, after name: String?, limit: Int) async throws -> [StoredResource] {
        try await page(of: collectionID, after: name, limit: limit, columns: "\(Self.infoColumns), r.data") {
            try Self.storedResource(&$0)
        }
    }

    public func allResources(collectionID: Int64, after name: String?, limit: Int, bodyLimit: Int) async throws -> [StoredResource] {
        try await page(of: collectionID, after: name, limit: limit, columns: Self.bodyColumns(upTo: bodyLimit)) {
            try Self.storedResource(&$0)
        }
    }

    /// The info columns, then the body when it is at most `limit` bytes, else NULL (a body
    /// the server then never reads from its TOAST table).
    static func bodyColumns(upTo limit: Int) -> String {
        "\(infoColumns), CASE WHEN r.size <= \(max(limit, 0)) THEN r.data END"
    }

    /// The one row of arrays a listing's page or a named read answers (`infoArrays`,
    /// `cardArrays`): on the request's event loop's own connection when `statement` is given
    /// and the loop has one (`rowsOnLoop`: no hop through the pool's threads, nor the pool's
    /// idle timer armed at every return, which cost a multiget of one card on PostgreSQL more
    /// than its statement), else from `pool`. Pages and probed names only: their answer is
    /// bounded (a page of names and sizes, or at most `probedNames` bodies up to the body
    /// limit), so the GETs queued behind it on that connection wait no longer than for a
    /// statement of their own. The arrays are read from the cells' bytes, which come binary
    /// both ways (`BinaryArray`).
    private func arraysRow(onLoop statement: (any PreparedSQL.Type)?, _ binds: [PostgresData],
                           pool: @escaping @Sendable (Connection) async throws -> PostgresRow?) async throws -> ArraysRow {
        if let statement, let rows = await rowsOnLoop(statement, binds) { return ArraysRow(row: rows.first, legacyPrepared: true) }
        return ArraysRow(row: try await autocommit(pool), legacyPrepared: false)
    }

    /// A row of arrays, read column by column (`BinaryArray`); nil arrays when no row came.
    struct ArraysRow {
        private let cells: PostgresRandomAccessRow?
        /// A row of postgres-nio's `PreparedQuery` (a loop's connection, `ShapedStatements`):
        /// the cells are binary though the row's description says text (`Columns.init(legacyPrepared:)`).
        private let legacyPrepared: Bool

        /// The row's column that is column 0 here (arrays after other columns).
        private let firstColumn: Int

        init(row: PostgresRow?, legacyPrepared: Bool, firstColumn: Int = 0) {
            cells = row?.makeRandomAccess()
            self.legacyPrepared = legacyPrepared
            self.firstColumn = firstColumn
        }

        func strings(_ column: Int) throws -> [String]? {
            try cells.flatMap { try BinaryArray.strings($0, firstColumn + column, binary: legacyPrepared) }
        }
        func int64s(_ column: Int) throws -> [Int64]? {
            try cells.flatMap { try BinaryArray.int64s($0, firstColumn + column, binary: legacyPrepared) }
        }
        func doubles(_ column: Int) throws -> [Double]? {
            try cells.flatMap { try BinaryArray.doubles($0, firstColumn + column, binary: legacyPrepared) }
        }
        func buffers(_ column: Int) throws -> [ByteBuffer]? {
            try cells.flatMap { try BinaryArray.buffers($0, firstColumn + column, binary: legacyPrepared) }
        }
        /// A `bigint` cell beside the arrays; nil when no row came or the cell is NULL.
        func int64(_ column: Int) throws -> Int64? {
            let column = firstColumn + column
            guard let cell = cells?[column], var bytes = cell.bytes else { return nil }
            guard legacyPrepared || cell.format == .binary else { return try cell.decode(Int64.self) }
            guard bytes.readableBytes == 8, let value = bytes.readInteger(as: Int64.self) else {
                throw BinaryArray.Malformed(column: column)
            }
            return value
        }
    }

    static func textArray(_ values: [String]) -> PostgresData {
        PostgresData(array: values.map { PostgresData(string: $0) }, elementType: .text)
    }

    /// The rows of these names in name order, absent names skipped.
    private func named<Value: Sendable>(_ names: [String], in collectionID: Int64, columns: String,
                                        row makeValue: @escaping @Sendable (inout Columns) throws -> Value) async throws -> [Value] {
        guard !names.isEmpty else { return [] }
        let names = Self.distinct(names)
        let query: PostgresQuery = names.count <= Self.probedNames ? """
            SELECT r.* FROM unnest(\(names)::TEXT[]) AS asked(name) CROSS JOIN LATERAL (
                SELECT \(unescaped: columns) FROM resources r
                WHERE r.collection_id = \(collectionID) AND r.name = asked.name LIMIT 1) r
            ORDER BY r.name
            """ : """
            SELECT \(unescaped: columns) FROM resources r
            WHERE r.collection_id = \(collectionID) AND r.name = ANY(\(names)::TEXT[]) ORDER BY r.name
            """
        return try await autocommit { connection in
            try await connection.rows(query).map { row in
                var reader = Columns(row)
                return try makeValue(&reader)
            }
        }
    }

    /// At most `limit` rows (all when nil) of the book whose names follow `name` in byte
    /// order, in that order. Names are never empty, so "" as the start takes every row.
    private func page<Value: Sendable>(of collectionID: Int64, after name: String?, limit: Int?, columns: String,
                                       row makeValue: @escaping @Sendable (inout Columns) throws -> Value) async throws -> [Value] {
        var sql = SQLBuilder()
        sql.append("SELECT \(columns) FROM resources r WHERE r.collection_id = \(sql.bind(collectionID))")
        sql.append(" AND r.name > \(sql.bind(name ?? "")) ORDER BY r.name")
        if let limit { sql.append(" LIMIT \(sql.bind(Int64(max(limit, 0))))") }
        let query = sql.query
        return try await autocommit { connection in
            try await connection.rows(query).map { row in
                var reader = Columns(row)
                return try makeValue(&reader)
            }
        }
    }

    // Listings of `infoColumns` (PROPFIND Depth 1, the first sync of a book, the names a sync
    // or multiget asks about) come as one row of column arrays: a thousand row messages cost
    // this process 5 µs each (decoding, the row stream, a cell per column), most of a
    // listing's time. The arrays are built from the ordered subquery in one pass, so their
    // elements line up.

    /// The columns of a listing as arrays, over the subquery `rows`.
    private static func infoArrays(of rows: String, bookSeq: String? = nil) -> String {
        """
        SELECT array_agg(name), array_agg(content_type), array_agg(etag), array_agg(size), array_agg(modified), array_agg(seq)\
        \(bookSeq.map { ", \($0)" } ?? "")
        FROM (SELECT r.name, r.content_type, r.etag, r.size, r.modified, r.seq FROM resources r \(rows)) listed
        """
    }

    /// `infoArrays`' six arrays, then the book's seq as the statement read it (the card
    /// cache keeps the page at that seq).
    enum InfoPageSQL: PreparedSQL {
        static let sql = infoArrays(of: "WHERE r.collection_id = $1 AND r.name > $2 ORDER BY r.name LIMIT $3",
                                    bookSeq: bookSeq(collection: "$1"))
    }

    /// Where `InfoPageSQL` puts the book's seq.
    static let infoPageSeqColumn = 6

    enum InfosByNameSQL: PreparedSQL {
        static let sql = """
            SELECT array_agg(name), array_agg(content_type), array_agg(etag), array_agg(size), array_agg(modified), array_agg(seq)
            FROM (SELECT found.* FROM unnest($2::TEXT[]) AS asked(name) CROSS JOIN LATERAL (
                      SELECT r.name, r.content_type, r.etag, r.size, r.modified, r.seq FROM resources r
                      WHERE r.collection_id = $1 AND r.name = asked.name LIMIT 1) found
                  ORDER BY found.name) listed
            """
    }

    enum InfosByNamesScanSQL: PreparedSQL {
        static let sql = infoArrays(of: "WHERE r.collection_id = $1 AND r.name = ANY($2::TEXT[]) ORDER BY r.name")
    }

    // Up to `probedNames` names asked for (a multiget, a sync's changed names) are looked up
    // one index probe each (a LATERAL subquery with LIMIT 1, which the planner cannot turn
    // into a hash join over the book): `name = ANY(array)` let the planner, with statistics
    // from before a big import, scan the whole book and filter (7.9 ms against under 1 ms
    // for a multiget of 100 in a book of 10,000 cards), and a plain join over the array
    // chose a hash join over the whole book too. More names are a good share of a book,
    // which a scan reads faster than as many probes: `ANY`, and the planner chooses (1,000 of
    // 10,000 cards: 3.8 ms). Each name once, as `ANY` has it.
    static let probedNames = 200
    /// By bytes: Swift's `==` takes "é" and "e\u{301}" for one string, PostgreSQL's "C"
    /// collation (and a book) for two.
    static func distinct(_ names: [String]) -> [String] {
        var seen = Set<ExactString>(minimumCapacity: names.count)
        return names.filter { seen.insert(ExactString($0)).inserted }
    }

    // A multiget's or sync's cards (`resources(collectionID:names:bodyLimit:)`) come as one row
    // of column arrays too, the bodies as a `bytea[]`: a row message per card was most of a
    // multiget's time on PostgreSQL (issue 34). An array holds no NULL for postgres-nio, so
    // a body over the limit comes as an empty one, told by its size. A row is bounded (an
    // array at 1 GB), so names × limit over `arrayBodyBytes` take a row per card instead.

    /// The most body bytes a named read gathers into one row: 250 names (a multiget's page)
    /// at the 64 KB default limit are 16 MB.
    static let arrayBodyBytes: Int64 = 256 << 20

    /// `infoArrays` with the body (or "" when over the limit $3) as a seventh array, the
    /// book's count up to $4 (`ResourceCountSQL`'s; 0 when not asked) as an eighth column
    /// and the book's seq as a ninth (the card cache keeps the cards at that seq): a
    /// multiget that may read the whole book counts it with its first page, one round trip
    /// where it took two (a multiget of one card: 0.1 ms of Rolo's CPU less, issue 34).
    private static func cardArrays(of rows: String) -> String {
        """
        SELECT array_agg(name), array_agg(content_type), array_agg(etag), array_agg(size), array_agg(modified), array_agg(seq),
               array_agg(body), \(bookCount(collection: "$1", cap: "$4")), \(bookSeq(collection: "$1"))
        FROM (\(rows)) listed
        """
    }

    /// Where `cardArrays` puts the book's count.
    static let cardArraysCountColumn = 7

    private static let cardColumns = """
        r.name, r.content_type, r.etag, r.size, r.modified, r.seq, CASE WHEN r.size <= $3 THEN r.data ELSE ''::BYTEA END AS body
        """

    enum CardsByNameSQL: PreparedSQL {
        static let sql = cardArrays(of: """
            SELECT found.* FROM unnest($2::TEXT[]) AS asked(name) CROSS JOIN LATERAL (
                SELECT \(cardColumns) FROM resources r WHERE r.collection_id = $1 AND r.name = asked.name LIMIT 1) found
            ORDER BY found.name
            """)
    }

    enum CardsByNamesScanSQL: PreparedSQL {
        static let sql = cardArrays(of: """
            SELECT \(cardColumns) FROM resources r WHERE r.collection_id = $1 AND r.name = ANY($2::TEXT[]) ORDER BY r.name
            """)
    }

    /// The cards of a row of `cardArrays`, in byte order; a body over `bodyLimit` left out.
    static func storedResources(arrays: ArraysRow, bodyLimit: Int64) throws -> [StoredResource] {
        guard let names = try arrays.strings(0), let types = try arrays.strings(1), let etags = try arrays.strings(2),
              let sizes = try arrays.int64s(3), let modified = try arrays.doubles(4), let seqs = try arrays.int64s(5),
              let bodies = try arrays.buffers(6) else { return [] }
        var cards: [StoredResource] = []
        cards.reserveCapacity(names.count)
        for index in names.indices {
            let info = ResourceInfo(name: names[index], contentType: types[index], etag: etags[index], size: Int(sizes[index]),
                                    modified: Date(timeIntervalSince1970: modified[index]), seq: seqs[index])
            cards.append(sizes[index] <= bodyLimit ? StoredResource(info: info, data: Data(bodies[index].readableBytesView))
                                                   : StoredResource(info: info, data: Data(), bodyLeftOut: true))
        }
        if !inByteOrder(names) { cards.sort { $0.info.name.precedesInBytes($1.info.name) } }
        return cards
    }

    /// The infos of a row of `infoArrays`, in the "C" collation's byte order, which the next
    /// page's `name > $2` follows (kept by the plan; sorted here should it ever not be).
    static func resourceInfos(arrays: ArraysRow) throws -> [ResourceInfo] {
        guard let names = try arrays.strings(0), let types = try arrays.strings(1), let etags = try arrays.strings(2),
              let sizes = try arrays.int64s(3), let modified = try arrays.doubles(4), let seqs = try arrays.int64s(5) else { return [] }
        var infos: [ResourceInfo] = []
        infos.reserveCapacity(names.count)
        for index in names.indices {
            infos.append(ResourceInfo(name: names[index], contentType: types[index], etag: etags[index], size: Int(sizes[index]),
                                      modified: Date(timeIntervalSince1970: modified[index]), seq: seqs[index]))
        }
        if !inByteOrder(names) { infos.sort { $0.name.precedesInBytes($1.name) } }
        return infos
    }

    /// Whether `names` ascend in byte order, as the statements' plans give them. Checked on the
    /// names alone: pairing the rows made them (checking 1,000 rows of a sync
    /// was 4 % of the request's CPU in retains and releases of the pairs' strings).
    static func inByteOrder(_ names: [String]) -> Bool {
        names.indices.dropFirst().allSatisfy { names[$0 - 1].precedesInBytes(names[$0]) }
    }
}
