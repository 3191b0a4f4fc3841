import Foundation
import Testing
@testable import RoloServer
import RoloStore

/// `auth_sources` over real HTTP: the `proxy` source's header counts only from a trusted
/// peer and makes the user on first sight; the iOS 18.4 user name `alice%40example.org`
/// is `alice@example.org`.
@Suite struct AuthenticationSourceTests {
    static func proxied(trusting proxies: Set<String>) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.authSources = [.proxy, .local]
            configuration.proxyUserHeader = "Remote-User"
            configuration.trustedProxies = proxies
        }
    }

    @Test func aTrustedProxysHeaderSignsInAndCreatesTheUserOnce() async throws {
        try await TestServer.with(configure: Self.proxied(trusting: ["127.0.0.1"])) { server in
            #expect(try await server.store.account(name: "carol") == nil)
            let first = try await server.request("PROPFIND", "/dav/addressbooks/carol/default/", user: nil,
                                                 headers: ["Depth": "0", "Remote-User": "carol"])
            #expect(first.status == 207)
            let second = try await server.request("PROPFIND", "/dav/addressbooks/carol/default/", user: nil,
                                                  headers: ["Depth": "0", "Remote-User": "carol"])
            #expect(second.status == 207)
            #expect(try await server.store.listUsers().filter { $0 == "carol" }.count == 1)
            // The password made for the account is nobody's: no empty or guessable one opens it.
            let basic = try await server.request("PROPFIND", "/dav/addressbooks/carol/", user: "carol", password: "",
                                                 headers: ["Depth": "0"])
            #expect(basic.status == 401)
            // A disabled account stays shut to the proxy too.
            try await server.store.updateAccount(name: "carol", UserAccountUpdate(disabled: true))
            let disabled = try await server.request("PROPFIND", "/dav/addressbooks/carol/default/", user: nil,
                                                    headers: ["Depth": "0", "Remote-User": "carol"])
            #expect(disabled.status == 401)
        }
    }

    @Test func theHeaderFromAnUntrustedPeerIsIgnored() async throws {
        try await TestServer.with(configure: Self.proxied(trusting: ["10.0.0.9"])) { server in
            let spoofed = try await server.request("PROPFIND", "/dav/addressbooks/alice/", user: nil,
                                                   headers: ["Depth": "0", "Remote-User": "alice"])
            #expect(spoofed.status == 401)
            #expect(try await server.store.account(name: "mallory") == nil)
            let made = try await server.request("GET", "/dav/", user: nil, headers: ["Remote-User": "mallory"])
            #expect(made.status == 401)
            #expect(try await server.store.account(name: "mallory") == nil)
            // Ordinary credentials still work beside it.
            let basic = try await server.request("PROPFIND", "/dav/addressbooks/alice/", headers: ["Depth": "0"])
            #expect(basic.status == 207)
        }
    }

    @Test func withoutTheProxySourceTheHeaderIsIgnoredEvenFromATrustedPeer() async throws {
        try await TestServer.with(configure: {
            $0.trustedProxies = ["127.0.0.1"]
            $0.proxyUserHeader = "Remote-User"
        }) { server in
            let response = try await server.request("GET", "/dav/", user: nil, headers: ["Remote-User": "alice"])
            #expect(response.status == 401)
        }
    }

    @Test func aPercentEncodedAtSignInTheUserNameLogsInAsTheDecodedName() async throws {
        try await TestServer.with { server in
            try await server.store.createUser(name: "alice@example.org", password: "at-secret")
            let encoded = try await server.request("PROPFIND", "/dav/addressbooks/alice%40example.org/",
                                                   user: "alice%40example.org", password: "at-secret",
                                                   headers: ["Depth": "0"])
            #expect(encoded.status == 207)
            let wrong = try await server.request("PROPFIND", "/dav/addressbooks/alice%40example.org/",
                                                 user: "alice%40example.org", password: "nope", headers: ["Depth": "0"])
            #expect(wrong.status == 401)
        }
    }

    @Test func onlyANameHoldingPercent40IsDecoded() {
        #expect(LoginName.normalized("alice%40example.org") == "alice@example.org")
        #expect(LoginName.normalized("bob%2540x") == "bob%2540x")
        #expect(LoginName.normalized("100%sure") == "100%sure")
        // Not percent-encoding as a whole: kept as sent, never half-decoded.
        #expect(LoginName.normalized("a%40b%zz") == "a%40b%zz")
    }
}
