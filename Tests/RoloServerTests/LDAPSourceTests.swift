import Foundation
import Logging
import LDAPClient
import LDAPTestSupport
import Testing
@testable import RoloServer
import RoloStore

/// The `ldap` source over real HTTP against a real slapd (`TestDirectory`): the first login
/// makes the user, groups decide who may log in and who is an admin, hostile names find
/// nobody, and a directory gone away answers 503 while cached logins go on.
@Suite struct LDAPSourceTests {
    static let groups = "ou=groups,\(TestDirectory.baseDN)"
    static let users = "cn=rolo-users,\(groups)"
    static let admins = "cn=rolo-admins,\(groups)"

    /// The directory's settings with the service account and `memberOf`.
    static func settings(_ directory: TestDirectory) -> LDAPSourceSettings {
        var settings = LDAPSourceSettings(connection: LDAPSettings(url: directory.url, networkTimeoutSeconds: 2,
                                                                   searchTimeoutSeconds: 2),
                                          baseDN: TestDirectory.baseDN)
        settings.bindDN = TestDirectory.serviceDN
        settings.bindPassword = TestDirectory.servicePassword
        settings.userGroupsAttribute = "memberOf"
        return settings
    }

    static func ldapOnly(_ settings: LDAPSourceSettings, cache: Duration = .seconds(300)) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.authSources = [.ldap]
            configuration.ldap = settings
            configuration.credentialCacheLifetime = cache
        }
    }

    /// A server whose only users come from the directory: TestServer's local alice and bob
    /// are deleted first (a local account is never taken over by the directory's namesake).
    static func withServer<T>(_ settings: LDAPSourceSettings, cache: Duration = .seconds(300), logger: Logger? = nil,
                              _ body: (TestServer) async throws -> T) async throws -> T {
        try await TestServer.with(configure: ldapOnly(settings, cache: cache), logger: logger) { server async throws in
            for (name, _) in TestServer.users { try await server.store.deleteUser(name: name) }
            return try await body(server)
        }
    }

    static func propfind(_ server: TestServer, _ user: String, _ password: String) async throws -> CurlResult {
        let home = user.replacingOccurrences(of: "%40", with: "@").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return try await server.request("PROPFIND", "/dav/addressbooks/\(home)/", user: user, password: password,
                                        headers: ["Depth": "0"])
    }

    @Test func theFirstLoginMakesTheUserOnceWithNameAndEmailFromTheDirectory() async throws {
        try await withTestDirectory { directory async throws in
            try await Self.withServer(Self.settings(directory)) { server async throws in
                let carol = "carol@example.org"
                #expect(try await server.store.account(name: carol) == nil)
                // As iOS 18.4 sends it.
                #expect(try await Self.propfind(server, "carol%40example.org", TestDirectory.password(of: carol)).status == 207)
                let account = try #require(try await server.store.account(name: carol))
                #expect(account.displayName == "Carol Carter" && account.email == "carol@example.org" && !account.admin)
                #expect(try await server.store.collection(owner: carol, path: ["default"]) != nil)
                #expect(try await Self.propfind(server, carol, TestDirectory.password(of: carol)).status == 207)
                #expect(try await server.store.listUsers().filter { $0 == carol }.count == 1)
                // Neither a wrong password nor an empty one (an unauthenticated bind) gets in.
                #expect(try await Self.propfind(server, carol, "wrong-password").status == 401)
                #expect(try await Self.propfind(server, carol, "").status == 401)
                #expect(account.source == "ldap")
            }
        }
    }

    @Test func hostileNamesFindNobodyAndMakeNoAccount() async throws {
        try await withTestDirectory { directory async throws in
            try await Self.withServer(Self.settings(directory)) { server async throws in
                let before = try await server.store.listUsers()
                for name in ["*", "al*", "alice)(uid=*", "*)(|(uid=*", "alice\\", "car*"] {
                    #expect(try await server.request("PROPFIND", "/dav/", user: name, password: "alice-password",
                                                     headers: ["Depth": "0"]).status == 401, "\(name)")
                }
                #expect(try await server.store.listUsers() == before)
            }
        }
    }

    @Test func theRequiredGroupKeepsOthersOutAndTheAdminGroupMakesAdmins() async throws {
        try await withTestDirectory { directory async throws in
            var settings = Self.settings(directory)
            settings.requiredGroup = Self.users
            settings.adminGroup = Self.admins
            try await Self.withServer(settings, cache: .zero) { server async throws in
                // bob is in no group: refused, with his right password, and no account made for him.
                #expect(try await Self.propfind(server, "bob", TestDirectory.password(of: "bob")).status == 401)
                #expect(try await Self.propfind(server, "alice", TestDirectory.password(of: "alice")).status == 207)
                #expect(try await server.store.account(name: "alice")?.admin == true)
                // Leaving the admin group removes admin on the next login (bob takes her place:
                // a groupOfNames keeps at least one member).
                try directory.modify("""
                    dn: \(Self.admins)
                    changetype: modify
                    add: member
                    member: \(TestDirectory.userDN("bob"))
                    -
                    delete: member
                    member: \(TestDirectory.userDN("alice"))

                    """)
                #expect(try await Self.propfind(server, "alice", TestDirectory.password(of: "alice")).status == 207)
                #expect(try await server.store.account(name: "alice")?.admin == false)
                // Leaving the required group closes the door.
                try directory.modify("""
                    dn: \(Self.users)
                    changetype: modify
                    delete: member
                    member: \(TestDirectory.userDN("alice"))

                    """)
                #expect(try await Self.propfind(server, "alice", TestDirectory.password(of: "alice")).status == 401)
            }
        }
    }

    @Test func aGroupSearchFindsMembersByDNAndByMemberUid() async throws {
        try await withTestDirectory { directory async throws in
            var byDN = Self.settings(directory)
            byDN.userGroupsAttribute = nil
            byDN.groupBaseDN = Self.groups
            byDN.requiredGroup = Self.users
            try await Self.withServer(byDN) { server async throws in
                #expect(try await Self.propfind(server, "alice", TestDirectory.password(of: "alice")).status == 207)
                #expect(try await Self.propfind(server, "bob", TestDirectory.password(of: "bob")).status == 401)
            }
            var byName = byDN
            byName.groupMemberAttribute = "memberUid"
            byName.requiredGroup = "cn=staff,\(Self.groups)"
            try await Self.withServer(byName) { server async throws in
                #expect(try await Self.propfind(server, "bob", TestDirectory.password(of: "bob")).status == 207)
                #expect(try await Self.propfind(server, "alice", TestDirectory.password(of: "alice")).status == 401)
            }
        }
    }

    @Test func aUserRemovedFromTheDirectoryIsRefused() async throws {
        try await withTestDirectory { directory async throws in
            try await Self.withServer(Self.settings(directory), cache: .zero) { server async throws in
                #expect(try await Self.propfind(server, "alice", TestDirectory.password(of: "alice")).status == 207)
                let token = try await server.store.createAppPassword(user: "alice", name: "phone", readOnly: false, books: nil)
                #expect(try await Self.propfind(server, "alice", token.secret).status == 207)
                try directory.modify("""
                    dn: \(TestDirectory.userDN("alice"))
                    changetype: delete

                    """)
                #expect(try await Self.propfind(server, "alice", TestDirectory.password(of: "alice")).status == 401)
                // The app password made earlier is refused too, once the directory says she is gone.
                #expect(try await Self.propfind(server, "alice", token.secret).status == 401)
                // Their data stays until an admin deletes it.
                #expect(try await server.store.account(name: "alice") != nil)
            }
        }
    }

    @Test func aStoppedDirectoryAnswers503WhileACachedLoginGoesOn() async throws {
        try await withTestDirectory { directory async throws in
            let log = LogCapture()
            try await Self.withServer(Self.settings(directory), cache: .seconds(300),
                                      logger: log.logger(level: .notice)) { server async throws in
                #expect(try await Self.propfind(server, "alice", TestDirectory.password(of: "alice")).status == 207)
                let token = try await server.store.createAppPassword(user: "alice", name: "phone", readOnly: false, books: nil)
                directory.stopServer()
                // Remembered (keyed hash of the header): no directory needed.
                #expect(try await Self.propfind(server, "alice", TestDirectory.password(of: "alice")).status == 207)
                // The app password too: the directory's "still there" of her login is remembered as long.
                #expect(try await Self.propfind(server, "alice", token.secret).status == 207)
                for _ in 0..<2 {
                    let bob = try await Self.propfind(server, "bob", TestDirectory.password(of: "bob"))
                    #expect(bob.status == 503)
                    #expect(bob.headers["retry-after"] != nil, "\(bob.headers)")
                }
                // The web sign-in says the directory is out of reach: not "wrong password", not counted.
                let page = try await WebUIHTTPTests.Browser(server).signIn("bob", TestDirectory.password(of: "bob"))
                #expect(page.status == 503)
                #expect(page.headers["retry-after"] != nil, "\(page.headers)")
                #expect(page.text.contains("cannot be reached"))
                #expect(!page.text.contains("password is wrong"))
                #expect(log.messages(startingWith: "auth_failed").isEmpty)
                #expect(log.messages(startingWith: "LDAP directory unavailable").count == 1)
            }
        }
    }

    @Test func aLocalAccountIsNotTakenOverByTheDirectoryUntilAnAdminHandsItOver() async throws {
        try await withTestDirectory { directory async throws in
            let settings = Self.settings(directory)
            try await TestServer.with(configure: {
                $0.authSources = [.ldap, .local]
                $0.ldap = settings
                $0.credentialCacheLifetime = .zero
            }) { server async throws in
                // TestServer's local bob: his own password, never the directory bob's.
                #expect(try await Self.propfind(server, "bob", "bob-secret").status == 207)
                #expect(try await Self.propfind(server, "bob", TestDirectory.password(of: "bob")).status == 401)
                try await server.store.updateAccount(name: "bob", UserAccountUpdate(source: "ldap"))
                #expect(try await Self.propfind(server, "bob", TestDirectory.password(of: "bob")).status == 207)
                // A directory user's local password row opens nothing.
                #expect(try await Self.propfind(server, "bob", "bob-secret").status == 401)
            }
        }
    }

    @Test func withLocalFirstADirectoryOutageStillNeverLetsALocalPasswordStandIn() async throws {
        try await withTestDirectory { directory async throws in
            let settings = Self.settings(directory)
            try await TestServer.with(configure: {
                $0.authSources = [.local, .ldap]
                $0.ldap = settings
            }) { server async throws in
                // A local user signs in with the local password; a directory user with theirs.
                #expect(try await Self.propfind(server, "bob", "bob-secret").status == 207)
                #expect(try await Self.propfind(server, "carol@example.org",
                                                TestDirectory.password(of: "carol@example.org")).status == 207)
                directory.stopServer()
                // Local logins do not need the directory...
                #expect(try await server.request("PROPFIND", "/dav/addressbooks/alice/", headers: ["Depth": "0"]).status == 207)
                // ...and carol, the directory's user, waits for it (503): never a 401, never another source.
                #expect(try await Self.propfind(server, "carol@example.org", "another-password").status == 503)
            }
        }
    }

    @Test func startTLSWithTheCAVerifiesTheDirectory() async throws {
        try await withTestDirectory(tls: true) { directory async throws in
            var settings = Self.settings(directory)
            settings.connection.startTLS = true
            settings.connection.caFile = directory.caFile
            try await Self.withServer(settings) { server async throws in
                #expect(try await Self.propfind(server, "alice", TestDirectory.password(of: "alice")).status == 207)
            }
            // Without the CA the certificate is not trusted: the directory is out of reach, not a wrong password.
            var untrusted = Self.settings(directory)
            untrusted.connection.startTLS = true
            untrusted.connection.caFile = "/dev/null"
            try await Self.withServer(untrusted) { server async throws in
                #expect(try await Self.propfind(server, "alice", TestDirectory.password(of: "alice")).status == 503)
            }
        }
    }
}
