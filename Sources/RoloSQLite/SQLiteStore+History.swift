import Foundation
import RoloStore
import GRDB

/// Card versions (schema v14): each card's current one is its change row (v18), the ones
/// before it rows of `card_versions` that triggers on `changes` write; read and pruned here.
extension SQLiteStore: CardHistoryStore {
    /// A version's text: the history's skeleton, or for the card's current version (schema
    /// v17) the card's own body, whole (the last column says which).
    static let versionColumns = """
        v.name, v.seq, v.at, v.etag, v.content_type,
        coalesce(b.data, (SELECT cb.data FROM resources cur JOIN resource_bodies cb ON cb.resource_id = cur.id
                          WHERE cur.collection_id = v.collection_id AND cur.name = v.name AND cur.etag = v.etag)),
        v.actor_user, v.actor_credential, b.data IS NULL
        """

    public func cardVersions(collectionID: Int64, name: String) async throws -> [CardVersion] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.versionColumns) FROM \(SnapshotTable.allCardVersions) v LEFT JOIN card_version_bodies b ON b.etag = v.etag
                WHERE v.collection_id = ? AND v.name = ? ORDER BY v.seq
                """, arguments: [collectionID, name]).map { try Self.cardVersion(from: $0, collectionID: collectionID, db) }
        }
    }

    public func bookVersions(collectionID: Int64, since date: Date) async throws -> [CardVersion] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                WITH versions AS \(SnapshotTable.allCardVersions),
                changed AS (SELECT DISTINCT name FROM versions WHERE collection_id = ?1 AND at > ?2),
                baseline AS (
                    SELECT v.name, MAX(v.seq) AS seq FROM versions v JOIN changed USING (name)
                    WHERE v.collection_id = ?1 AND v.at <= ?2 GROUP BY v.name)
                SELECT \(Self.versionColumns) FROM versions v LEFT JOIN card_version_bodies b ON b.etag = v.etag
                WHERE v.collection_id = ?1 AND (v.at > ?2 OR (v.name, v.seq) IN (SELECT name, seq FROM baseline))
                ORDER BY v.seq
                """, arguments: [collectionID, date.timeIntervalSince1970]).map {
                    try Self.cardVersion(from: $0, collectionID: collectionID, db)
                }
        }
    }

    public func pruneCardVersions(now: Date, retention: HistoryRetention) async throws -> Int {
        let cutoff = retention.cutoff(now: now).timeIntervalSince1970
        return try await pool.write { db in
            try db.execute(sql: """
                DELETE FROM card_versions WHERE at < ?1 AND (collection_id, seq) IN (
                    SELECT collection_id, seq FROM (
                        SELECT collection_id, seq, at,
                               ROW_NUMBER() OVER (PARTITION BY collection_id, name ORDER BY seq DESC) AS newer,
                               ROW_NUMBER() OVER (PARTITION BY collection_id, name, at < ?1 ORDER BY seq DESC) AS older
                        FROM \(SnapshotTable.allCardVersions)
                        WHERE (collection_id, name) IN (\(Self.cardsWithManyVersions)))
                    WHERE newer > ?2 AND at < ?1 AND older > 1)
                """, arguments: [cutoff, retention.versions])
            let dropped = db.changesCount
            let recorded = try Data.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [Self.historyCompleteKey])
                .flatMap(Self.historyTime(_:)) ?? 0
            try db.execute(sql: "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)",
                           arguments: [Self.historyCompleteKey, Self.historyTimeData(max(recorded, cutoff))])
            try db.execute(sql: """
                DELETE FROM card_version_bodies
                WHERE NOT EXISTS (SELECT 1 FROM card_versions v WHERE v.etag = card_version_bodies.etag);
                DELETE FROM card_version_part_refs
                WHERE NOT EXISTS (SELECT 1 FROM card_versions v WHERE v.etag = card_version_part_refs.etag)
                  AND etag NOT IN (SELECT etag FROM changes WHERE etag IS NOT NULL);
                DELETE FROM card_version_parts
                WHERE NOT EXISTS (SELECT 1 FROM card_version_part_refs r WHERE r.hash = card_version_parts.hash);
                """)
            return dropped
        }
    }

    /// The cards (book and name) that may have more versions than the retention keeps
    /// (`?2`): only these can lose one, and the window functions rank only their versions.
    /// Ranking every version took 3.5 s and 100 MB of memory (a sort in `temp_store =
    /// MEMORY`) at each start and every hour with 1,000,000 cards; this reads the name index
    /// in 0.3 s. Counted in `card_versions`, which holds all of a card's versions but its
    /// current one (v18): `?2` there is `?2` + 1 in all. A card whose tombstone was compacted
    /// has all of its versions there, so it may be ranked one version early and lose none.
    static let cardsWithManyVersions = """
        SELECT collection_id, name FROM card_versions GROUP BY collection_id, name HAVING count(*) >= ?2
        """

    public func historyCompleteSince() async throws -> Date? {
        try await pool.read { db in
            try Data.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [Self.historyCompleteKey])
                .flatMap(Self.historyTime(_:)).map(Date.init(timeIntervalSince1970:))
        }
    }

    /// The `settings` row of `historyCompleteSince`: seconds since 1970 as text, a value
    /// every back end's settings (and `rolo migrate`) carry as bytes.
    static let historyCompleteKey = "history-complete-since"
    static func historyTime(_ data: Data) -> Double? { Double(String(decoding: data, as: UTF8.self)) }
    static func historyTimeData(_ seconds: Double) -> Data { Data(String(Int64(seconds.rounded(.down))).utf8) }

    /// The replaced versions' rows and texts: a card's current version is its change row
    /// and its card, which the book holds anyway (v17, v18).
    public func historyBytes() async throws -> Int64 {
        try await pool.read { db in
            let bodies = try Int64.fetchOne(db, sql: """
                SELECT (SELECT COALESCE(SUM(length(data)), 0) FROM card_version_bodies)
                     + (SELECT COALESCE(SUM(length(data) + 64), 0) FROM card_version_parts)
                     + (SELECT COUNT(*) * 96 FROM card_version_part_refs)
                """) ?? 0
            let rows = try Int64.fetchOne(db, sql: """
                SELECT COALESCE(SUM(length(name) + COALESCE(length(etag), 0) + COALESCE(length(content_type), 0)
                    + COALESCE(length(actor_user), 0) + 32), 0) FROM card_versions
                """) ?? 0
            return bodies + rows
        }
    }

    /// `RoloBench history`'s baseline, on a scratch database only: the write path as it was
    /// before versions. The triggers go, and the bodies the write path still hands over are
    /// dropped as they arrive (`RAISE(IGNORE)`), so what is left is the write path alone.
    package func keepNoVersionsForBenchmark() async throws {
        try await pool.write { db in
            try db.execute(sql: """
                DROP TRIGGER changes_keep_replaced_version;
                DROP TRIGGER changes_keep_compacted_version;
                CREATE TRIGGER bench_no_version_bodies BEFORE INSERT ON card_version_bodies BEGIN SELECT RAISE(IGNORE); END;
                CREATE TRIGGER bench_no_version_parts BEFORE INSERT ON card_version_parts BEGIN SELECT RAISE(IGNORE); END;
                CREATE TRIGGER bench_no_version_part_refs BEFORE INSERT ON card_version_part_refs BEGIN SELECT RAISE(IGNORE); END;
                """)
        }
    }

    /// A version from `versionColumns`, its large properties put back (`VersionBody`): from
    /// the history's parts, or the card's current body for those it still holds.
    static func cardVersion(from row: Row, collectionID: Int64, _ db: Database) throws -> CardVersion {
        var data: Data? = row[5]
        if let skeleton = data, !(row[8] as Bool), skeleton.contains(0) {
            var parts: [String: Data] = [:]
            for hash in VersionBody.references(in: skeleton) where parts[hash] == nil {
                parts[hash] = try Data.fetchOne(db.cachedStatement(sql: "SELECT data FROM card_version_parts WHERE hash = ?"),
                                                arguments: [hash])
            }
            data = try VersionBody.assemble(skeleton, stored: parts, currentBody: nil) ?? VersionBody.assemble(
                skeleton, stored: parts,
                currentBody: Data.fetchOne(db.cachedStatement(sql: """
                    SELECT b.data FROM resources r JOIN resource_bodies b ON b.resource_id = r.id WHERE r.collection_id = ? AND r.name = ?
                    """), arguments: [collectionID, row[0] as String]))
        }
        return CardVersion(name: row[0], seq: row[1], at: Date(timeIntervalSince1970: row[2]), etag: row[3],
                           contentType: row[4], data: data, user: row[6], credentialID: row[7])
    }
}
