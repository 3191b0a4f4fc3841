import Foundation
import PostgresTestSupport
import Testing

/// The organisation's directory (issue 32) as an operator and a phone meet it, on SQLite and
/// PostgreSQL: the built binary's `rolo directory sync` and `rolo user set --directory-hidden`,
/// and `rolo serve --directory all` answering real HTTP.
@Suite struct DirectoryTests {
    enum Backend: String, CaseIterable, Sendable { case sqlite, postgres }

    static let mount = "directory~rolo"
    static let syncBody = """
        <?xml version="1.0" encoding="utf-8"?>
        <d:sync-collection xmlns:d="DAV:"><d:sync-token>TOKEN</d:sync-token><d:sync-level>1</d:sync-level>\
        <d:prop><d:getetag/></d:prop></d:sync-collection>
        """

    @Test(arguments: Backend.allCases)
    func theDirectoryIsAReadOnlyBookInEveryHomeThatMovesOneChangeAtATime(_ backend: Backend) async throws {
        switch backend {
        case .sqlite:
            let (folder, path) = try temporaryDatabase()
            defer { try? FileManager.default.removeItem(at: folder) }
            try await exercise(database: path, create: true)
            // `rolo migrate` copies the entries with the book: on PostgreSQL the same
            // rebuild finds nothing to do (a lost opt-out would add that user's card back).
            let target = try await TestDatabase.create()
            do {
                let migrated = try await RoloBinary.run(["migrate", "--from", path, "--to", target.url])
                #expect(migrated.status == 0, "\(migrated.stderr)")
                let sync = try await RoloBinary.run(["directory", "sync", "--directory", "all", "--database", target.url])
                #expect(sync.status == 0 && sync.stdout == "Directory unchanged.\n", "\(sync.stdout) \(sync.stderr)")
            } catch {
                await target.drop()
                throw error
            }
            await target.drop()
        case .postgres:
            let database = try await TestDatabase.create()
            do {
                try await exercise(database: database.url, create: false)
            } catch {
                await database.drop()
                throw error
            }
            await database.drop()
        }
    }

    static func responses(_ multistatus: String) -> Int { multistatus.components(separatedBy: "<d:response>").count - 1 }

