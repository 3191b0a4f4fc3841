import Foundation
import RoloSQLite
import RoloStore
import Testing
@testable import RoloServer

/// Where tasks run in `rolo serve`: the switch that keeps them on NIO's event loops, and the
/// executor that keeps bcrypt off those loops.
@Suite struct EventLoopTasksTests {
    @Test func eventLoopTasksAreOnUnlessTheVariableTurnsThemOff() {
        #expect(EventLoopTasks.isWanted(environment: [:]))
        #expect(EventLoopTasks.isWanted(environment: ["ROLO_TASKS_ON_EVENT_LOOPS": "1"]))
        for off in ["0", "false", "NO", "off"] {
            #expect(!EventLoopTasks.isWanted(environment: ["ROLO_TASKS_ON_EVENT_LOOPS": off]))
        }
    }

    @Test func passwordCheckStaysOnTheBlockingWorkExecutorAcrossTheStoreRead() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-executor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore(path: folder.appendingPathComponent("db.sqlite").path, bcryptCost: 4)
        defer { try? store.close() }
        try await store.createUser(name: "alice", password: "right")
        #expect(!BlockingWorkExecutor.shared.isCurrent)
        let (valid, resumedOnExecutor) = try await withTaskExecutorPreference(BlockingWorkExecutor.shared) {
            // The read hops to GRDB's queue; bcrypt runs where the task resumes.
            let valid = try await store.verifyPassword(user: "alice", password: "right")
            return (valid, BlockingWorkExecutor.shared.isCurrent)
        }
        #expect(valid)
        #expect(resumedOnExecutor)
    }
}
