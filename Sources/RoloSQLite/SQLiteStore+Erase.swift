import RoloStore
import GRDB

extension SQLiteStore {
    /// Empties every table in one transaction. Tables use `INTEGER PRIMARY KEY` without
    /// AUTOINCREMENT, so ids (and hence sync tokens) start again from 1.
    public func eraseAll() async throws {
        try await pool.write { db in
            for table in ["card_versions", "card_version_bodies", "card_version_parts", "card_version_part_refs", "directory_entries", "feeds", "access_hourly", "access_daily", "app_password_books", "app_passwords", "shares", "dead_properties", "changes", "group_members", "card_index", "card_index_pending", "card_trigrams", "resource_bodies", "resources", "card_trigram_stale",
                          "card_listings", "card_listing_trigrams", "trash", "web_sessions", "locks", "login_failures",                           "collections", "users"] {
                try db.execute(sql: "DELETE FROM \(table)")
            }
            self.lockRows.set(0)
        }
    }
}
