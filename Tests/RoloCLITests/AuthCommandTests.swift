import Foundation
import LDAPTestSupport
import Testing

/// `rolo auth test` against a real slapd, and the `ldap_*` settings that stop `serve` at
/// start naming themselves.
@Suite struct AuthCommandTests {
    /// A config file for the test directory, with the service password in a file beside it.
    static func config(_ directory: TestDirectory, in folder: URL, extra: String = "") throws -> String {
        let secret = folder.appendingPathComponent("ldap-secret").path
        try "\(TestDirectory.servicePassword)\n".write(toFile: secret, atomically: true, encoding: .utf8)
        return try ServeConfigTests.writeConfig("""
            auth_sources = ["ldap"]
            ldap_url = "\(directory.url)"
            ldap_base_dn = "\(TestDirectory.baseDN)"
            ldap_bind_dn = "\(TestDirectory.serviceDN)"
            ldap_bind_password_file = "\(secret)"
            ldap_user_groups_attribute = "memberOf"
            ldap_required_group = "cn=rolo-users,ou=groups,\(TestDirectory.baseDN)"
            ldap_admin_group = "cn=rolo-admins,ou=groups,\(TestDirectory.baseDN)"
            \(extra)
            """, in: folder)
    }

    @Test func authTestPrintsWhatTheDirectoryFoundAndNeverThePassword() async throws {
        let (folder, _) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withTestDirectory { directory in
            let config = try Self.config(directory, in: folder)
            let alice = try await RoloBinary.run(["auth", "test", "alice", "--password-stdin", "--config", config],
                                                 stdin: "alice-password\n")
            #expect(alice.status == 0, "\(alice.stderr)")
            #expect(alice.stdout.contains("ldap: entry uid=alice,ou=people,dc=example,dc=org"), "\(alice.stdout)")
            #expect(alice.stdout.contains("display name: Alice Archer") && alice.stdout.contains("e-mail: alice@example.org"))
            #expect(alice.stdout.contains("cn=rolo-admins,ou=groups,dc=example,dc=org") && alice.stdout.contains("admin: yes"))
            #expect(alice.stdout.contains("password: accepted"))
            #expect(!alice.stdout.contains("alice-password") && !alice.stderr.contains("alice-password"))

            let wrong = try await RoloBinary.run(["auth", "test", "alice", "--password-stdin", "--config", config],
                                                 stdin: "not-her-password\n")
            #expect(wrong.status == 1)
            #expect(wrong.stdout.contains("password: refused") && wrong.stdout.contains("No source accepted"), "\(wrong.stdout)")

            // bob's password is right but he is not in the required group.
            let bob = try await RoloBinary.run(["auth", "test", "bob", "--password-stdin", "--config", config],
                                               stdin: "bob-password\n")
            #expect(bob.status == 1)
            #expect(bob.stdout.contains("NOT a member") && bob.stdout.contains("admin: no"), "\(bob.stdout)")

            let carol = try await RoloBinary.run(["auth", "test", "carol%40example.org", "--password-stdin", "--config", config],
                                                 stdin: "carol@example.org-password\n")
            #expect(carol.status == 0, "\(carol.stdout)")
            #expect(carol.stdout.contains("name in Rolo: carol@example.org"))

            let nobody = try await RoloBinary.run(["auth", "test", "*", "--password-stdin", "--config", config],
                                                  stdin: "alice-password\n")
            #expect(nobody.status == 1)
            #expect(nobody.stdout.contains("ldap: no entry matches"), "\(nobody.stdout)")

            directory.stopServer()
            let down = try await RoloBinary.run(["auth", "test", "alice", "--password-stdin", "--config", config],
                                                stdin: "alice-password\n")
            #expect(down.status == 1)
            #expect(down.stdout.contains("the directory is unavailable"), "\(down.stdout)")
        }
    }

    @Test func aWrongLDAPSettingStopsServeNamingIt() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let noURL = try await RoloBinary.run(["serve", "--auth-source", "ldap", "--database", database])
        #expect(noURL.status == 1)
        #expect(noURL.stderr.contains("auth_sources lists ldap, which needs ldap_url"), "\(noURL.stderr)")

        let badURL = try await RoloBinary.run(["serve", "--auth-source", "ldap", "--database", database,
                                               "--ldap-url", "http://127.0.0.1:389", "--ldap-base-dn", "dc=example,dc=org"])
        #expect(badURL.status == 1)
        #expect(badURL.stderr.contains("ldap_url must be ldap://host[:port] or ldaps://host[:port]"), "\(badURL.stderr)")
        #expect(badURL.stderr.contains("it was set by --ldap-url"), "\(badURL.stderr)")

        let noBase = try await RoloBinary.run(["serve", "--auth-source", "ldap", "--database", database,
                                               "--ldap-url", "ldap://127.0.0.1:389"])
        #expect(noBase.status == 1)
        #expect(noBase.stderr.contains("needs ldap_base_dn"), "\(noBase.stderr)")

        let config = try ServeConfigTests.writeConfig("""
            auth_sources = ["ldap", "local"]
            ldap_url = "ldap://127.0.0.1:389"
            ldap_base_dn = "dc=example,dc=org"
            ldap_bind_dn = "cn=rolo-service,dc=example,dc=org"
            ldap_bind_password_file = "\(folder.path)/missing-secret"
            """, in: folder)
        let unreadable = try await RoloBinary.run(["serve", "--config", config, "--database", database])
        #expect(unreadable.status == 1)
        #expect(unreadable.stderr.contains("ldap_bind_password_file cannot be read"), "\(unreadable.stderr)")
        #expect(unreadable.stderr.contains("it was set in \(config)"), "\(unreadable.stderr)")

        let badVerify = try await RoloBinary.run(["serve", "--auth-source", "ldap", "--database", database],
                                                 environment: ["ROLO_LDAP_URL": "ldaps://127.0.0.1:636",
                                                               "ROLO_LDAP_BASE_DN": "dc=example,dc=org",
                                                               "ROLO_LDAP_TLS_VERIFY": "sometimes"])
        #expect(badVerify.status == 1)
        #expect(badVerify.stderr.contains("ldap_tls_verify must be never, allow, try or demand"), "\(badVerify.stderr)")
        #expect(badVerify.stderr.contains("ROLO_LDAP_TLS_VERIFY"), "\(badVerify.stderr)")
        // Nothing was started on the way: no database made.
        #expect(!FileManager.default.fileExists(atPath: database))
    }
}
