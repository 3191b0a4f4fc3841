import Foundation
import ProcessLaunch
#if canImport(Glibc)
import Glibc
#endif
import Logging
import PostgresNIO
import RoloPostgres
import Synchronization

/// The PostgreSQL server the tests use: `ROLO_TEST_POSTGRES_URL` (a superuser's URL to a
/// maintenance database, as `scripts/test.sh` exports after starting a cluster), else a
/// throwaway cluster this process starts once with `scripts/pg-cluster.sh` and that stops
/// within a second of the process's end. Each test gets a database of its own
/// (`TestDatabase.create()`), dropped when it is done, so tests run in parallel safely.
/// No server and no way to start one is a failure, never a skip.
public enum TestPostgres {
    /// The repository's root, from this file's place in it.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let script = repositoryRoot.appendingPathComponent("scripts/pg-cluster.sh").path

    /// The maintenance URL of the server (started on first use).
    public static func serverURL() async throws -> String {
        try await shared.server()
    }

    /// A cluster of the caller's own (for tests that stop and restart their server), stopped
    /// by `stop()` or at the process's end.
    /// With `ssl`, TLS is on, with a self-signed certificate for 127.0.0.1 (`Cluster.certificatePath`).
    public static func startCluster(ssl: Bool = false) throws -> Cluster {
        let output = try run(["/bin/bash", script, "start", "--owner-pid", String(ProcessInfo.processInfo.processIdentifier)]
                             + (ssl ? ["--ssl"] : []))
        let parts = output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { throw TestPostgresError("pg-cluster.sh start said: \(output)") }
        return Cluster(folder: String(parts[0]), url: String(parts[1]))
    }

    /// A started cluster: its folder and superuser URL.
    public struct Cluster: Sendable {
        public let folder: String
        public let url: String

        /// The server's self-signed certificate, for a cluster started with `ssl`.
        public var certificatePath: String { "\(folder)/server.crt" }

        public var binDirectory: String {
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            let newest = versions.sorted { $0.compare($1, options: .numeric) == .orderedAscending }.last ?? "15"
            return "/usr/lib/postgresql/\(newest)/bin"
        }

        /// Stops the server at once, as a crash would (`pg_ctl stop -m immediate`); the data
        /// stays, but for commits of the last moments (the cluster does not wait for its log:
        /// run a CHECKPOINT first).
        public func kill() throws { try pgCtl(["stop", "-m", "immediate", "-w"]) }

        /// Shuts the server down as an administrator would (`pg_ctl stop -m fast`): every
        /// connection is closed, every commit kept.
        public func shutDown() throws { try pgCtl(["stop", "-m", "fast", "-w"]) }

        /// Starts the stopped server again (its port, durability off; no TLS).
        public func restart() throws {
            let port = URLComponents(string: url)?.port ?? 5432
            try pgCtl(["start", "-w", "-t", "60", "-l", "\(folder)/server.log", "-o",
                       "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c max_connections=500 -c fsync=off"])
        }

        /// A streaming replica of this running cluster, on a port of its own, stopped by its
        /// `stop()` or at the process's end.
        public func startReplica() throws -> Cluster {
            let output = try TestPostgres.run(["/bin/bash", TestPostgres.script, "replica", folder,
                                               "--owner-pid", String(ProcessInfo.processInfo.processIdentifier)])
            let parts = output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { throw TestPostgresError("pg-cluster.sh replica said: \(output)") }
            return Cluster(folder: String(parts[0]), url: String(parts[1]))
        }

        /// A failover: this replica is promoted and takes over `old`'s address (stopped
        /// first), as a virtual IP or a DNS name moves to the new primary. Its URL is then `old.url`.
        public func takeOver(from old: Cluster) throws {
            try TestPostgres.run(["/bin/bash", TestPostgres.script, "take-over", old.folder, folder])
        }

        /// One statement through psql; its rows unaligned, without headers.
        public func psql(_ sql: String) throws -> String {
            try TestPostgres.run(["/usr/bin/psql", "-X", "-q", "-A", "-t", url, "-c", sql])
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Stops the server and removes its folder.
        public func stop() {
            _ = try? TestPostgres.run(["/bin/bash", TestPostgres.script, "stop", folder])
        }

        private func pgCtl(_ arguments: [String]) throws {
            let command = ["\(binDirectory)/pg_ctl", "-D", "\(folder)/data"] + arguments
            _ = try TestPostgres.run(getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + command : command)
        }
    }

