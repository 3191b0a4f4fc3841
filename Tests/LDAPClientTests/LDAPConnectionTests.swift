import LDAPClient
import LDAPTestSupport
import LoopbackSockets
import Testing

/// The client against a real OpenLDAP slapd on loopback (`TestDirectory`): the service
/// account's search, user binds, injection, the empty password and a directory gone away.
@Suite struct LDAPConnectionTests {
    static func connect(_ directory: TestDirectory) async throws -> LDAPConnection {
        try await LDAPConnection.open(LDAPSettings(url: directory.url, networkTimeoutSeconds: 2, searchTimeoutSeconds: 2))
    }

    /// Binds as the service account and looks `name` up the way a login does.
    static func findUser(_ name: String, in directory: TestDirectory) async throws -> [LDAPEntry] {
        let connection = try await connect(directory)
        try await connection.bind(dn: TestDirectory.serviceDN, password: TestDirectory.servicePassword)
        return try await connection.search(base: TestDirectory.baseDN, filter: "(&(objectClass=inetOrgPerson)(uid=\(LDAPFilter.escape(name))))",
                                           attributes: ["uid", "cn", "mail", "memberOf"])
    }

    @Test func theServiceAccountFindsAUserWhoseNameHoldsAnAtByAnEscapedFilter() async throws {
        try await withTestDirectory { directory in
            let entries = try await Self.findUser("carol@example.org", in: directory)
            #expect(entries.map(\.dn) == [TestDirectory.userDN("carol@example.org")])
            #expect(entries.first?.values("mail") == ["carol@example.org"])
            #expect(entries.first?.values("CN") == ["Carol Carter"])
        }
    }

    @Test func theMemberofOverlayNamesAUsersGroups() async throws {
        try await withTestDirectory { directory in
            let entries = try await Self.findUser("alice", in: directory)
            #expect(Set(entries.first?.values("memberOf") ?? []) == [
                "cn=rolo-users,ou=groups,dc=example,dc=org", "cn=rolo-admins,ou=groups,dc=example,dc=org",
            ])
        }
    }

    @Test func groupsAreFoundByMemberDNAndByMemberUid() async throws {
        try await withTestDirectory { directory in
            let connection = try await Self.connect(directory)
            try await connection.bind(dn: TestDirectory.serviceDN, password: TestDirectory.servicePassword)
            let byDN = try await connection.search(
                base: "ou=groups,\(TestDirectory.baseDN)", scope: .oneLevel,
                filter: "(member=\(LDAPFilter.escape(TestDirectory.userDN("carol@example.org"))))", attributes: ["cn"])
            #expect(byDN.flatMap { $0.values("cn") } == ["rolo-users"])
            let byName = try await connection.search(base: TestDirectory.baseDN, filter: "(&(objectClass=posixGroup)(memberUid=bob))",
                                                     attributes: ["cn"])
            #expect(byName.flatMap { $0.values("cn") } == ["staff"])
        }
    }

    @Test func aUserBindsWithTheRightPasswordAndIsRefusedWithAWrongOne() async throws {
        try await withTestDirectory { directory in
            let connection = try await Self.connect(directory)
            let dn = TestDirectory.userDN("carol@example.org")
            try await connection.bind(dn: dn, password: TestDirectory.password(of: "carol@example.org"))
            await #expect(throws: LDAPError.invalidCredentials) {
                try await connection.bind(dn: dn, password: "wrong-password")
            }
            await #expect(throws: LDAPError.invalidCredentials) {
                try await connection.bind(dn: TestDirectory.userDN("alice"), password: TestDirectory.password(of: "bob"))
            }
        }
    }

    @Test func filterInjectionFindsNobody() async throws {
        try await withTestDirectory { directory in
            // Unescaped, the first of these would list every user: the escaping is what stops it.
            let connection = try await Self.connect(directory)
            try await connection.bind(dn: TestDirectory.serviceDN, password: TestDirectory.servicePassword)
            let unescaped = try await connection.search(base: TestDirectory.baseDN, filter: "(&(objectClass=inetOrgPerson)(uid=*))")
            #expect(unescaped.count == TestDirectory.users.count)
            for name in ["*", "al*", "alice)(uid=*", "*)(|(uid=*", "alice)(|(objectClass=*", "alice\0", "alice\\", "(alice)"] {
                #expect(try await Self.findUser(name, in: directory).isEmpty, "\(name) found someone")
            }
        }
    }

    @Test func anEmptyPasswordIsRefusedBeforeAnyBind() async throws {
        try await withTestDirectory { directory in
            let connection = try await Self.connect(directory)
            await #expect(throws: LDAPError.emptyPassword) {
                try await connection.bind(dn: TestDirectory.userDN("alice"), password: "")
            }
            // Sent, the same bind would have succeeded as an unauthenticated bind; with the
            // server gone, the refusal still comes, so nothing was sent.
            directory.stopServer()
            await #expect(throws: LDAPError.emptyPassword) {
                try await connection.bind(dn: TestDirectory.userDN("alice"), password: "")
            }
        }
    }

    @Test func aStoppedDirectoryIsUnavailable() async throws {
        try await withTestDirectory { directory in
            let connection = try await Self.connect(directory)
            try await connection.bind(dn: TestDirectory.serviceDN, password: TestDirectory.servicePassword)
            directory.stopServer()
            do {
                _ = try await connection.search(base: TestDirectory.baseDN, filter: "(uid=alice)")
                Issue.record("a search on a connection to a stopped directory succeeded")
            } catch LDAPError.unavailable {
            }
            do {
                _ = try await Self.connect(directory)
                Issue.record("a connection to a stopped directory opened")
            } catch LDAPError.unavailable {
            }
            do {
                try await connection.bind(dn: TestDirectory.serviceDN, password: TestDirectory.servicePassword)
                Issue.record("a bind on a connection to a stopped directory succeeded")
            } catch LDAPError.unavailable {
            }
        }
    }

    @Test func aPortNobodyListensOnIsUnavailable() async throws {
        let port = try LoopbackSocket.freePort()
        do {
            _ = try await LDAPConnection.open(LDAPSettings(url: "ldap://127.0.0.1:\(port)", networkTimeoutSeconds: 2))
            Issue.record("a connection opened to a closed port")
        } catch LDAPError.unavailable {
        }
    }

    @Test func aURLThatIsNotLDAPOrLDAPSIsRefusedWithItsName() async throws {
        for url in ["ldapi:///", "http://127.0.0.1:389", "127.0.0.1:389", "ldap:/127.0.0.1"] {
            do {
                _ = try await LDAPConnection.open(LDAPSettings(url: url))
                Issue.record("\(url) was accepted")
            } catch LDAPError.failed(_, let message) {
                #expect(message.contains(url))
            }
        }
        do {
            _ = try await LDAPConnection.open(LDAPSettings(url: "ldaps://127.0.0.1:636", startTLS: true))
            Issue.record("StartTLS over ldaps:// was accepted")
        } catch LDAPError.failed(_, let message) {
            #expect(message.contains("StartTLS"))
        }
    }
}
