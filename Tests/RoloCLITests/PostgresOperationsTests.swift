import Foundation
import PostgresTestSupport
import Testing

/// What an operator of a PostgreSQL-backed Rolo watches and keeps (issue 34): the database's
/// size in `/metrics`, and `rolo backup` of a `postgresql://` URL read back by `rolo migrate`
/// into either back end, with the built binary and a real server.
@Suite struct PostgresOperationsTests {
    static let auth = ["-u", "olga:olga-password"]
    static let syncBody = """
        <?xml version="1.0" encoding="utf-8"?>
        <d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:sync-level>1</d:sync-level>\
        <d:prop><d:getetag/></d:prop></d:sync-collection>
        """

    static func card(_ uid: String, _ fn: String) -> String {
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(fn)\r\nEND:VCARD\r\n"
    }

    static func book(_ port: Int) -> String { "http://127.0.0.1:\(port)/dav/addressbooks/olga/default/" }

    @Test func metricsReportTheSizeOfThePostgreSQLDatabase() async throws {
        let database = try await TestDatabase.create()
        defer { Task { await database.drop() } }
        let add = try await RoloBinary.run(["user", "add", "olga", "--password-stdin", "--database", database.url],
                                           stdin: "olga-password\n")
        #expect(add.status == 0, "\(add.stderr)")
        let serve = try ServeProcess(database: database.url)
        let port = try await serve.waitUntilListening()
        #expect(try await curlStatus(Self.auth + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary",
                                                  Self.card("m-1", "Metric Card"), Self.book(port) + "m-1.vcf"]) == 201)
        let text = try await curl(["http://127.0.0.1:\(port)/metrics"])
        let size = text.split(separator: "\n").first { $0.hasPrefix("rolo_database_size_bytes ") }
            .flatMap { Double($0.split(separator: " ")[1]) }
        // An empty PostgreSQL database alone takes several MB: a size that small is no accident.
        #expect((size ?? 0) > 1_000_000, "\(text)")
        #expect(text.contains("rolo_cards 1"), "\(text)")
        #expect(await serve.terminate() == 0)
    }

    /// A backup of a PostgreSQL database taken while the server runs, restored by `rolo
    /// migrate` into a fresh SQLite file and into a fresh PostgreSQL database: each serves
    /// the same cards with the same ETags and the same sync token, and an old client's token
    /// goes on syncing.
    @Test func aBackupOfPostgreSQLRestoresIntoEitherBackEndWithEveryETagAndSyncToken() async throws {
        let source = try await TestDatabase.create()
        let restored = try await TestDatabase.create()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-pg-backup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: folder)
            Task { await source.drop(); await restored.drop() }
        }
        let add = try await RoloBinary.run(["user", "add", "olga", "--password-stdin", "--database", source.url],
                                           stdin: "olga-password\n")
        #expect(add.status == 0, "\(add.stderr)")
        let serve = try ServeProcess(database: source.url)
        let port = try await serve.waitUntilListening()
        let put = Self.auth + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary"]
        for index in 1...5 {
            #expect(try await curlStatus(put + [Self.card("b-\(index)", "Backup \(index)"), Self.book(port) + "b-\(index).vcf"]) == 201)
        }
        #expect(try await curlStatus(put + [Self.card("b-2", "Backup Two"), Self.book(port) + "b-2.vcf"]) == 204)
        #expect(try await curlStatus(Self.auth + ["-X", "DELETE", Self.book(port) + "b-4.vcf"]) == 204)
        let original = try await Self.state(port: port)
        #expect(original.etags.count == 4 && original.token != nil, "\(original)")

        let copy = folder.appendingPathComponent("backup.sqlite").path
        let backup = try await RoloBinary.run(["backup", copy, "--database", source.url])
        #expect(backup.status == 0, "\(backup.stdout) \(backup.stderr)")
        #expect(backup.stdout.contains("1 users, 1 collections, 4 cards and files"), "\(backup.stdout)")
        #expect(backup.stderr.contains("4/4"), "progress on stderr: \(backup.stderr)")
        #expect(await serve.terminate() == 0)

        let intoSQLite = folder.appendingPathComponent("restored.sqlite").path
        let toSQLite = try await RoloBinary.run(["migrate", "--from", copy, "--to", intoSQLite])
        #expect(toSQLite.status == 0, "\(toSQLite.stderr)")
        let toPostgres = try await RoloBinary.run(["migrate", "--from", copy, "--to", restored.url])
        #expect(toPostgres.status == 0, "\(toPostgres.stderr)")
        let exported = try await RoloBinary.run(["export", "olga", "default", "--database", source.url])
        for target in [intoSQLite, restored.url] {
            let again = try ServeProcess(database: target)
            let state = try await Self.state(port: try await again.waitUntilListening())
            #expect(state == original, "\(target)")
            #expect(await again.terminate() == 0)
            let export = try await RoloBinary.run(["export", "olga", "default", "--database", target])
            #expect(export.status == 0 && export.stdout == exported.stdout, "\(target): \(export.stderr)")
        }
    }

    struct BookState: Equatable, CustomStringConvertible {
        /// Each card's href and ETag, sorted by href.
        var etags: [String]
        var token: String?
        var description: String { "\(etags) token \(token ?? "none")" }
    }

    /// The book as a client's initial sync sees it.
    static func state(port: Int) async throws -> BookState {
        let answer = try await curl(auth + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary", syncBody,
                                            book(port)])
        func inner(_ text: Substring, _ tag: String) -> String? {
            guard let open = text.range(of: "<d:\(tag)>"),
                  let close = text.range(of: "</d:\(tag)>", range: open.upperBound..<text.endIndex) else { return nil }
            return String(text[open.upperBound..<close.lowerBound])
        }
        let etags = answer.components(separatedBy: "<d:response>").dropFirst().compactMap { response -> String? in
            let text = Substring(response)
            guard let href = inner(text, "href"), let etag = inner(text, "getetag") else { return nil }
            return href + " " + etag
        }
        return BookState(etags: etags.sorted(), token: inner(Substring(answer), "sync-token"))
    }
}
