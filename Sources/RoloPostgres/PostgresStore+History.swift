import Foundation
import PostgresNIO
import RoloStore

/// Card versions (migration v7-card-versions): each card's current one is its change row
/// (v13), the ones before it rows of `card_versions` that triggers on `changes` write; read
/// and pruned here.
extension PostgresStore: CardHistoryStore {
    public func cardVersions(collectionID: Int64, name: String) async throws -> [CardVersion] {
        let versions = try await autocommit { connection in
            try await connection.rows("""
                SELECT v.name, v.seq, v.at, v.etag, v.content_type, b.data, v.actor_user, v.actor_credential
                FROM \(unescaped: SnapshotTable.allCardVersions) v LEFT JOIN card_version_bodies b ON b.etag = v.etag
                WHERE v.collection_id = \(collectionID) AND v.name = \(name) ORDER BY v.seq
                """).map(Self.cardVersion(from:))
        }
        return try await assemblingParts(versions, collectionID: collectionID)
    }

    public func bookVersions(collectionID: Int64, since date: Date) async throws -> [CardVersion] {
        let at = date.timeIntervalSince1970
        let versions = try await autocommit { connection in
            try await connection.rows("""
                WITH versions AS \(unescaped: SnapshotTable.allCardVersions),
                changed AS (SELECT DISTINCT name FROM versions WHERE collection_id = \(collectionID) AND at > \(at)),
                baseline AS (
                    SELECT v.name, MAX(v.seq) AS seq FROM versions v JOIN changed USING (name)
                    WHERE v.collection_id = \(collectionID) AND v.at <= \(at) GROUP BY v.name)
                SELECT v.name, v.seq, v.at, v.etag, v.content_type, b.data, v.actor_user, v.actor_credential
                FROM versions v LEFT JOIN card_version_bodies b ON b.etag = v.etag
                WHERE v.collection_id = \(collectionID) AND (v.at > \(at) OR (v.name, v.seq) IN (SELECT name, seq FROM baseline))
                ORDER BY v.seq
                """).map(Self.cardVersion(from:))
        }
        return try await assemblingParts(versions, collectionID: collectionID)
    }

    public func historyCompleteSince() async throws -> Date? {
        try await autocommit { connection in
            try await connection.first("SELECT value FROM settings WHERE key = \(Self.historyCompleteKey)")
                .flatMap { try $0.decode(Data?.self) }.flatMap(Self.historyTime(_:)).map(Date.init(timeIntervalSince1970:))
        }
    }

    /// The `settings` row of `historyCompleteSince`, as SQLite's: seconds since 1970 as text.
    static let historyCompleteKey = "history-complete-since"
    static func historyTime(_ data: Data) -> Double? { Double(String(decoding: data, as: UTF8.self)) }
    static func historyTimeData(_ seconds: Double) -> Data { Data(String(Int64(seconds.rounded(.down))).utf8) }

