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

    /// Seven failures from `first` (the seventh waits 0.5 s), then one from `second`: returns
    /// how long that last answer took.
    static func secondsForOtherClientAfterFailures(_ server: TestServer, first: String, second: String) async throws
        -> Double {
        for _ in 0..<7 {
            _ = try await server.request("GET", "/dav/", password: "guess", headers: ["X-Forwarded-For": first])
        }
        let other = try await server.request("GET", "/dav/", password: "guess", headers: ["X-Forwarded-For": second])
        #expect(other.status == 401)
        return other.seconds
    }

    @Test func forwardedForFromATrustedProxyIsTheThrottledAddress() async throws {
        try await TestServer.with(configure: { $0.trustedProxies = ["127.0.0.1"] }) { server in
            let seconds = try await Self.secondsForOtherClientAfterFailures(server, first: "10.0.0.1", second: "10.0.0.2")
            // Throttled as 10.0.0.1 it would wait a full second (the eighth failure); a loaded
            // machine's curl alone may take half of that.
            #expect(seconds < 0.9, "10.0.0.2 had no failures of its own, yet waited \(seconds) s")
        }
    }

    @Test func forwardedForFromAnUntrustedPeerDoesNotChangeTheThrottledAddress() async throws {
        try await TestServer.with { server in
            let seconds = try await Self.secondsForOtherClientAfterFailures(server, first: "10.0.0.1", second: "10.0.0.2")
            // Eighth failure from 127.0.0.1 itself: 1 s.
            #expect(seconds >= 0.9)
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
