import Foundation
import PostgresTestSupport
import Testing

/// The login cache of a running `rolo serve` against account changes made by another
/// process (the CLI, another server on the same PostgreSQL database): each takes effect on
/// the very next request, cached login or not (issue 29).
@Suite struct LoginCacheAcrossProcessesTests {
    static let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:lc-1\r\nFN:Lena Cache\r\nEND:VCARD\r\n"

    @Test func accountChangesByTheCLIEndACachedLoginOnTheServersNextRequest() async throws {
        let (folder, path) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The server first: it makes the database (the CLI then changes an existing one).
        let serve = try ServeProcess(database: path)
        let port = try await serve.waitUntilListening()
        do {
            try await changeAccounts(port: port, database: path)
        } catch {
            _ = await serve.terminate()
            throw error
        }
        #expect(await serve.terminate() == 0)
    }

    private func changeAccounts(port: Int, database path: String) async throws {
        let card = "http://127.0.0.1:\(port)/dav/addressbooks/dana/default/lc-1.vcf"

        try await Self.rolo(["user", "add", "dana", "--password-stdin", "--database", path], stdin: "first-pass\n")
        #expect(try await curlStatus(["-u", "dana:first-pass", "-X", "PUT", "-H", "Content-Type: text/vcard",
                                      "--data-binary", Self.card, card]) == 201)
        // Twice: the second GET is the cached login's (on SQLite, answered before the codec).
        #expect(try await curlStatus(["-u", "dana:first-pass", card]) == 200)
        #expect(try await curlStatus(["-u", "dana:first-pass", card]) == 200)

        try await Self.rolo(["user", "delete", "dana", "--database", path])
        #expect(try await curlStatus(["-u", "dana:first-pass", card]) == 401)
        #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "first-pass") == 401)

        // The same name again, another password: the old one opens nothing.
        try await Self.rolo(["user", "add", "dana", "--password-stdin", "--database", path], stdin: "second-pass\n")
        #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "first-pass") == 401)
        #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "second-pass") == 207)
        #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "second-pass") == 207)

        try await Self.rolo(["user", "passwd", "dana", "--password-stdin", "--database", path], stdin: "third-pass\n")
        #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "second-pass") == 401)
        #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "third-pass") == 207)

        try await Self.rolo(["user", "set", "dana", "--app-passwords-only", "true", "--database", path])
        #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "third-pass") == 401)
        try await Self.rolo(["user", "set", "dana", "--app-passwords-only", "false", "--database", path])
        #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "third-pass") == 207)
    }

    @Test func twoServersOnOnePostgreSQLDatabaseBothRefuseADeletedUsersCachedLogin() async throws {
        let database = try await TestDatabase.create()
        do {
            try await twoServers(url: database.url)
        } catch {
            await database.drop()
            throw error
        }
        await database.drop()
    }

    private func twoServers(url: String) async throws {
        let one = try ServeProcess(database: url, extra: ["--database-pool-size", "2"])
        let port = try await one.waitUntilListening()
        let two = try ServeProcess(database: url, extra: ["--database-pool-size", "2"])
        do {
            try await changeAccounts(ports: [port, try await two.waitUntilListening()], database: url)
        } catch {
            _ = await one.terminate(); _ = await two.terminate()
            throw error
        }
        #expect(await one.terminate() == 0)
        #expect(await two.terminate() == 0)
    }

    private func changeAccounts(ports: [Int], database url: String) async throws {
        try await Self.rolo(["user", "add", "dana", "--password-stdin", "--database", url], stdin: "first-pass\n")
        for port in ports {
            #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "first-pass") == 207)
            #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "first-pass") == 207)
        }
        try await Self.rolo(["user", "delete", "dana", "--database", url])
        try await Self.rolo(["user", "add", "dana", "--password-stdin", "--database", url], stdin: "second-pass\n")
        for port in ports {
            #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "first-pass") == 401)
            #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "second-pass") == 207)
        }
        try await Self.rolo(["user", "passwd", "dana", "--password-stdin", "--database", url], stdin: "third-pass\n")
        for port in ports {
            #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "second-pass") == 401)
        }
    }

    @Test func userAddAndPasswdRefuseAPasswordTheRuleRefusesAndChangeNothing() async throws {
        let (folder, path) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = try ServeProcess(database: path)
        let port = try await serve.waitUntilListening()
        do {
            try await refuseBadPasswords(port: port, database: path)
        } catch {
            _ = await serve.terminate()
            throw error
        }
        #expect(await serve.terminate() == 0)
    }

    private func refuseBadPasswords(port: Int, database path: String) async throws {
        try await Self.rolo(["user", "add", "dana", "--password-stdin", "--database", path], stdin: "long-enough\n")

        let short = try await RoloBinary.run(["user", "add", "erin", "--password-stdin", "--database", path], stdin: "x\n")
        #expect(short.status == 1)
        #expect(short.stderr.contains("a password needs at least 8 characters"), "\(short.stderr)")
        let passwd = try await RoloBinary.run(["user", "passwd", "dana", "--password-stdin", "--database", path],
                                              stdin: "1234567\n")
        #expect(passwd.status == 1)
        #expect(passwd.stderr.contains("a password needs at least 8 characters"), "\(passwd.stderr)")
        let long = try await RoloBinary.run(["user", "passwd", "dana", "--password-stdin", "--database", path],
                                            stdin: String(repeating: "ä", count: 37) + "\n")
        #expect(long.status == 1)
        #expect(long.stderr.contains("at most 72 bytes"), "\(long.stderr)")

        let users = try await RoloBinary.run(["user", "list", "--database", path])
        #expect(users.status == 0 && !users.stdout.contains("erin"), "\(users.stdout)")
        // dana's password is still the first one.
        #expect(try await propfindStatus(port: port, path: "/dav/", user: "dana", password: "long-enough") == 207)
    }

    /// Runs `rolo arguments…` and expects it to succeed.
    static func rolo(_ arguments: [String], stdin: String? = nil) async throws {
        let outcome = try await RoloBinary.run(arguments, stdin: stdin.map { Data($0.utf8) })
        #expect(outcome.status == 0, "rolo \(arguments.joined(separator: " ")): \(outcome.stderr)")
    }
}
