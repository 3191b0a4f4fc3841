import Foundation
import RoloStore
import GRDB

extension SQLiteStore {
    public func recordAccess(_ tallies: [AccessTally], uses: [CredentialUse]) async throws {
        guard !tallies.isEmpty || !uses.isEmpty else { return }
        try await pool.write { db in
            let upsert = try db.cachedStatement(sql: """
                INSERT INTO access_hourly (user_id, credential_id, book_id, period_start, requests, cards_read,
                                           cards_written, cards_deleted, full_download)
                SELECT id, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM users WHERE name = ?1
                ON CONFLICT DO UPDATE SET requests = requests + excluded.requests,
                    cards_read = cards_read + excluded.cards_read, cards_written = cards_written + excluded.cards_written,
                    cards_deleted = cards_deleted + excluded.cards_deleted,
                    full_download = full_download OR excluded.full_download
                """)
            for tally in tallies {
                try upsert.execute(arguments: [tally.user, tally.credentialID, tally.bookID, tally.hour, tally.requests,
                                               tally.cardsRead, tally.cardsWritten, tally.cardsDeleted, tally.fullDownload])
            }
            let use = try db.cachedStatement(sql: """
                UPDATE app_passwords SET last_used = ?, last_address = ?, last_user_agent = ? WHERE id = ?
                """)
            for credential in uses {
                try use.execute(arguments: [credential.at.timeIntervalSince1970, credential.address, credential.userAgent,
                                            credential.credentialID])
            }
        }
    }

    public func accessHistory(user: String, since date: Date) async throws -> [AccessRecord] {
        let since = Int64(date.timeIntervalSince1970.rounded(.down))
        return try await pool.read { db in
            guard let userID = try Self.userID(db, name: user) else { throw StoreError.noSuchUser }
            var records: [AccessRecord] = []
            for (table, period) in [("access_daily", AccessRecord.Period.day), ("access_hourly", .hour)] {
                // The user's own credentials, on every book they reached.
                let own = try Row.fetchAll(db, sql: """
                    SELECT h.period_start, h.credential_id, a.name, o.name, c.path, h.requests, h.cards_read,
                           h.cards_written, h.cards_deleted, h.full_download
                    FROM \(table) h LEFT JOIN app_passwords a ON a.id = h.credential_id
                    LEFT JOIN collections c ON c.id = h.book_id LEFT JOIN users o ON o.id = c.owner_id
                    WHERE h.user_id = ? AND h.period_start >= ?
                    """, arguments: [userID, since])
                records += own.map { row in
                    AccessRecord(period: period, start: Date(timeIntervalSince1970: Double(row[0] as Int64)), user: user,
                                 credential: row[2], credentialID: row[1], bookOwner: row[3], book: row[4],
                                 requests: row[5], cardsRead: row[6], cardsWritten: row[7], cardsDeleted: row[8],
                                 fullDownload: row[9])
                }
                // Other users on the user's books: per sharee, never their devices.
                let sharees = try Row.fetchAll(db, sql: """
                    SELECT h.period_start, s.name, c.path, SUM(h.requests), SUM(h.cards_read), SUM(h.cards_written),
                           SUM(h.cards_deleted), MAX(h.full_download)
                    FROM \(table) h JOIN collections c ON c.id = h.book_id JOIN users s ON s.id = h.user_id
                    WHERE c.owner_id = ?1 AND h.user_id != ?1 AND h.period_start >= ?2
                    GROUP BY h.period_start, h.user_id, h.book_id
                    """, arguments: [userID, since])
                records += sharees.map { row in
                    AccessRecord(period: period, start: Date(timeIntervalSince1970: Double(row[0] as Int64)), user: row[1],
                                 credential: nil, credentialID: nil, bookOwner: user, book: row[2], requests: row[3],
                                 cardsRead: row[4], cardsWritten: row[5], cardsDeleted: row[6], fullDownload: row[7])
                }
            }
            return records.sorted { ($0.start, $0.user, $0.book ?? "") > ($1.start, $1.user, $1.book ?? "") }
        }
    }

    public func pruneAccessHistory(now: Date, retention: AccessRetention) async throws {
        let hourlyCutoff = Int64((now.timeIntervalSince1970 - retention.hourly).rounded(.down))
        let dailyCutoff = Int64((now.timeIntervalSince1970 - retention.daily).rounded(.down))
        try await pool.write { db in
            // Whole UTC days only: a day is rolled up once all its hours are past the cutoff.
            let dayCutoff = hourlyCutoff - hourlyCutoff % 86_400
            try db.execute(sql: """
                INSERT INTO access_daily (user_id, credential_id, book_id, period_start, requests, cards_read,
                                          cards_written, cards_deleted, full_download)
                SELECT user_id, credential_id, book_id, period_start - period_start % 86400, SUM(requests),
                       SUM(cards_read), SUM(cards_written), SUM(cards_deleted), MAX(full_download)
                FROM access_hourly WHERE period_start < ?1
                GROUP BY user_id, credential_id, book_id, period_start - period_start % 86400
                ON CONFLICT DO UPDATE SET requests = requests + excluded.requests,
                    cards_read = cards_read + excluded.cards_read, cards_written = cards_written + excluded.cards_written,
                    cards_deleted = cards_deleted + excluded.cards_deleted,
                    full_download = full_download OR excluded.full_download
                """, arguments: [dayCutoff])
            try db.execute(sql: "DELETE FROM access_hourly WHERE period_start < ?", arguments: [dayCutoff])
            try db.execute(sql: "DELETE FROM access_daily WHERE period_start < ?", arguments: [dailyCutoff])
            // A revoked app password's history goes once it is older than the hourly retention.
            let revokedCutoff = now.timeIntervalSince1970 - retention.hourly
            for table in ["access_hourly", "access_daily"] {
                try db.execute(sql: """
                    DELETE FROM \(table) WHERE credential_id IN (SELECT id FROM app_passwords WHERE revoked < ?)
                    """, arguments: [revokedCutoff])
            }
        }
    }
}
