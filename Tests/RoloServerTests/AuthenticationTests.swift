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

    @Test func repeatedFailuresAreSlowedButOtherRequestsAreNot() async throws {
        try await TestServer.with { server in
            for _ in 0..<8 {
                _ = try await server.request("GET", "/dav/", password: "guess")
            }
            // Ninth failure from this address: 2 s with the default throttle, in its own task.
            let slow = Task { () throws -> (CurlResult, ContinuousClock.Instant) in
                let response = try await server.request("GET", "/dav/", password: "guess")
                return (response, ContinuousClock.now)
            }
            try await Task.sleep(for: .milliseconds(100))
            let other = try await server.request("GET", "/health", user: nil)
            let otherDone = ContinuousClock.now
            let (slowResponse, slowDone) = try await slow.value
            #expect(other.status == 200)
            #expect(otherDone < slowDone)
            #expect(slowResponse.status == 401)
            #expect(slowResponse.seconds >= 1.9)
        }
    }
}
