import Foundation
import GRDB
import PostgresNIO
import Testing
@testable import RoloPostgres
@testable import RoloSQLite
@testable import RoloStore

/// `rolo migrate` and `rolo backup` copy what `SnapshotTable` lists. A table added to a
/// schema without being listed would be lost silently by a migration between back ends, so
/// every table of each back end's schema is either copied or named here with the reason.
@Suite(.closesStores) struct SnapshotCoverageTests {
    /// Tables a snapshot does not copy as their own, and why.
    static let notCopied: [String: String] = [
        // Rebuilt by the target from each card's bytes (`SnapshotResource.card`).
        "card_index": "derived", "card_index_pending": "derived", "group_members": "derived", "card_listings": "derived",
        "card_trigrams": "derived", "card_trigram_stale": "derived", "card_listing_trigrams": "derived",
        // Copied inside another table's record.
        "resource_bodies": "in resources", "app_password_books": "in app passwords",
        // Left behind: sessions would spread a secret; locks and throttle counts are short-lived.
        "web_sessions": "left behind", "locks": "left behind", "login_failures": "left behind",
        // Each back end's own migration bookkeeping.
        "grdb_migrations": "bookkeeping", "schema_migrations": "bookkeeping",
    ]

    static func uncovered(_ tables: [String]) -> [String] {
        let copied = Set(SnapshotTable.allCases.map(\.tableName))
        // FTS5 keeps its own shadow tables beside a virtual table: they go with it.
        let shadows = ["_config", "_content", "_data", "_idx", "_docsize"]
        return tables.filter { table in
            !copied.contains(table) && notCopied[table] == nil
                && !shadows.contains { table.hasSuffix($0) && notCopied[String(table.dropLast($0.count))] != nil }
        }.sorted()
    }

    @Test(arguments: StoreBackend.allCases)
    func everyTableIsCopiedOrNamedWithTheReason(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let tables: [String]
        switch backend {
        case .sqlite:
            tables = try await fixture.sqlite.pool.read { db in
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            }
        case .postgres:
            let store = try #require(fixture.store as? PostgresStore)
            tables = try await store.autocommit { connection in
                try await connection.rows("SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()")
                    .map { try $0.decode(String.self) }
            }
        case .memory:
            Issue.record("the in-memory double has no schema")
            return
        }
        #expect(tables.contains("feeds") && tables.contains("users"))
        #expect(Self.uncovered(tables) == [], "tables neither copied by a snapshot nor named in notCopied")
        // And nothing listed here as not copied is copied after all.
        #expect(Set(Self.notCopied.keys).isDisjoint(with: SnapshotTable.allCases.map(\.tableName)))
    }
}
