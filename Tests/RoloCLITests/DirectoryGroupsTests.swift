import Foundation
import LDAPTestSupport
import PostgresTestSupport
import Testing

/// `directory = groups` (issue 32) on SQLite and PostgreSQL, through the built binary and
/// real HTTP against a real slapd: each group in `directory_groups` gets a directory of its
/// members, mounted in their homes alone; a user in no listed group (from LDAP or local)
/// sees none; the settings that cannot work stop the command naming themselves.
@Suite struct DirectoryGroupsTests {
    enum Backend: String, CaseIterable, Sendable { case sqlite, postgres }

    static let users = "cn=rolo-users,ou=groups,\(TestDirectory.baseDN)"
    static let admins = "cn=rolo-admins,ou=groups,\(TestDirectory.baseDN)"

    static func config(_ directory: TestDirectory, in folder: URL,
                       directorySettings: String = "directory = \"groups\"\ndirectory_groups = [\"\(users)\", \"\(admins)\"]") throws -> String {
        let secret = folder.appendingPathComponent("ldap-secret").path
        try "\(TestDirectory.servicePassword)\n".write(toFile: secret, atomically: true, encoding: .utf8)
        return try ServeConfigTests.writeConfig("""
            auth_sources = ["ldap", "local"]
            ldap_url = "\(directory.url)"
            ldap_base_dn = "\(TestDirectory.baseDN)"
            ldap_bind_dn = "\(TestDirectory.serviceDN)"
            ldap_bind_password_file = "\(secret)"
            ldap_user_groups_attribute = "memberOf"
            \(directorySettings)
            """, in: folder)
    }

    @Test(arguments: Backend.allCases)
    func eachGroupHasADirectoryOfItsMembersSeenByThemAlone(_ backend: Backend) async throws {
        let (folder, path) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let postgres = backend == .postgres ? try await TestDatabase.create() : nil
        do {
            try await withTestDirectory { directory in
                try await exercise(database: postgres?.url ?? path, create: postgres == nil,
                                   config: try Self.config(directory, in: folder), directory: directory)
            }
        } catch {
            await postgres?.drop()
            throw error
        }
        await postgres?.drop()
    }

