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

    /// A GET of a web page with one cookie jar, as a browser behind the proxy makes it.
    static func webGet(_ server: TestServer, _ path: String, jar: String, user: String?) async throws -> CurlResult {
        try await server.request("GET", path, user: nil, headers: user.map { ["Remote-User": $0] } ?? [:],
                                 extra: ["-b", jar, "-c", jar])
    }

    @Test func aTrustedProxysHeaderSignsTheWebUIInWithoutThePasswordForm() async throws {
        try await TestServer.with(configure: Self.proxied(trusting: ["127.0.0.1"])) { server in
            let jar = server.cookieJar()
            let first = try await Self.webGet(server, "/web/account", jar: jar, user: "carol")
            #expect(first.status == 200)
            #expect(first.text.contains(#"<span class="who">carol</span>"#))
            #expect(first.headers["set-cookie"]?.contains("HttpOnly") == true)
            #expect(try await server.store.account(name: "carol") != nil)
            // The session holds: no new one per page.
            let second = try await Self.webGet(server, "/web/account", jar: jar, user: "carol")
            #expect(second.status == 200 && second.headers["set-cookie"] == nil)
            // The sign-in page has nothing to ask: straight on.
            let login = try await Self.webGet(server, "/web/login", jar: jar, user: "carol")
            #expect(login.status == 303 && login.headers["location"] == "/web/")
            // The proxy now names someone else: this browser is theirs, carol's session ends.
            let dave = try await Self.webGet(server, "/web/account", jar: jar, user: "dave")
            #expect(dave.status == 200 && dave.text.contains(#"<span class="who">dave</span>"#))
            #expect(dave.headers["set-cookie"] != nil)
        }
    }

    @Test func aDisabledAccountGetsNoWebSessionFromTheProxy() async throws {
        try await TestServer.with(configure: Self.proxied(trusting: ["127.0.0.1"])) { server in
            try await server.store.createUser(name: "erin", password: "erin-secret")
            try await server.store.updateAccount(name: "erin", UserAccountUpdate(disabled: true))
            let page = try await Self.webGet(server, "/web/", jar: server.cookieJar(), user: "erin")
            #expect(page.status == 303)
            #expect(page.headers["location"]?.hasPrefix("/web/login") == true)
            #expect(page.headers["set-cookie"] == nil)
        }
    }

    @Test func theHeaderFromAnUntrustedPeerSignsNoBrowserIn() async throws {
        try await TestServer.with(configure: Self.proxied(trusting: ["10.0.0.9"])) { server in
            let jar = server.cookieJar()
            let page = try await Self.webGet(server, "/web/", jar: jar, user: "alice")
            #expect(page.status == 303 && page.headers["location"]?.hasPrefix("/web/login") == true)
            #expect(page.headers["set-cookie"] == nil)
            let login = try await Self.webGet(server, "/web/login", jar: jar, user: "mallory")
            #expect(login.status == 200 && login.text.contains("login-form"))
            #expect(try await server.store.account(name: "mallory") == nil)
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
