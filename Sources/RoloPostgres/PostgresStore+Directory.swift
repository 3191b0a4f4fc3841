import Foundation
import PostgresNIO
import RoloStore

/// The users' directory entries (issue 32): the `directory_entries` table of `v9-directory`,
/// as SQLite's v16-directory.
extension PostgresStore: DirectoryStore {
    public func directoryEntries() async throws -> [String: DirectoryEntry] {
        let rows = try await autocommit { connection in
            try await connection.rows("SELECT u.name, d.entry FROM directory_entries d JOIN users u ON u.id = d.user_id")
                .map { try $0.decode((String, Data).self) }
        }
        var entries: [String: DirectoryEntry] = [:]
        for (name, data) in rows { entries[name] = try DirectoryEntry.decoded(data) }
        return entries
    }

    public func directoryAccounts() async throws -> [UserAccount] {
        try await autocommit { connection in
            try await connection.rows("SELECT \(unescaped: Self.accountColumns) FROM users ORDER BY name").map(Self.account)
        }
    }

    public func setDirectoryEntry(user: String, _ entry: DirectoryEntry) async throws {
        let data = try entry.encoded()
        try await transaction { connection in
            guard let userID = try await Self.userID(connection, name: user) else { throw StoreError.noSuchUser }
            try await connection.execute("""
                INSERT INTO directory_entries (user_id, entry) VALUES (\(userID), \(data))
                ON CONFLICT (user_id) DO UPDATE SET entry = excluded.entry
                """)
        }
    }
}