    /// Runs a command to its end; its standard output, or an error with its standard error.
    /// The output goes through files, not pipes: a server the command starts in the
    /// background would inherit a pipe, and its reader would wait for that server's end.
    @discardableResult
    static func run(_ command: [String]) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outPath = folder.appendingPathComponent("out").path, errPath = folder.appendingPathComponent("err").path
        let child: SpawnedProcess
        do {
            child = try SpawnedProcess(command[0], Array(command.dropFirst()),
                                       stdin: .null, stdout: .file(outPath), stderr: .file(errPath))
        } catch {
            throw TestPostgresError("cannot run \(command[0]): \(error)")
        }
        child.waitUntilExit()
        let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        guard child.terminationReason == .exit, child.terminationStatus == 0 else {
            throw TestPostgresError("\(command.joined(separator: " ")) failed (\(child.terminationReason) \(child.terminationStatus)): \(err)")
        }
        return out
    }

    /// `body` on a thread of its own, so that a test waiting for a process blocks none of
    /// the few threads every task shares.
    public static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    static let shared = Server()

    /// The one server of the process and a client to its maintenance database.
    final class Server: Sendable {
        private let state = Mutex<Task<(String, PostgresClient), any Error>?>(nil)
        /// Databases in use at once: each test's store opens a few connections.
        let slots = AsyncSemaphore(permits: 8)

        func server() async throws -> String { try await started().0 }

        func admin() async throws -> PostgresClient { try await started().1 }

        private func started() async throws -> (String, PostgresClient) {
            let task = state.withLock { state in
                if let state { return state }
                let task = Task<(String, PostgresClient), any Error> {
                    let url: String
                    if let configured = ProcessInfo.processInfo.environment["ROLO_TEST_POSTGRES_URL"], !configured.isEmpty {
                        url = configured
                    } else {
                        url = try await TestPostgres.onThread { try TestPostgres.startCluster() }.url
                    }
                    var configuration = try PostgresStore.Configuration(url: url)
                    configuration.poolSize = 4
                    let client = PostgresClient(configuration: try configuration.clientConfiguration(),
                                                backgroundLogger: Logger(label: "rolo.test.postgres"))
                    Task.detached { await client.run() }
                    return (url, client)
                }
                state = task
                return task
            }
            return try await task.value
        }
    }
}

/// A database of one test's own on the test server.
public struct TestDatabase: Sendable {
    /// Its URL (the server's, with the database's name).
    public let url: String
    public let name: String

    /// Creates a fresh, empty database; waits while too many are in use.
    public static func create() async throws -> TestDatabase {
        let server = TestPostgres.shared
        await server.slots.acquire()
        do {
            let base = try await server.server()
            let admin = try await server.admin()
            let name = "rolo_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
            guard var components = URLComponents(string: base) else { throw TestPostgresError("bad server URL \(base)") }
            components.path = "/\(name)"
            guard let url = components.string else { throw TestPostgresError("bad server URL \(base)") }
            return TestDatabase(url: url, name: name)
        } catch {
            server.slots.release()
            throw error
        }
    }

    /// Drops the database (closing whatever is still connected to it) and frees its slot.
    public func drop() async {
        let server = TestPostgres.shared
        if let admin = try? await server.admin() {
            _ = try? await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
        server.slots.release()
    }

    /// The store's configuration for this database: a small pool, cheap bcrypt.
    public func configuration(poolSize: Int = 4) throws -> PostgresStore.Configuration {
        var configuration = try PostgresStore.Configuration(url: url)
        configuration.poolSize = poolSize
        configuration.bcryptCost = 4
        return configuration
    }
}

public struct TestPostgresError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A counting semaphore for tasks that only throttles: a wait for a permit lasts at most
/// `patience`, then goes on without one (the permit is taken all the same, so the count goes
/// below zero and later releases pay it back). Test databases are its permits, and a test
/// that holds one may ask for another (a copy or a backup from one database to a second):
/// with every permit held by such tests, each waiting for its second, the suite waited for
/// ever, idle (twice in five local runs).
public final class AsyncSemaphore: Sendable {
    private struct State {
        var permits: Int
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextID = 0
    }
    private let state: Mutex<State>
    private let patience: Duration

    public init(permits: Int, patience: Duration = .seconds(10)) {
        state = Mutex(State(permits: permits))
        self.patience = patience
    }

    /// Permits free now; below zero while more are held than there are.
    public var available: Int { state.withLock { $0.permits } }

    public func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = state.withLock { state -> Int? in
                if state.permits > 0 {
                    state.permits -= 1
                    return nil
                }
                let id = state.nextID
                state.nextID += 1
                state.waiters.append((id, continuation))
                return id
            }
            guard let waiting else { return continuation.resume() }
            Task { [self] in
                try? await Task.sleep(for: patience)
                let late = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == waiting }) else { return nil }
                    state.permits -= 1
                    return state.waiters.remove(at: index).continuation
                }
                late?.resume()
            }
        }
    }

    public func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.permits += 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
