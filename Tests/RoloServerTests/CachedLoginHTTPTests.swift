import Foundation
import RoloServer
import RoloSQLite
import RoloStore
import Testing

/// A cached login lasts only while the account it was checked against is unchanged: each
/// change below takes effect on the very next request, through the full path (PROPFIND) and
/// the inline one (GET of a card before the HTTP codec). The store here is a second
/// connection to the server's database file, as the CLI would open (issue 29).
@Suite struct CachedLoginHTTPTests {
    static let card = "/dav/addressbooks/alice/default/c.vcf"
    static let body = Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:c\r\nFN:C\r\nEND:VCARD\r\n".utf8)

    /// A server with one card of alice's, her login cached by a PROPFIND and a GET; `change`
    /// is made through another store on the same file.
    static func withCachedLogin(_ body: (TestServer, SQLiteStore) async throws -> Void) async throws {
        try await TestServer.with { server in
            #expect(try await server.request("PUT", card, headers: ["Content-Type": "text/vcard"], body: Self.body).status == 201)
            #expect(try await server.request("PROPFIND", "/dav/", headers: ["Depth": "0"]).status == 207)
            #expect(try await server.request("GET", card).status == 200)
            let other = try SQLiteStore(path: server.configuration.databasePath, bcryptCost: 4)
            defer { try? other.close() }
            try await body(server, other)
        }
    }

    static func expectRefused(_ server: TestServer, password: String = "alice-secret") async throws {
        #expect(try await server.request("GET", card, password: password).status == 401)
        #expect(try await server.request("PROPFIND", "/dav/", password: password, headers: ["Depth": "0"]).status == 401)
    }

    @Test func aDeletedUsersOldPasswordFailsOnTheVeryNextRequest() async throws {
        try await Self.withCachedLogin { server, other in
            try await other.deleteUser(name: "alice")
            try await Self.expectRefused(server)
            // Created again under the same name with another password: the old one stays refused.
            try await other.createUser(name: "alice", password: "another-secret")
            try await Self.expectRefused(server)
            #expect(try await server.request("PROPFIND", "/dav/", password: "another-secret", headers: ["Depth": "0"]).status == 207)
        }
    }

    @Test func aNewPasswordEndsTheOldOnesCachedLogin() async throws {
        try await Self.withCachedLogin { server, other in
            try await other.setPassword(user: "alice", password: "alice-secret-2")
            try await Self.expectRefused(server)
            #expect(try await server.request("GET", Self.card, password: "alice-secret-2").status == 200)
            // The new one is cached in turn.
            #expect(try await server.request("GET", Self.card, password: "alice-secret-2").status == 200)
        }
    }

    @Test func disablingEndsACachedLoginAndEnablingLetsItCheckAgain() async throws {
        try await Self.withCachedLogin { server, other in
            try await other.updateAccount(name: "alice", UserAccountUpdate(disabled: true))
            try await Self.expectRefused(server)
            try await other.updateAccount(name: "alice", UserAccountUpdate(disabled: false))
            #expect(try await server.request("GET", Self.card).status == 200)
        }
    }

    @Test func appPasswordsOnlyEndsTheAccountPasswordsCachedLogin() async throws {
        try await Self.withCachedLogin { server, other in
            let phone = try await other.createAppPassword(user: "alice", name: "Phone", readOnly: false, books: nil)
            try await other.updateAccount(name: "alice", UserAccountUpdate(appPasswordsOnly: true))
            try await Self.expectRefused(server)
            #expect(try await server.request("GET", Self.card, password: phone.secret).status == 200)
            try await other.revokeAppPassword(user: "alice", name: "Phone")
            try await Self.expectRefused(server, password: phone.secret)
        }
    }

    @Test func aPasswordThatIsNotUTF8FailsWithAnAuthFailedLine() async throws {
        let log = LogCapture()
        try await TestServer.with(logger: log.logger()) { server in
            // "alice:pässword" in Latin-1: ä is the one byte E4, which UTF-8 cannot start with.
            let latin1 = Data("alice:p".utf8) + Data([0xE4]) + Data("ssword".utf8)
            let header = "Basic " + latin1.base64EncodedString()
            let response = try await server.request("PROPFIND", "/dav/", user: nil,
                                                    headers: ["Depth": "0", "Authorization": header])
            #expect(response.status == 401)
            #expect(response.headers["www-authenticate"] != nil)
            let lines = log.messages(startingWith: "auth_failed")
            #expect(lines == ["auth_failed user=alice ip=127.0.0.1 reason=not_utf8"], "\(lines)")
            // The right password in UTF-8 still works from the same address.
            #expect(try await server.request("PROPFIND", "/dav/", headers: ["Depth": "0"]).status == 207)
        }
    }
}
