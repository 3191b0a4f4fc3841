import Foundation
import Testing

/// `rolo serve`'s first start through the built binary: the `admin` it creates is an
/// administrator and is created only once the port is bound; what is printed leads to the
/// web UI; an address other hosts reach over plain HTTP is warned about.
@Suite struct FirstStartTests {
    @Test func aBusyPortIsNamedAndCreatesNoUser() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let holder = try ServeProcess(arguments: ["serve", "--ephemeral", "--log-level", "warning"])
        let busy = try await holder.waitUntilListening()

        let refused = try await RoloBinary.run(["serve", "--port", "\(busy)", "--database", database, "--log-level", "warning"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("port \(busy) is in use; choose another with --port"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("bind(descriptor"), "\(refused.stderr)")
        #expect(!refused.stdout.contains("password"))
        #expect(await holder.terminate() == 0)
        // No admin whose password nobody saw: the next start creates it and prints it.
        #expect(try await RoloBinary.run(["user", "list", "--database", database]).stdout == "")
        let serve = try ServeProcess(database: database)
        _ = try await serve.waitUntilListening()
        #expect(serve.startLine?.password != nil)
        #expect(await serve.terminate() == 0)
    }

    @Test func theFirstAdminIsAnAdministratorAndTheWebUIAddressIsPrinted() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = try ServeProcess(database: database)
        let port = try await serve.waitUntilListening()
        let password = try #require(serve.startLine?.password)
        let web = "http://127.0.0.1:\(port)/web/"
        // stderr is another pipe: its lines, written before the start line, may arrive after it.
        let printed = await serve.stderr.waitFor { $0.contains("Write it down") ? $0 : nil } ?? serve.stderr.current
        #expect(printed.contains("Rolo listening on http://127.0.0.1:\(port)/dav/\nWeb UI at \(web)\n"), "\(printed)")
        #expect(printed.contains("Created user admin with password: \(password)\nadmin is an administrator (the admin page: \(web)admin)."),
                "\(printed)")
        #expect(serve.startLineText.contains("\"web_url\":\"\(web)\""))
        #expect(!printed.contains("passwords travel in clear"))
        #expect(await serve.terminate() == 0)

        let account = try await RoloBinary.run(["user", "set", "admin", "--email", "admin@example.org", "--database", database])
        #expect(account.stdout.contains("admin: true"), "\(account.stdout) \(account.stderr)")
    }

    @Test func aNonLoopbackHostWarnsThatPasswordsTravelInClear() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = try ServeProcess(database: database, extra: ["--host", "0.0.0.0"])
        _ = try await serve.waitUntilListening()
        #expect(await serve.terminate() == 0)
        let printed = serve.stderr.current
        #expect(printed.contains("Listening on 0.0.0.0 over plain HTTP: passwords travel in clear"), "\(printed)")
        #expect(printed.contains("deploy/nginx-rolo.conf"))
        #expect(printed.contains("Docs/operations.md"))
    }
}
