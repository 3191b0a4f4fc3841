import Foundation
import PostgresNIO
import RoloStore

extension PostgresStore {
    /// Empties every table of users' data and restarts the identity columns, so ids (and
    /// hence sync tokens) start again from 1. The server's secrets (`settings`) stay, as in
    /// `SQLiteStore`.
    public func eraseAll() async throws {
        try await changingSignInOrBooks {
            try await transaction { connection in
                try await connection.execute("""
                    TRUNCATE card_versions, card_version_bodies, card_version_parts, card_version_part_refs, directory_entries, feeds, locks, login_failures, web_sessions, trash, card_listings, access_hourly, access_daily, app_password_books, app_passwords, push_registrations, shares,
                        dead_properties, changes, group_members, card_index, resources, collections, users RESTART IDENTITY
                    """)
            }
        }
    }
}
