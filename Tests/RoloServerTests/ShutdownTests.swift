import Foundation
import RoloServer
import RoloSQLite
import RoloStore
import Testing

/// Graceful shutdown: requests already being answered complete, new connections are refused.
@Suite struct ShutdownTests {
    @Test func inFlightRequestCompletesDuringGracefulShutdown() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-shutdown-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = ServerConfiguration(port: 0, databasePath: folder.appendingPathComponent("db.sqlite").path,
                                                logLevel: .warning)
        let store = try SQLiteStore(path: configuration.databasePath, bcryptCost: 4)
        try await store.createUser(name: "alice", password: "right")
        let running = try await RoloServer.make(configuration: configuration, store: store).start()
        let url = "http://127.0.0.1:\(running.port)/dav/"

        // Seven failures: the next one is held for 1 s by the throttle, long enough to still
        // be in flight when shutdown starts 400 ms later, even on a loaded machine where
        // starting curl takes a while.
        for _ in 0..<7 { _ = try await Curl.run(["-u", "alice:wrong", url]) }
        let inFlight = Task { try await Curl.run(["-u", "alice:wrong", url]) }
        try await Task.sleep(for: .milliseconds(400))
        try await running.shutdown()
        let answered = try await inFlight.value
        #expect(answered.status == 401)

        let refused = try? await Curl.run(["--max-time", "2", url])
        #expect(refused == nil || refused?.status == 0)
        try store.close()
    }
}