    public func pruneCardVersions(now: Date, retention: HistoryRetention) async throws -> Int {
        let cutoff = retention.cutoff(now: now).timeIntervalSince1970
        let keep = Int64(retention.versions)
        return try await transaction { connection in
            let dropped = try await connection.first("""
                WITH ranked AS (
                    SELECT collection_id, seq, at,
                           ROW_NUMBER() OVER (PARTITION BY collection_id, name ORDER BY seq DESC) AS newer,
                           ROW_NUMBER() OVER (PARTITION BY collection_id, name, at < \(cutoff) ORDER BY seq DESC) AS older
                    FROM \(unescaped: SnapshotTable.allCardVersions) AS versions
                    -- Only cards with more versions than are kept can lose one: rank only theirs
                    -- (`SQLiteStore.cardsWithManyVersions`), counted in card_versions, which
                    -- holds all of a card's versions but its current one (v13).
                    WHERE (collection_id, name) IN (
                        SELECT collection_id, name FROM card_versions GROUP BY collection_id, name HAVING count(*) >= \(keep))),
                gone AS (
                    DELETE FROM card_versions v USING ranked r
                    WHERE v.collection_id = r.collection_id AND v.seq = r.seq AND r.newer > \(keep) AND r.at < \(cutoff)
                          AND r.older > 1
                    RETURNING 1)
                SELECT count(*)::BIGINT FROM gone
                """)?.decode(Int64.self) ?? 0
            let recorded = try await connection.first("SELECT value FROM settings WHERE key = \(Self.historyCompleteKey)")
                .flatMap { try $0.decode(Data?.self) }.flatMap(Self.historyTime(_:)) ?? 0
            try await connection.execute("""
                INSERT INTO settings (key, value) VALUES (\(Self.historyCompleteKey), \(Self.historyTimeData(max(recorded, cutoff))))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """)
            // A body stays while a version names it: a replaced one, or a card's current one.
            try await connection.execute("""
                DELETE FROM card_version_bodies b WHERE NOT EXISTS (SELECT 1 FROM card_versions v WHERE v.etag = b.etag)
                    AND NOT EXISTS (SELECT 1 FROM changes c WHERE c.etag = b.etag)
                """)
            try await connection.execute("""
                DELETE FROM card_version_part_refs r WHERE NOT EXISTS (SELECT 1 FROM card_version_bodies b WHERE b.etag = r.etag)
                """)
            try await connection.execute("""
                DELETE FROM card_version_parts p WHERE NOT EXISTS (SELECT 1 FROM card_version_part_refs r WHERE r.hash = p.hash)
                """)
            return Int(dropped)
        }
    }

    public func historyBytes() async throws -> Int64 {
        try await autocommit { connection in
            try await connection.first("""
                SELECT (SELECT COALESCE(SUM(length(data)), 0) FROM card_version_bodies)::BIGINT
                     + (SELECT COALESCE(SUM(length(data) + 64), 0) FROM card_version_parts)::BIGINT
                     + (SELECT COUNT(*) * 96 FROM card_version_part_refs)::BIGINT
                     + (SELECT COALESCE(SUM(length(name) + COALESCE(length(etag), 0) + COALESCE(length(content_type), 0)
                            + COALESCE(length(actor_user), 0) + 32), 0) FROM card_versions)::BIGINT
                """)?.decode(Int64.self) ?? 0
        }
    }

    /// The versions with their large properties put back (`VersionBody`), in one more read
    /// when any has one, and one more for the cards that still hold some of them.
    func assemblingParts(_ versions: [CardVersion], collectionID: Int64) async throws -> [CardVersion] {
        let hashes = Array(Set(versions.flatMap { $0.data.map(VersionBody.references(in:)) ?? [] }))
        guard !hashes.isEmpty else { return versions }
        return try await autocommit { connection in
            var parts: [String: Data] = [:]
            for row in try await connection.rows("SELECT hash, data FROM card_version_parts WHERE hash = ANY(\(hashes))") {
                let (hash, data) = try row.decode((String, Data).self)
                parts[hash] = data
            }
            let holders = Array(Set(versions.filter { version in
                version.data.map { VersionBody.assemble($0, parts: parts) == nil } ?? false
            }.map(\.name)))
            var current: [String: Data] = [:]
            if !holders.isEmpty {
                for row in try await connection.rows("""
                    SELECT name, data FROM resources WHERE collection_id = \(collectionID) AND name = ANY(\(holders))
                    """) {
                    let (name, data) = try row.decode((String, Data).self)
                    current[name] = data
                }
            }
            return versions.map { version in
                var version = version
                if let data = version.data {
                    version.data = VersionBody.assemble(data, stored: parts, currentBody: current[version.name])
                }
                return version
            }
        }
    }

    static func cardVersion(from row: PostgresRow) throws -> CardVersion {
        var columns = Columns(row)
        return CardVersion(name: try columns.next(String.self), seq: try columns.next(Int64.self), at: try columns.date(),
                           etag: try columns.next(String?.self), contentType: try columns.next(String?.self),
                           data: try columns.next(Data?.self), user: try columns.next(String?.self),
                           credentialID: try columns.next(Int64?.self))
    }
}
