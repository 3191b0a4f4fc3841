import Foundation
import Testing

/// `rolo serve --ephemeral / --fixtures / --test-api / --deterministic` as a harness in any
/// language drives it: the built binary, the JSON start line, real HTTP with curl.
@Suite struct EphemeralServeTests {
    /// A folder to use as TMPDIR, so a test can see the ephemeral database come and go.
    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-eph-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func fixtureFolder(_ files: [String: String]) throws -> URL {
        let folder = try temporaryFolder()
        for (relative, text) in files {
            let file = folder.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
        return folder
    }

    static let fixtures = [
        "dora/password": "explorer\n",
        "dora/default/two.vcf": "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:one\r\nFN:One\r\nN:;One;;;\r\nEND:VCARD\r\n"
            + "BEGIN:VCARD\r\nVERSION:2.1\r\nN:Two;Person\r\nFN:Person Two\r\nEND:VCARD\r\n",
        "dora/friends/three.vcf": "BEGIN:VCARD\nVERSION:4.0\nUID:three\nFN:Three\nEND:VCARD\n",
    ]

    @Test func ephemeralStartPrintsOneJSONLineFirstAndRemovesItsDatabaseOnExit() async throws {
        let tmp = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let serve = try ServeProcess(arguments: ["serve", "--ephemeral"], environment: ["TMPDIR": tmp.path])
        let port = try await serve.waitUntilListening()
        let start = try #require(serve.startLine)
        #expect(start.url == "http://127.0.0.1:\(port)/dav/")
        #expect(start.username == "admin")
        let password = try #require(start.password)
        #expect(start.testAPIToken == nil)
        #expect(serve.startLineText.hasPrefix("{\"password\":"))
        #expect(!serve.startLineText.contains("test_api_token"))
        #expect(try await propfindStatus(port: port, path: "/dav/addressbooks/admin/", user: "admin", password: password) == 207)
        // Nothing but the JSON line on stdout; the human line went to stderr.
        #expect(serve.stdout.current == serve.startLineText + "\n")
        #expect(serve.stderr.current.contains("Rolo listening on \(start.url)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).contains { $0.hasPrefix("rolo-") })

        #expect(await serve.terminate() == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).filter { $0.hasPrefix("rolo-") } == [])
    }

    @Test func ephemeralRefusesAnExplicitDatabase() async throws {
        let run = try await RoloBinary.run(["serve", "--ephemeral", "--database", "/tmp/x.sqlite"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--ephemeral"))
    }

    @Test func fixturesAreServedWithTheirPasswordAndTheFirstUserIsInTheStartLine() async throws {
        let folder = try Self.fixtureFolder(Self.fixtures)
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = try ServeProcess(arguments: ["serve", "--ephemeral", "--port", "0", "--fixtures", folder.path,
                                                 "--log-level", "warning"])
        let port = try await serve.waitUntilListening()
        #expect(serve.startLine?.username == "dora")
        #expect(serve.startLine?.password == "explorer")
        let listing = try await curl(["-X", "PROPFIND", "-H", "Depth: 1", "-u", "dora:explorer",
                                      "http://127.0.0.1:\(port)/dav/addressbooks/dora/default/"])
        #expect(listing.components(separatedBy: ".vcf</d:href>").count - 1 == 2, "\(listing)")
        #expect(listing.contains("/dav/addressbooks/dora/default/one.vcf"))
        let friend = try await curl(["-u", "dora:explorer", "http://127.0.0.1:\(port)/dav/addressbooks/dora/friends/three.vcf"])
        #expect(friend == "BEGIN:VCARD\nVERSION:4.0\nUID:three\nFN:Three\nEND:VCARD\n")
        #expect(serve.stderr.current.contains("Loaded 3 fixture cards in"))
        #expect(await serve.terminate() == 0)
    }

    @Test func fixturesAddToAPersistentDatabaseAndKeepAnExistingPassword() async throws {
        let folder = try Self.fixtureFolder(Self.fixtures)
        let (databaseFolder, database) = try temporaryDatabase()
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(at: databaseFolder)
        }
        let added = try await RoloBinary.run(["user", "add", "dora", "--password-stdin", "--create-database", "--database", database], stdin: "mine-12345678\n")
        #expect(added.status == 0, "\(added.stderr)")
        let serve = try ServeProcess(database: database, extra: ["--fixtures", folder.path])
        let port = try await serve.waitUntilListening()
        #expect(serve.startLine?.username == "dora")
        #expect(serve.startLine?.password == nil, "dora existed: her password is not this start's to print")
        #expect(try await propfindStatus(port: port, path: "/dav/addressbooks/dora/friends/", user: "dora", password: "mine-12345678") == 207)
        #expect(try await propfindStatus(port: port, path: "/dav/addressbooks/dora/", user: "dora", password: "explorer") == 401)
        #expect(await serve.terminate() == 0)
        #expect(FileManager.default.fileExists(atPath: database), "a persistent database stays")
    }

    @Test func aBrokenFixtureStopsTheStartNamingTheFile() async throws {
        var files = Self.fixtures
        files["dora/friends/broken.vcf"] = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:b\r\nFN:Broken\r\nTEL;TYPE=\"cell:1\r\nEND:VCARD\r\n"
        let folder = try Self.fixtureFolder(files)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("db/rolo.sqlite").path
        let run = try await RoloBinary.run(["serve", "--port", "0", "--database", database, "--fixtures", folder.path])
        #expect(run.status != 0)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains(folder.appendingPathComponent("dora/friends/broken.vcf").path), "\(run.stderr)")
        // Validated before the store was touched: not even the database file exists.
        #expect(!FileManager.default.fileExists(atPath: database))
    }

    @Test func testAPIPutsARandomWorkingTokenInTheStartLine() async throws {
        var tokens: [String] = []
        for _ in 0..<2 {
            let serve = try ServeProcess(arguments: ["serve", "--ephemeral", "--test-api", "--log-level", "warning"])
            try await serve.waitUntilListening()
            let token = try #require(serve.startLine?.testAPIToken)
            tokens.append(token)
            let control = "http://127.0.0.1:\(serve.port)/_rolo/"
            #expect(try await curlStatus(["-H", "Authorization: Bearer \(token)", control]) == 200)
            #expect(try await curlStatus([control]) == 401)
            #expect(await serve.terminate() == 0)
        }
        #expect(tokens.allSatisfy { $0.wholeMatch(of: /[0-9a-f]{32}/) != nil })
        #expect(tokens[0] != tokens[1])
    }

    @Test func twoDeterministicBinariesGiveTheSameListingByteForByte() async throws {
        let folder = try Self.fixtureFolder(Self.fixtures)
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = #"<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:getlastmodified/>"#
            + #"<d:sync-token/></d:prop></d:propfind>"#
        var listings: [String] = []
        for _ in 0..<2 {
            let serve = try ServeProcess(arguments: ["serve", "--ephemeral", "--deterministic", "--fixtures", folder.path,
                                                     "--log-level", "warning"])
            let port = try await serve.waitUntilListening()
            listings.append(try await curl(["-X", "PROPFIND", "-H", "Depth: 1", "-u", "dora:explorer", "--data-binary", body,
                                            "http://127.0.0.1:\(port)/dav/addressbooks/dora/default/"]))
            #expect(await serve.terminate() == 0)
        }
        #expect(listings[0].contains("Wed, 01 Jan 2020 00:00:00 GMT"))
        #expect(listings[0].contains("http://rolo.invalid/sync/"))
        #expect(listings[0] == listings[1])
    }
}