    func exercise(database: String, create: Bool, config: String, directory: TestDirectory) async throws {
        let db = ["--database", database]
        let dave = try await RoloBinary.run(["user", "add", "dave", "--password-stdin"] + (create ? ["--create-database"] : []) + db,
                                            stdin: "dave-secret-1\n")
        #expect(dave.status == 0, "\(dave.stderr)")
        let serve = try ServeProcess(database: database, extra: ["--config", config])
        let port = try await serve.waitUntilListening()
        let base = "http://127.0.0.1:\(port)/dav"
        let alice = ["-u", "alice:alice-password"], bob = ["-u", "bob:bob-password"], daveLogin = ["-u", "dave:dave-secret-1"]
        // alice is in both groups, bob in neither (staff is a posixGroup not listed); their
        // first logins make their accounts.
        for (login, user) in [(alice, "alice"), (bob, "bob")] {
            #expect(try await curlStatus(login + ["-X", "PROPFIND", "-H", "Depth: 0", "\(base)/addressbooks/\(user)/"]) == 207)
        }

        // (The server's own rebuild at start may have run before or after their logins.)
        let sync = try await RoloBinary.run(["directory", "sync", "--config", config] + db)
        #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
        #expect(!sync.stdout.contains("bob") && !sync.stdout.contains("dave"), "\(sync.stdout)")

        let home = try await curl(alice + ["-X", "PROPFIND", "-H", "Depth: 1", "\(base)/addressbooks/alice/"])
        #expect(home.contains("/dav/addressbooks/alice/directory-rolo-users~rolo/")
                && home.contains("/dav/addressbooks/alice/directory-rolo-admins~rolo/")
                && !home.contains("/dav/addressbooks/alice/directory~rolo/"), "\(home)")
        let users = "\(base)/addressbooks/alice/directory-rolo-users~rolo/"
        let admins = "\(base)/addressbooks/alice/directory-rolo-admins~rolo/"
        // carol never signed in: in her group's directory all the same.
        let carol = try await curl(alice + [users + "carol@example.org.vcf"])
        #expect(carol.contains("FN:Carol Carter"), "\(carol)")
        #expect(try await curlStatus(alice + [users + "alice.vcf"]) == 200)
        #expect(try await curlStatus(alice + [users + "bob.vcf"]) == 404)
        #expect(try await curlStatus(alice + [admins + "alice.vcf"]) == 200)
        #expect(try await curlStatus(alice + [admins + "carol@example.org.vcf"]) == 404)
        let put = try await curlStatus(alice + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary",
                                                "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:x\r\nFN:X\r\nEND:VCARD\r\n", users + "x.vcf"])
        #expect(put == 403)
        let gateway = try await curl(alice + ["-X", "PROPFIND", "-H", "Depth: 0", "--data-binary", """
            <?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
            <d:prop><c:directory-gateway/></d:prop></d:propfind>
            """, "\(base)/principals/alice/"])
        #expect(gateway.contains("<d:href>/dav/addressbooks/alice/directory-rolo-admins~rolo/</d:href>")
                && gateway.contains("<d:href>/dav/addressbooks/alice/directory-rolo-users~rolo/</d:href>"), "\(gateway)")

        // A member of no listed group, from LDAP or local, has none.
        for (login, user) in [(bob, "bob"), (daveLogin, "dave")] {
            let theirs = try await curl(login + ["-X", "PROPFIND", "-H", "Depth: 1", "\(base)/addressbooks/\(user)/"])
            #expect(theirs.contains("/dav/addressbooks/\(user)/default/") && !theirs.contains("directory"), "\(theirs)")
            let status = try await curlStatus(login + ["-X", "PROPFIND", "-H", "Depth: 0",
                                                       "\(base)/addressbooks/\(user)/directory-rolo-users~rolo/"])
            #expect(status == 404)
        }

        // carol leaves rolo-users in LDAP: one card out of that group's directory, named.
        try directory.modify("""
            dn: \(Self.users)
            changetype: modify
            delete: member
            member: \(TestDirectory.userDN("carol@example.org"))

            """)
        let left = try await RoloBinary.run(["directory", "sync", "--config", config] + db)
        #expect(left.status == 0 && left.stdout.contains("removed carol@example.org (directory-rolo-users)\n")
                && left.stdout.contains("Directory rebuilt: 0 added, 0 changed, 1 removed"), "\(left.stdout) \(left.stderr)")
        #expect(try await curlStatus(alice + [users + "carol@example.org.vcf"]) == 404)
        let again = try await RoloBinary.run(["directory", "sync", "--config", config] + db)
        #expect(again.status == 0 && again.stdout == "Directory unchanged.\n", "\(again.stdout) \(again.stderr)")
        _ = await serve.terminate()
    }

    /// `directory_exclude_groups`: with `directory = all`, the members of an excluded group
    /// (alice, in rolo-admins) have no card, yet see the directory; leaving the group in LDAP
    /// brings the card at the next rebuild, named.
    @Test func membersOfAnExcludedGroupHaveNoCardButSeeTheDirectory() async throws {
        let (folder, path) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withTestDirectory { directory in
            let config = try Self.config(directory, in: folder, directorySettings: """
                directory = "all"
                directory_exclude_groups = ["\(Self.admins)"]
                """)
            let db = ["--database", path]
            let dave = try await RoloBinary.run(["user", "add", "dave", "--password-stdin", "--create-database"] + db,
                                                stdin: "dave-secret-1\n")
            #expect(dave.status == 0, "\(dave.stderr)")
            let serve = try ServeProcess(database: path, extra: ["--config", config])
            let port = try await serve.waitUntilListening()
            let base = "http://127.0.0.1:\(port)/dav"
            let alice = ["-u", "alice:alice-password"]
            #expect(try await curlStatus(alice + ["-X", "PROPFIND", "-H", "Depth: 0", "\(base)/addressbooks/alice/"]) == 207)
            let sync = try await RoloBinary.run(["directory", "sync", "--config", config] + db)
            #expect(sync.status == 0 && !sync.stdout.contains("added alice\n"), "\(sync.stdout) \(sync.stderr)")

            let book = "\(base)/addressbooks/alice/directory~rolo/"
            #expect(try await curlStatus(alice + [book + "alice.vcf"]) == 404)
            for listed in ["bob.vcf", "carol@example.org.vcf", "dave.vcf"] {
                #expect(try await curlStatus(alice + [book + listed]) == 200, "\(listed)")
            }
            let listing = try await curl(alice + ["-X", "PROPFIND", "-H", "Depth: 1", book])
            #expect(listing.contains("bob.vcf") && !listing.contains("alice.vcf"), "\(listing)")

            // alice leaves rolo-admins (a groupOfNames keeps a member): her card comes, one change.
            try directory.modify("""
                dn: \(Self.admins)
                changetype: modify
                add: member
                member: \(TestDirectory.serviceDN)
                -
                delete: member
                member: \(TestDirectory.userDN("alice"))

                """)
            let back = try await RoloBinary.run(["directory", "sync", "--config", config] + db)
            #expect(back.status == 0 && back.stdout.contains("added alice\n")
                    && back.stdout.contains("Directory rebuilt: 1 added, 0 changed, 0 removed"), "\(back.stdout) \(back.stderr)")
            #expect(try await curlStatus(alice + [book + "alice.vcf"]) == 200)
            _ = await serve.terminate()
        }
    }

    @Test func groupsNeedGroupDNsAndTheLDAPSource() async throws {
        let (folder, path) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let add = try await RoloBinary.run(["user", "add", "dave", "--password-stdin", "--create-database", "--database", path],
                                           stdin: "dave-secret-1\n")
        #expect(add.status == 0, "\(add.stderr)")
        let local = try await RoloBinary.run(["directory", "sync", "--directory", "groups", "--directory-group", Self.users,
                                              "--database", path])
        #expect(local.status != 0 && local.stderr.contains("auth_sources must list ldap"), "\(local.stderr)")
        let bad = try await RoloBinary.run(["directory", "sync", "--directory", "groups", "--directory-group", "sales",
                                            "--database", path])
        #expect(bad.status != 0 && bad.stderr.contains("--directory-group") && bad.stderr.contains("sales"), "\(bad.stderr)")
        let twice = try await RoloBinary.run(["directory", "sync", "--directory", "groups", "--directory-group", Self.users,
                                              "--directory-group", "cn=ROLO-USERS,ou=elsewhere,dc=example,dc=org", "--database", path])
        #expect(twice.status != 0 && twice.stderr.contains("directory-rolo-users"), "\(twice.stderr)")
        // directory_exclude_groups too: DNs, and groups only LDAP knows.
        let notDN = try await RoloBinary.run(["directory", "sync", "--directory", "all", "--directory-exclude-group", "service",
                                              "--database", path])
        #expect(notDN.status != 0 && notDN.stderr.contains("--directory-exclude-group") && notDN.stderr.contains("service"),
                "\(notDN.stderr)")
        let excludeLocal = try await RoloBinary.run(["directory", "sync", "--directory", "all", "--directory-exclude-group", Self.admins,
                                                     "--database", path])
        #expect(excludeLocal.status != 0 && excludeLocal.stderr.contains("directory_exclude_groups names LDAP groups")
                && excludeLocal.stderr.contains("--directory-exclude-group"), "\(excludeLocal.stderr)")
    }
}
