import Foundation
import RoloSQLite
import RoloStore
import Testing

/// `rolo feed add|list|revoke` (issue 33) on a database, and the URL it prints read from a
/// running `rolo serve` without a login.
@Suite struct FeedCommandTests {
    private static func expectFailure(_ arguments: [String], stderrContains text: String,
                                      sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let outcome = try await RoloBinary.run(arguments)
        #expect(outcome.status != 0, "\(arguments) succeeded: \(outcome.stdout)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.contains(text), "\(arguments): \(outcome.stderr)", sourceLocation: sourceLocation)
    }

    @Test func aFeedsURLIsPrintedLastServedWithoutALoginListedWithoutItAndRevoked() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        for user in ["alice", "bob"] {
            #expect(try await RoloBinary.run(["user", "add", user, "--password-stdin", "--create-database"] + db, stdin: "pw-\(user)-secret\n").status == 0)
        }
        let server = try ServeProcess(database: database)
        do {
            try await Self.check(db, port: try await server.waitUntilListening())
        } catch {
            _ = await server.terminate()
            throw error
        }
        #expect(await server.terminate() == 0)
    }

    private static func check(_ db: [String], port: Int) async throws {
        let base = "http://127.0.0.1:\(port)"

        let add = try await RoloBinary.run(["feed", "add", "alice", "birthdays", "--public-url", base + "/"] + db)
        #expect(add.status == 0, "\(add.stderr)")
        let url = String(add.stdout.split(separator: "\n").last ?? "")
        #expect(url.wholeMatch(of: /http:\/\/127\.0\.0\.1:\d+\/feeds\/[A-Za-z0-9_-]{43}/) != nil, "\(add.stdout)")
        #expect(try await curlStatus([url]) == 200)
        #expect(try await curl([url]).hasPrefix("BEGIN:VCALENDAR"))

        // ROLO_PUBLIC_URL as serve takes it; without any, the path and a word about it.
        let fromEnv = try await RoloBinary.run(["feed", "add", "alice", "yealink", "--book", "default"] + db,
                                               environment: ["ROLO_PUBLIC_URL": base])
        #expect(fromEnv.stdout.split(separator: "\n").last?.hasPrefix(base + "/feeds/") == true, "\(fromEnv.stdout)")
        // public_url from the serve config file given with --config.
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-feed-\(UUID().uuidString).toml").path
        try "public_url = \"\(base)/carddav/\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let fromConfig = try await RoloBinary.run(["feed", "add", "alice", "fritzbox", "--config", config] + db,
                                                  environment: ["ROLO_PUBLIC_URL": ""])
        #expect(fromConfig.stdout.split(separator: "\n").last?.hasPrefix(base + "/carddav/feeds/") == true, "\(fromConfig.stdout)")
        let bare = try await RoloBinary.run(["feed", "add", "alice", "snom"] + db, environment: ["ROLO_PUBLIC_URL": ""])
        #expect(bare.status == 0, "\(bare.stderr)")
        let path = String(bare.stdout.split(separator: "\n").last ?? "")
        #expect(path.hasPrefix("/feeds/") && bare.stdout.contains("No public URL"), "\(bare.stdout)")
        #expect(try await curlStatus([base + path]) == 200)

        // Bad input: a clear error, nothing made.
        try await expectFailure(["feed", "add", "alice", "calendar"] + db, stderrContains: "Unknown feed kind calendar")
        try await expectFailure(["feed", "add", "alice", "yealink", "--book", "nosuch"] + db,
                                     stderrContains: "Cannot create the feed: alice has no address book nosuch.")
        try await expectFailure(["feed", "add", "bob", "yealink", "--book", "default~alice"] + db,
                                     stderrContains: "bob has no address book default~alice.")
        try await expectFailure(["feed", "add", "nobody", "snom"] + db, stderrContains: "No user nobody.")

        let list = try await RoloBinary.run(["feed", "list", "alice"] + db)
        #expect(list.status == 0, "\(list.stderr)")
        let rows = list.stdout.split(separator: "\n").map(String.init)
        #expect(rows.count == 5, "\(list.stdout)")
        #expect(rows.first?.contains("KIND") == true && rows.first?.contains("LAST READ") == true, "\(list.stdout)")
        #expect(rows[1].contains("birthdays") && rows[1].contains("all books") && !rows[1].contains("never"), "\(list.stdout)")
        #expect(rows[2].contains("yealink") && rows[2].contains("default") && rows[2].contains("never"), "\(list.stdout)")
        #expect(rows[3].contains("fritzbox") && rows[4].contains("snom"), "\(list.stdout)")
        #expect(!list.stdout.contains("/feeds/") && !list.stdout.contains(String(url.suffix(43))))
        #expect(try await RoloBinary.run(["feed", "list", "bob"] + db).stdout == "bob has no feeds.\n")

        let id = try #require(rows[1].split(separator: " ").first.map(String.init))
        try await expectFailure(["feed", "revoke", "bob", id] + db, stderrContains: "bob has no feed \(id).")
        #expect(try await curlStatus([url]) == 200)
        let revoke = try await RoloBinary.run(["feed", "revoke", "alice", id] + db)
        #expect(revoke.status == 0, "\(revoke.stderr)")
        #expect(try await curlStatus([url]) == 404)
        #expect(try await RoloBinary.run(["feed", "list", "alice"] + db).stdout.split(separator: "\n").count == 4)
    }
}
