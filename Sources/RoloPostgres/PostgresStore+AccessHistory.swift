import Foundation
import PostgresNIO
import RoloStore

extension PostgresStore {
    /// One statement per table: every tally of the batch in arrays, summed into the existing
    /// rows. Several processes add to the same rows safely (the upsert locks each).
    public func recordAccess(_ tallies: [AccessTally], uses: [CredentialUse]) async throws {
        guard !tallies.isEmpty || !uses.isEmpty else { return }
        // One row per key in a statement: ON CONFLICT cannot touch a row twice.
        var merged: [AccessKey: AccessTally] = [:]
        var order: [AccessKey] = []
        for tally in tallies {
            let key = AccessKey(user: tally.user, credentialID: tally.credentialID, bookID: tally.bookID, hour: tally.hour)
            if var existing = merged[key] {
                existing.requests += tally.requests; existing.cardsRead += tally.cardsRead
                existing.cardsWritten += tally.cardsWritten; existing.cardsDeleted += tally.cardsDeleted
                existing.fullDownload = existing.fullDownload || tally.fullDownload
                merged[key] = existing
            } else {
                merged[key] = tally
                order.append(key)
            }
        }
        let rows = order.compactMap { merged[$0] }
        try await transaction { connection in
            if !rows.isEmpty {
                try await connection.execute("""
                    INSERT INTO access_hourly (user_id, credential_id, book_id, period_start, requests, cards_read,
                                               cards_written, cards_deleted, full_download)
                    SELECT u.id, t.credential_id, t.book_id, t.period_start, t.requests, t.cards_read, t.cards_written,
                           t.cards_deleted, t.full_download
                    FROM unnest(\(rows.map(\.user))::TEXT[], \(rows.map(\.credentialID))::BIGINT[], \(rows.map(\.bookID))::BIGINT[],
                                \(rows.map(\.hour))::BIGINT[], \(rows.map { Int64($0.requests) })::BIGINT[],
                                \(rows.map { Int64($0.cardsRead) })::BIGINT[], \(rows.map { Int64($0.cardsWritten) })::BIGINT[],
                                \(rows.map { Int64($0.cardsDeleted) })::BIGINT[], \(rows.map(\.fullDownload))::BOOLEAN[])
                        AS t(user_name, credential_id, book_id, period_start, requests, cards_read, cards_written,
                             cards_deleted, full_download)
                    JOIN users u ON u.name = t.user_name
                    ON CONFLICT (user_id, credential_id, book_id, period_start) DO UPDATE SET
                        requests = access_hourly.requests + excluded.requests,
                        cards_read = access_hourly.cards_read + excluded.cards_read,
                        cards_written = access_hourly.cards_written + excluded.cards_written,
                        cards_deleted = access_hourly.cards_deleted + excluded.cards_deleted,
                        full_download = access_hourly.full_download OR excluded.full_download
                    """)
            }
            for use in uses {
                try await connection.execute("""
                    UPDATE app_passwords SET last_used = \(use.at.timeIntervalSince1970), last_address = \(use.address),
                        last_user_agent = \(use.userAgent?.withoutNUL) WHERE id = \(use.credentialID)
                    """)
            }
        }
    }

    private struct AccessKey: Hashable {
        var user: String
        var credentialID: Int64
        var bookID: Int64
        var hour: Int64
    }

