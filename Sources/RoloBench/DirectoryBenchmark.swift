import CardIndexing
import Foundation
import Logging
import RoloServer
import RoloSQLite
import RoloStore

/// `RoloBench directory [PEOPLE]` (issue 32): a directory of PEOPLE users (default 10,000),
/// each with an entry (title, department, two phones), served by a real server on
/// 127.0.0.1 with `directory = all`. Prints the first rebuild, one member's initial
/// sync-collection (every card's address-data) and incremental sync after one entry
/// changed, the rebuild that made that change, a rebuild that changes nothing, and
/// addressbook-queries through the directory (a narrow one and one cut at the server's limit).
func runDirectoryBenchmark(_ arguments: [String]) async {
    let people = arguments.first.flatMap(Int.init) ?? 10_000
    func seconds(since start: ContinuousClock.Instant) -> Double { (ContinuousClock.now - start).inSeconds }
    do {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = ServerConfiguration(port: 0, databasePath: folder.appendingPathComponent("rolo.sqlite").path,
                                                logLevel: .error)
        configuration.directory = .all
        let store = try SQLiteStore(path: configuration.databasePath, bcryptCost: 4)
        defer { try? store.close() }
        var start = ContinuousClock.now
        for index in 0..<people {
            let name = "user\(index)"
            try await store.createUser(name: name, password: "bench-password")
            try await store.setDirectoryEntry(user: name, DirectoryEntry(
                displayName: "Person \(index) Surname\(index % 977)", email: "\(name)@example.org",
                phones: ["+49 30 \(100_000 + index)", "+49 170 \(200_000 + index)"], title: "Title \(index % 50)",
                department: "Department \(index % 40)", organization: "Example Ltd"))
        }
        print(String(format: "%d users with entries made in %.1f s", people, seconds(since: start)))
        start = ContinuousClock.now
        let first = try await DirectorySync.run(store: store, mode: .all)
        print(String(format: "first rebuild: %d cards, %d mounts in %.2f s", first.added.count, first.mounted.count,
                     seconds(since: start)))

        var logger = Logger(label: "rolo-bench")
        logger.logLevel = .error
        let running = try await RoloServer.make(configuration: configuration, store: store, logger: logger).start()
        let book = "http://127.0.0.1:\(running.port)/dav/addressbooks/user0/\(DirectoryRules.mountName)/"
        func report(_ body: String, depth: Bool = false) async throws -> (text: String, seconds: Double) {
            let start = ContinuousClock.now
            let text = try await curlText(["-s", "-u", "user0:bench-password", "-X", "REPORT", "-H", "Content-Type: application/xml"]
                                          + (depth ? ["-H", "Depth: 1"] : []) + ["--data-binary", body, book])
            return (text, seconds(since: start))
        }
        func sync(_ token: String) -> String {
            """
            <?xml version="1.0"?><d:sync-collection xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
            <d:sync-token>\(token)</d:sync-token><d:sync-level>1</d:sync-level>\
            <d:prop><d:getetag/><c:address-data/></d:prop></d:sync-collection>
            """
        }
        func token(_ text: String) -> String {
            guard let start = text.range(of: "<d:sync-token>"), let end = text.range(of: "</d:sync-token>") else { return "" }
            return String(text[start.upperBound..<end.lowerBound])
        }
        func count(_ text: String) -> Int { text.components(separatedBy: "<d:response>").count - 1 }

        let initial = try await report(sync(""))
        print(String(format: "initial sync of one member: %d cards, %.1f MB in %.2f s", count(initial.text),
                     Double(initial.text.utf8.count) / 1e6, initial.seconds))
        var entry = try await store.directoryEntry(user: "user42")
        entry.title = "Changed title"
        try await store.setDirectoryEntry(user: "user42", entry)
        start = ContinuousClock.now
        let change = try await DirectorySync.run(store: store, mode: .all)
        print(String(format: "rebuild with one change: %d changed in %.2f s", change.changed.count, seconds(since: start)))
        start = ContinuousClock.now
        let noop = try await DirectorySync.run(store: store, mode: .all)
        print(String(format: "rebuild with no change: %@ in %.2f s", noop.isEmpty ? "nothing written" : "WROTE", seconds(since: start)))
        // A save on "My card" rebuilds the saver's card alone.
        entry.title = "Changed title again"
        try await store.setDirectoryEntry(user: "user42", entry)
        start = ContinuousClock.now
        let saved = try await DirectorySync.run(store: store, mode: .all, only: "user42")
        print(String(format: "one user's card after a save on My card: %d changed in %.3f s", saved.changed.count, seconds(since: start)))
        let delta = try await report(sync(token(initial.text)))
        print(String(format: "incremental sync of one member: %d card, %d bytes in %.3f s", count(delta.text),
                     delta.text.utf8.count, delta.seconds))
        func query(_ text: String) -> String {
            """
            <?xml version="1.0"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
            <d:prop><d:getetag/><c:address-data/></d:prop><c:filter><c:prop-filter name="FN">\
            <c:text-match match-type="contains">\(text)</c:text-match></c:prop-filter></c:filter></c:addressbook-query>
            """
        }
        for needle in ["Surname976", "Person 4242 ", "Person"] {
            _ = try await report(query(needle), depth: true)
            let timed = try await report(query(needle), depth: true)
            print(String(format: "gateway query FN contains \"%@\": %d cards%@ in %.3f s", needle, count(timed.text) - 
                (timed.text.contains("number-of-matches-within-limits") ? 1 : 0),
                timed.text.contains("number-of-matches-within-limits") ? " (cut at the limit, number-of-matches-within-limits)" : "",
                timed.seconds))
        }
        try await running.shutdown()
    } catch {
        FileHandle.standardError.write(Data("directory benchmark failed: \(error)\n".utf8))
        exit(1)
    }
}

/// `curl` with `arguments`; its standard output as text.
private func curlText(_ arguments: [String]) async throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = await Task.detached { pipe.fileHandleForReading.readDataToEndOfFile() }.value
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}