    func exercise(database: String, create: Bool) async throws {
        let db = ["--database", database]
        for (index, name) in ["alice", "bob", "carol", "dave"].enumerated() {
            let add = try await RoloBinary.run(["user", "add", name, "--password-stdin"] + (create && index == 0 ? ["--create-database"] : []) + db,
                                               stdin: "\(name)-secret\n")
            #expect(add.status == 0, "\(add.stderr)")
        }
        #expect(try await RoloBinary.run(["user", "set", "carol", "--display-name", "Carol Chen", "--email", "carol@example.org"] + db).status == 0)
        let hide = try await RoloBinary.run(["user", "set", "dave", "--directory-hidden", "true"] + db)
        #expect(hide.status == 0 && hide.stdout.contains("directory hidden: true"), "\(hide.stdout) \(hide.stderr)")

        // Off (the default): nothing is made.
        let off = try await RoloBinary.run(["directory", "sync"] + db)
        #expect(off.status == 0 && off.stdout == "Directory unchanged.\n", "\(off.stdout) \(off.stderr)")
        let bad = try await RoloBinary.run(["directory", "sync", "--directory", "everyone"] + db)
        #expect(bad.status == 1 && bad.stderr.contains("directory must be off, all, groups or gateway (got everyone)"), "\(bad.stderr)")

        let badField = try await RoloBinary.run(["directory", "sync", "--directory", "all", "--directory-field", "fax"] + db)
        #expect(badField.status == 1 && badField.stderr.contains("directory_fields names an unknown field \"fax\"")
                && badField.stderr.contains("--directory-field"), "\(badField.stderr)")
        let badServe = try await RoloBinary.run(["serve", "--directory", "all"] + db, environment: ["ROLO_DIRECTORY_FIELDS": "name,fax"])
        #expect(badServe.status == 1 && badServe.stderr.contains("directory_fields names an unknown field \"fax\"")
                && badServe.stderr.contains("ROLO_DIRECTORY_FIELDS"), "\(badServe.stderr)")
        let badOptOut = try await RoloBinary.run(["serve", "--directory", "all", "--directory-opt-out", "never"] + db)
        #expect(badOptOut.status == 1 && badOptOut.stderr.contains("directory_opt_out must be on or off (got never)"),
                "\(badOptOut.stderr)")

        let first = try await RoloBinary.run(["directory", "sync", "--directory", "all"] + db)
        #expect(first.status == 0, "\(first.stderr)")
        for line in ["added alice", "added bob", "added carol", "mounted for alice", "mounted for dave"] {
            #expect(first.stdout.contains(line + "\n"), "\(line): \(first.stdout)")
        }
        #expect(!first.stdout.contains("added dave"), "\(first.stdout)")
        let again = try await RoloBinary.run(["directory", "sync"] + db, environment: ["ROLO_DIRECTORY": "all"])
        #expect(again.status == 0 && again.stdout == "Directory unchanged.\n", "\(again.stdout) \(again.stderr)")

        let serve = try ServeProcess(database: database, extra: ["--directory", "all"])
        let port = try await serve.waitUntilListening()
        let base = "http://127.0.0.1:\(port)/dav/addressbooks"
        let bob = ["-u", "bob:bob-secret"], alice = ["-u", "alice:alice-secret"]
        let book = "\(base)/bob/\(Self.mount)/"

        // In each member's home, after the member's own books, read-only.
        let home = try await curl(bob + ["-X", "PROPFIND", "-H", "Depth: 1", "--data-binary", """
            <?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:displayname/><d:current-user-privilege-set/></d:prop></d:propfind>
            """, "\(base)/bob/"])
        let own = try #require(home.range(of: "/dav/addressbooks/bob/default/"), "\(home)")
        let mounted = try #require(home.range(of: "/dav/addressbooks/bob/\(Self.mount)/"), "\(home)")
        #expect(own.lowerBound < mounted.lowerBound)
        let entry = String(home[mounted.lowerBound...].prefix { _ in true })
        let privileges = String(entry[..<(entry.range(of: "</d:response>")?.lowerBound ?? entry.endIndex)])
        #expect(privileges.contains("<d:read/>") && !privileges.contains("<d:write") && !privileges.contains("<d:bind/>")
                && !privileges.contains("<d:unbind/>") && !privileges.contains("<d:all/>"), "\(privileges)")
        #expect(privileges.contains("<d:displayname>Directory</d:displayname>"), "\(privileges)")

        // The cards: Carol's entry as her account gives it; Dave opted out.
        let carol = try await curl(bob + [book + "carol.vcf"])
        #expect(carol.contains("FN:Carol Chen") && carol.contains("carol@example.org") && carol.contains("UID:rolo-directory-carol"),
                "\(carol)")
        #expect(try await curlStatus(bob + [book + "dave.vcf"]) == 404)

        // Every write is refused with DAV:need-privileges, and nothing changes.
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:x-1\r\nFN:Intruder\r\nEND:VCARD\r\n"
        let writes: [[String]] = [
            ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary", card, book + "x-1.vcf"],
            ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary", card, book + "carol.vcf"],
            ["-X", "DELETE", book + "carol.vcf"],
            ["-X", "MOVE", "-H", "Destination: \(base)/bob/default/carol.vcf", book + "carol.vcf"],
            ["-X", "PROPPATCH", "--data-binary", """
                <?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:displayname>Mine</d:displayname>\
                </d:prop></d:set></d:propertyupdate>
                """, book],
            ["-X", "PROPPATCH", "--data-binary", """
                <?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><x:color xmlns:x="urn:x">red</x:color>\
                </d:prop></d:set></d:propertyupdate>
                """, book + "carol.vcf"],
            ["-X", "DELETE", book],
        ]
        for write in writes {
            let answer = try await curl(bob + ["-w", "\n%{http_code}"] + write)
            #expect(answer.hasSuffix("\n403") && answer.contains("need-privileges"), "\(write): \(answer)")
        }
        #expect(try await curl(bob + [book + "carol.vcf"]) == carol)
        #expect(try await curlStatus(bob + [book + "x-1.vcf"]) == 404)
        #expect(try await curlStatus(bob + ["\(base)/bob/default/carol.vcf"]) == 404)

        // Sync: one changed entry is one change; a rebuild that changes nothing moves no token.
        let initial = try await curl(bob + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary",
                                            Self.syncBody.replacingOccurrences(of: "TOKEN", with: ""), book])
        #expect(Self.responses(initial) == 3, "\(initial)")
        let token = try #require(PostgresServeTests.syncToken(in: initial), "\(initial)")
        #expect(try await RoloBinary.run(["user", "set", "carol", "--display-name", "Carol Chen-Li"] + db).status == 0)
        let change = try await RoloBinary.run(["directory", "sync", "--directory", "all"] + db)
        #expect(change.status == 0 && change.stdout.hasPrefix("changed carol\nDirectory rebuilt: 0 added, 1 changed"), "\(change.stdout)")
        let delta = try await curl(bob + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary",
                                          Self.syncBody.replacingOccurrences(of: "TOKEN", with: token), book])
        #expect(Self.responses(delta) == 1 && delta.contains("/\(Self.mount)/carol.vcf"), "\(delta)")
        let token2 = try #require(PostgresServeTests.syncToken(in: delta))
        #expect(token2 != token)
        let noop = try await RoloBinary.run(["directory", "sync", "--directory", "all"] + db)
        #expect(noop.stdout == "Directory unchanged.\n", "\(noop.stdout)")
        let still = try await curl(alice + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary",
                                            Self.syncBody.replacingOccurrences(of: "TOKEN", with: token2),
                                            "\(base)/alice/\(Self.mount)/"])
        #expect(Self.responses(still) == 0 && PostgresServeTests.syncToken(in: still) == token2, "\(still)")

        // An opted-out user is gone from every answer: GET, multiget, query, sync, export.
        let optOut = try await RoloBinary.run(["user", "set", "carol", "--directory-hidden", "true"] + db)
        #expect(optOut.status == 0)
        let removal = try await RoloBinary.run(["directory", "sync", "--directory", "all"] + db)
        #expect(removal.stdout.hasPrefix("removed carol\n"), "\(removal.stdout)")
        #expect(try await curlStatus(bob + [book + "carol.vcf"]) == 404)
        let multiget = try await curl(bob + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary", """
            <?xml version="1.0"?><c:addressbook-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
            <d:prop><d:getetag/><c:address-data/></d:prop><d:href>/dav/addressbooks/bob/\(Self.mount)/carol.vcf</d:href>\
            <d:href>/dav/addressbooks/bob/\(Self.mount)/alice.vcf</d:href></c:addressbook-multiget>
            """, book])
        #expect(multiget.contains("FN:alice") && !multiget.contains("Carol") && !multiget.contains("carol@"), "\(multiget)")
        let query = try await curl(bob + ["-X", "REPORT", "-H", "Depth: 1", "-H", "Content-Type: application/xml", "--data-binary", """
            <?xml version="1.0"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
            <d:prop><c:address-data/></d:prop><c:filter test="anyof"><c:prop-filter name="FN">\
            <c:text-match match-type="contains">a</c:text-match></c:prop-filter></c:filter></c:addressbook-query>
            """, book])
        #expect(query.contains("FN:alice") && !query.contains("Carol") && !query.contains("FN:dave"), "\(query)")
        let removedSync = try await curl(bob + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary",
                                                Self.syncBody.replacingOccurrences(of: "TOKEN", with: token2), book])
        #expect(Self.responses(removedSync) == 1 && removedSync.contains("carol.vcf") && removedSync.contains("404"), "\(removedSync)")
        let fresh = try await curl(bob + ["-X", "REPORT", "-H", "Content-Type: application/xml", "--data-binary",
                                          Self.syncBody.replacingOccurrences(of: "TOKEN", with: "")
                                            .replacingOccurrences(of: "<d:getetag/>", with: "<d:getetag/><c:address-data xmlns:c=\"urn:ietf:params:xml:ns:carddav\"/>"),
                                          book])
        #expect(Self.responses(fresh) == 2 && !fresh.contains("Carol") && !fresh.contains("carol"), "\(fresh)")
        let export = try await RoloBinary.run(["export", "rolo", "directory"] + db)
        #expect(export.status == 0 && export.stdout.contains("FN:alice") && !export.stdout.contains("Carol")
                && !export.stdout.contains("FN:dave"), "\(export.stdout) \(export.stderr)")
        _ = await serve.terminate()

        // The access history counts directory reads like any other: `rolo access rolo` shows
        // the admin who downloaded the whole directory (the server wrote it as it stopped).
        let access = try await RoloBinary.run(["access", "rolo", "--json"] + db)
        #expect(access.status == 0, "\(access.stderr)")
        let records = try #require(try JSONSerialization.jsonObject(with: Data(access.stdout.utf8)) as? [[String: Any]])
        #expect(records.contains { $0["user"] as? String == "bob" && $0["book"] as? String == "directory"
                    && $0["full_download"] as? Bool == true }, "\(access.stdout)")
    }
}
