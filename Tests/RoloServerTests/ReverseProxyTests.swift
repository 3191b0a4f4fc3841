import Foundation
@testable import RoloServer
import Testing

/// Behind a reverse proxy: `X-Forwarded-For` names the client only when the TCP peer is a
/// trusted proxy, and hrefs carry the proxy's path prefix.
@Suite struct ReverseProxyTests {
    @Test func clientIsTheRightmostHopThatIsNotATrustedProxy() {
        let trusted: Set<String> = ["127.0.0.1", "10.0.0.9"]
        #expect(ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: "203.0.113.7", trustedProxies: trusted)
            == "203.0.113.7")
        // A client-supplied first hop cannot hide the address our proxy saw.
        #expect(ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: "1.2.3.4, 203.0.113.7, 10.0.0.9",
                                      trustedProxies: trusted) == "203.0.113.7")
        #expect(ClientAddress.resolve(peer: "192.0.2.1", forwardedFor: "203.0.113.7", trustedProxies: trusted)
            == "192.0.2.1")
        #expect(ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: nil, trustedProxies: trusted) == "127.0.0.1")
        #expect(ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: " , ", trustedProxies: trusted) == "127.0.0.1")
    }

    /// A throttle that blocks after a few quick failures, so the test reads who is blocked
    /// from the answers (429 or 401) rather than from how long they took.
    static let quickBlock = LoginThrottleSettings(freeFailures: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(40),
                                                  cappedFailures: 1, window: .seconds(600), accountFreeFailures: 1000)

    /// Failures from `first` until it is blocked (its next attempt gets 429), then one
    /// failure from `second`: returns that last answer's status.
    static func statusForOtherClientAfterBlocking(_ server: TestServer, first: String, second: String) async throws -> Int {
        for _ in 0..<quickBlock.blockingFailures {
            _ = try await server.request("GET", "/dav/", password: "guess", headers: ["X-Forwarded-For": first])
        }
        let blocked = try await server.request("GET", "/dav/", password: "guess", headers: ["X-Forwarded-For": first])
        #expect(blocked.status == 429, "\(first) made \(quickBlock.blockingFailures) failures")
        return try await server.request("GET", "/dav/", password: "guess", headers: ["X-Forwarded-For": second]).status
    }

    @Test func forwardedForFromATrustedProxyIsTheThrottledAddress() async throws {
        try await TestServer.with(configure: {
            $0.trustedProxies = ["127.0.0.1"]
            $0.loginThrottle = Self.quickBlock
        }) { server async throws in
            // 10.0.0.1 is blocked; 10.0.0.2, behind the same proxy, has no failures of its own.
            let other = try await Self.statusForOtherClientAfterBlocking(server, first: "10.0.0.1", second: "10.0.0.2")
            #expect(other == 401)
        }
    }

    @Test func forwardedForFromAnUntrustedPeerDoesNotChangeTheThrottledAddress() async throws {
        try await TestServer.with(configure: { $0.loginThrottle = Self.quickBlock }) { server async throws in
            // The header is not believed: every failure was 127.0.0.1's, and so is the block.
            let other = try await Self.statusForOtherClientAfterBlocking(server, first: "10.0.0.1", second: "10.0.0.2")
            #expect(other == 429)
        }
    }

    @Test func hrefsAndWellKnownRedirectCarryTheProxyPrefix() async throws {
        try await TestServer.with(configure: { $0.proxyPrefix = "/carddav" }) { server in
            let propfind = try await server.request("PROPFIND", "/dav/addressbooks/alice/", headers: ["Depth": "0"])
            #expect(propfind.status == 207)
            #expect(propfind.text.contains("/carddav/dav/addressbooks/alice/"))
            let wellKnown = try await server.request("GET", "/.well-known/carddav", user: nil)
            #expect(wellKnown.headers["location"] == "/carddav/dav/")
        }
    }

    @Test func publicURLPathBecomesThePrefix() async throws {
        try await TestServer.with(configure: { $0.publicURL = URL(string: "https://example.org/contacts") }) { server in
            let propfind = try await server.request("PROPFIND", "/dav/addressbooks/alice/", headers: ["Depth": "0"])
            #expect(propfind.text.contains("/contacts/dav/addressbooks/alice/"))
        }
    }
}
