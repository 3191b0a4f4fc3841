import Foundation
import Logging
import PostgresTestSupport
@testable import RoloPostgres
import RoloPush
import RoloSQLite
import RoloStore
import Testing

/// Server shutdown cancels the notifier and waits for it (`PushService`), so a notifier
/// that misses a cancellation holds the process up. Cancelled at any moment of its start
/// (its feed opening, the sweep of owed books, its first wait for a change), it ends.
@Suite struct PushNotifierCancellationTests {
    @Test func aNotifierCancelledAtAnyMomentEndsOnSQLite() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-notifier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore(path: folder.appendingPathComponent("rolo.sqlite").path, bcryptCost: 4)
        try await Self.cancelAtEveryMoment(store)
    }

    @Test func aNotifierCancelledAtAnyMomentEndsOnPostgreSQL() async throws {
        let database = try await TestDatabase.create()
        let store: PostgresStore
        do {
            store = try await PostgresStore.open(try database.configuration(poolSize: 2))
        } catch {
            await database.drop()
            throw error
        }
        do {
            try await Self.cancelAtEveryMoment(store)
        } catch {
            await store.close()
            await database.drop()
            throw error
        }
        await store.close()
        await database.drop()
    }

    /// Starts and cancels a notifier 60 times, after 0 to 30 ms (the cancellation lands
    /// before, during and after each of its first waits), with a change published now and
    /// then; each must end within 30 s (a loaded machine; it takes milliseconds).
    static func cancelAtEveryMoment(_ store: any CardStore & PushStore & StoreCoordination) async throws {
        var logger = Logger(label: "notifier-cancellation")
        logger.logLevel = .critical
        for attempt in 0..<60 {
            let notifier = PushNotifier(store: store, logger: logger, syncToken: { "sync/\($0)/\($1)" }) { _ in .delivered }
            let run = Task { await notifier.run() }
            if attempt % 3 == 1 { store.bookChanges.publish(BookChange(collectionID: 1, seq: Int64(attempt))) }
            try await Task.sleep(for: .microseconds(attempt * 500))
            run.cancel()
            let ended = await withTimeout(.seconds(30)) { await run.value }
            #expect(ended, "attempt \(attempt): the notifier had not ended 30 s after its cancellation")
            if !ended { return }
        }
    }
}