    public func accessHistory(user: String, since date: Date) async throws -> [AccessRecord] {
        let since = Int64(date.timeIntervalSince1970.rounded(.down))
        return try await autocommit { connection in
            guard let userID = try await Self.userID(connection, name: user) else { throw StoreError.noSuchUser }
            var records: [AccessRecord] = []
            for (table, period) in [("access_daily", AccessRecord.Period.day), ("access_hourly", .hour)] {
                // The user's own credentials, on every book they reached.
                let own = try await connection.rows("""
                    SELECT h.period_start, h.credential_id, a.name, o.name, c.path, h.requests, h.cards_read,
                           h.cards_written, h.cards_deleted, h.full_download
                    FROM \(unescaped: table) h LEFT JOIN app_passwords a ON a.id = h.credential_id
                    LEFT JOIN collections c ON c.id = h.book_id LEFT JOIN users o ON o.id = c.owner_id
                    WHERE h.user_id = \(userID) AND h.period_start >= \(since)
                    """)
                for row in own {
                    var columns = Columns(row)
                    records.append(try AccessRecord(
                        period: period, start: Date(timeIntervalSince1970: Double(try columns.next(Int64.self))), user: user,
                        credentialID: try columns.next(Int64.self), credential: try columns.next(String?.self),
                        bookOwner: try columns.next(String?.self), book: try columns.next(String?.self), columns: &columns))
                }
                // Other users on the user's books: per sharee, never their devices.
                let sharees = try await connection.rows("""
                    SELECT h.period_start, s.name, c.path, SUM(h.requests)::BIGINT, SUM(h.cards_read)::BIGINT,
                           SUM(h.cards_written)::BIGINT, SUM(h.cards_deleted)::BIGINT, bool_or(h.full_download)
                    FROM \(unescaped: table) h JOIN collections c ON c.id = h.book_id JOIN users s ON s.id = h.user_id
                    WHERE c.owner_id = \(userID) AND h.user_id <> \(userID) AND h.period_start >= \(since)
                    GROUP BY h.period_start, h.user_id, h.book_id, s.name, c.path
                    """)
                for row in sharees {
                    var columns = Columns(row)
                    records.append(try AccessRecord(
                        period: period, start: Date(timeIntervalSince1970: Double(try columns.next(Int64.self))),
                        user: try columns.next(String.self), credentialID: nil, credential: nil, bookOwner: user,
                        book: try columns.next(String.self), columns: &columns))
                }
            }
            return records.sorted { ($0.start, $0.user, $0.book ?? "") > ($1.start, $1.user, $1.book ?? "") }
        }
    }

    public func pruneAccessHistory(now: Date, retention: AccessRetention) async throws {
        let hourlyCutoff = Int64((now.timeIntervalSince1970 - retention.hourly).rounded(.down))
        let dailyCutoff = Int64((now.timeIntervalSince1970 - retention.daily).rounded(.down))
        // Whole UTC days only: a day is rolled up once all its hours are past the cutoff.
        let dayCutoff = hourlyCutoff - hourlyCutoff % 86_400
        // A revoked app password's history goes once it is older than the hourly retention.
        let revokedCutoff = now.timeIntervalSince1970 - retention.hourly
        try await transaction { connection in
            try await connection.execute("""
                INSERT INTO access_daily (user_id, credential_id, book_id, period_start, requests, cards_read,
                                          cards_written, cards_deleted, full_download)
                SELECT user_id, credential_id, book_id, period_start - period_start % 86400, SUM(requests)::BIGINT,
                       SUM(cards_read)::BIGINT, SUM(cards_written)::BIGINT, SUM(cards_deleted)::BIGINT, bool_or(full_download)
                FROM access_hourly WHERE period_start < \(dayCutoff)
                GROUP BY user_id, credential_id, book_id, period_start - period_start % 86400
                ON CONFLICT (user_id, credential_id, book_id, period_start) DO UPDATE SET
                    requests = access_daily.requests + excluded.requests,
                    cards_read = access_daily.cards_read + excluded.cards_read,
                    cards_written = access_daily.cards_written + excluded.cards_written,
                    cards_deleted = access_daily.cards_deleted + excluded.cards_deleted,
                    full_download = access_daily.full_download OR excluded.full_download
                """)
            try await connection.execute("DELETE FROM access_hourly WHERE period_start < \(dayCutoff)")
            try await connection.execute("DELETE FROM access_daily WHERE period_start < \(dailyCutoff)")
            for table in ["access_hourly", "access_daily"] {
                try await connection.execute("""
                    DELETE FROM \(unescaped: table) WHERE credential_id IN (SELECT id FROM app_passwords WHERE revoked < \(revokedCutoff))
                    """)
            }
        }
    }
}

private extension AccessRecord {
    /// The record with its counts read from the next five columns (requests, cards read,
    /// written, deleted, full download).
    init(period: Period, start: Date, user: String, credentialID: Int64?, credential: String?, bookOwner: String?,
         book: String?, columns: inout Columns) throws {
        self.init(period: period, start: start, user: user, credential: credential, credentialID: credentialID,
                  bookOwner: bookOwner, book: book, requests: Int(try columns.next(Int64.self)),
                  cardsRead: Int(try columns.next(Int64.self)), cardsWritten: Int(try columns.next(Int64.self)),
                  cardsDeleted: Int(try columns.next(Int64.self)), fullDownload: try columns.next(Bool.self))
    }
}
