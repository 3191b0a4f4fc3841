import Foundation
import GRDB
import RoloStore

/// The users' directory entries (issue 32): the `directory_entries` table of `v16-directory`.
extension SQLiteStore: DirectoryStore {
    public func directoryEntries() async throws -> [String: DirectoryEntry] {
        let rows = try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT u.name, d.entry FROM directory_entries d JOIN users u ON u.id = d.user_id")
                .map { (row: Row) -> (String, Data) in (row[0], row[1]) }
        }
        var entries: [String: DirectoryEntry] = [:]
        for (name, data) in rows { entries[name] = try DirectoryEntry.decoded(data) }
        return entries
    }

    public func directoryAccounts() async throws -> [UserAccount] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.accountColumns) FROM users ORDER BY name").map(Self.account(from:))
        }
    }

    public func setDirectoryEntry(user: String, _ entry: DirectoryEntry) async throws {
        let data = try entry.encoded()
        try await pool.write { db in
            guard let userID = try Self.userID(db, name: user) else { throw StoreError.noSuchUser }
            try db.execute(sql: """
                INSERT INTO directory_entries (user_id, entry) VALUES (?, ?)
                ON CONFLICT (user_id) DO UPDATE SET entry = excluded.entry
                """, arguments: [userID, data])
        }
    }
}
