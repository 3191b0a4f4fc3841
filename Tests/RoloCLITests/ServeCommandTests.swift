import Foundation
import Testing

/// `rolo serve` and `rolo user` as an operator runs them: the built binary, a temp database.
@Suite struct ServeCommandTests {
    @Test func userAddedFromStdinCanPropfindAgainstServe() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let add = try await RoloBinary.run(["user", "add", "carol", "--password-stdin", "--database", database],
                                           stdin: "carol-pass\n")
        #expect(add.status == 0, "\(add.stderr)")

        let serve = try ServeProcess(database: database)
        let port = try await serve.waitUntilListening()
        #expect(!serve.stdout.current.contains("Created user admin"))
        let ok = try await propfindStatus(port: port, path: "/dav/addressbooks/carol/", user: "carol", password: "carol-pass")
        let wrong = try await propfindStatus(port: port, path: "/dav/addressbooks/carol/", user: "carol", password: "nope")
        #expect(ok == 207)
        #expect(wrong == 401)
        #expect(await serve.terminate() == 0)
    }

    @Test func serveOnAnEmptyDatabasePrintsAWorkingAdminPasswordOnce() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = try ServeProcess(database: database)
        let port = try await serve.waitUntilListening()
        let password = try #require(serve.stdout.current.firstMatch(of: /password: (\S+)/)?.1)
        let status = try await propfindStatus(port: port, path: "/dav/addressbooks/admin/", user: "admin",
                                              password: String(password))
        #expect(status == 207)
        #expect(await serve.terminate() == 0)

        let again = try ServeProcess(database: database)
        _ = try await again.waitUntilListening()
        #expect(!again.stdout.current.contains("password"))
        #expect(await again.terminate() == 0)
    }

    @Test func serveReadsPortAndDatabaseFromTheEnvironment() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = Process()
        process.executableURL = RoloBinary.url
        process.arguments = ["serve"]
        var environment = ProcessInfo.processInfo.environment
        environment["ROLO_PORT"] = "0"
        environment["ROLO_DATABASE"] = database
        environment["ROLO_LOG_LEVEL"] = "warning"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let text = PipeText(output)
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let listening = await text.waitFor { $0.contains("listening on http://127.0.0.1:") ? true : nil }
        #expect(listening == true)
        #expect(FileManager.default.fileExists(atPath: database))
    }
}
