import Foundation
import Testing

/// HTTP Basic authentication end to end: challenge, wrong and right passwords, throttling.
@Suite struct AuthenticationTests {
    @Test func requestWithoutCredentialsGets401WithBasicChallenge() async throws {
        try await TestServer.with { server in
            let response = try await server.request("PROPFIND", "/dav/addressbooks/alice/", user: nil,
                                                    headers: ["Depth": "0"])
            #expect(response.status == 401)
            #expect(response.headers["www-authenticate"] == #"Basic realm="Rolo", charset="UTF-8""#)
        }
    }

    @Test func wrongPasswordGets401() async throws {
        try await TestServer.with { server in
            let response = try await server.request("PROPFIND", "/dav/addressbooks/alice/", password: "nope",
                                                    headers: ["Depth": "0"])
            #expect(response.status == 401)
            #expect(response.headers["www-authenticate"] != nil)
        }
    }

    @Test func unknownUserGets401() async throws {
        try await TestServer.with { server in
            let response = try await server.request("GET", "/dav/", user: "mallory", password: "x")
            #expect(response.status == 401)
        }
    }

    @Test func rightPasswordReachesTheDAVEngine() async throws {
        try await TestServer.with { server in
            let first = try await server.request("PROPFIND", "/dav/addressbooks/alice/", headers: ["Depth": "0"])
            #expect(first.status == 207)
            // The second request is answered from the credential cache: same result.
            let second = try await server.request("PROPFIND", "/dav/addressbooks/alice/", headers: ["Depth": "0"])
            #expect(second.status == 207)
        }
    }

    @Test func repeatedFailuresAreSlowedButARightPasswordIsNot() async throws {
        try await TestServer.with { server in
            for _ in 0..<6 {
                _ = try await server.request("GET", "/dav/", password: "guess")
            }
            // Seventh failure from this address: 500 ms with the default throttle.
            async let slow = server.request("GET", "/dav/", password: "guess")
            let start = ContinuousClock.now
            let right = try await server.request("GET", "/health", user: nil)
            let healthTime = ContinuousClock.now - start
            let slowResponse = try await slow
            #expect(right.status == 200)
            #expect(healthTime < .milliseconds(400))
            #expect(slowResponse.status == 401)
            #expect(slowResponse.seconds >= 0.4)
        }
    }
}
