import Foundation
import Testing

/// `rolo serve` and `rolo user` as an operator runs them: the built binary, a temp database.
@Suite struct ServeCommandTests {
    @Test func userAddedFromStdinCanPropfindAgainstServe() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let add = try await RoloBinary.run(["user", "add", "carol", "--password-stdin", "--create-database", "--database", database],
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
        #expect(serve.startLine?.username == "admin")
        let password = try #require(serve.startLine?.password)
        #expect(serve.stderr.current.contains("Created user admin with password: \(password)"))
        let status = try await propfindStatus(port: port, path: "/dav/addressbooks/admin/", user: "admin",
                                              password: password)
        #expect(status == 207)
        #expect(await serve.terminate() == 0)

        let again = try ServeProcess(database: database)
        _ = try await again.waitUntilListening()
        #expect(again.startLine?.password == nil)
        #expect(!again.stdout.current.contains("password"))
        #expect(await again.terminate() == 0)
    }

    @Test func serveReadsPortAndDatabaseFromTheEnvironment() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = try ServeProcess(arguments: ["serve"], environment: [
            "ROLO_PORT": "0", "ROLO_DATABASE": database, "ROLO_LOG_LEVEL": "warning"])
        let port = try await serve.waitUntilListening()
        #expect(port > 0)
        #expect(serve.startLine?.url == "http://127.0.0.1:\(port)/dav/")
        #expect(FileManager.default.fileExists(atPath: database))
        #expect(await serve.terminate() == 0)
    }

    @Test func aFixedPortPrintsTheHumanLineOnStdoutAndNoJSON() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A port free a moment ago may be taken meanwhile (the suite's own clients take
        // ephemeral ports all the time): then `serve` exits with "port N is in use",
        // and another port is tried.
        for attempt in 1...5 {
            let probe = try await freeLoopbackPort()
            let serve = try ServeProcess(arguments: ["serve", "--port", "\(probe)", "--database", database,
                                                     "--log-level", "warning"])
            let line = await serve.stdout.waitFor { $0.contains("listening on") ? $0 : nil }
            if line == nil, attempt < 5,
               await serve.stderr.waitFor(timeout: .seconds(5), { $0.contains("port \(probe) is in use") ? true : nil }) == true {
                _ = await serve.terminate()
                continue
            }
            #expect(line?.hasPrefix("Rolo listening on http://127.0.0.1:\(probe)/dav/") == true,
                    "stdout: \(line ?? "") stderr: \(serve.stderr.current)")
            #expect(await serve.terminate() == 0)
            return
        }
    }
}

/// A port that was free a moment ago (bound to 0 and released).
func freeLoopbackPort() async throws -> Int {
    let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socketFD) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    try withUnsafeMutablePointer(to: &address) { pointer in
        try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            guard bind(socketFD, raw, length) == 0, getsockname(socketFD, raw, &length) == 0 else {
                throw ServeError(message: "cannot bind a probe socket")
            }
        }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}
