import Foundation
import Testing
import RoloServer

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

/// The failed-login throttle through real HTTP, with small delays: what is counted, the 429
/// with `Retry-After`, the right password refused while blocked, and other subnets untouched.
/// Clients are told apart by `X-Forwarded-For` from the trusted loopback proxy.
@Suite struct LoginThrottleHTTPTests {
    /// free 1, 10 ms doubling to 40 ms, 2 failures at the cap: failure 6 gets the 429.
    static func configure(_ configuration: inout ServerConfiguration) {
        configuration.trustedProxies = ["127.0.0.1"]
        configuration.loginThrottle = LoginThrottleSettings(freeFailures: 1, baseDelay: .milliseconds(10),
                                                            maxDelay: .milliseconds(40), cappedFailures: 2,
                                                            window: .seconds(120))
    }

    static let blocked = "2001:db8:7:700::1", sameSlash56 = "2001:db8:7:7ff::2", otherSlash56 = "2001:db8:7:800::1"

    @Test func requestsWithoutCredentialsOrForbiddenAreNeverCountedNorAnswered429() async throws {
        let log = LogCapture()
        try await TestServer.with(configure: Self.configure, logger: log.logger()) { server in
            let client = ["X-Forwarded-For": Self.blocked]
            for index in 0..<24 {
                let headers = index % 3 == 0 ? client
                    : client.merging(["Authorization": index % 3 == 1 ? "Basic !!!" : "Bearer abc"]) { $1 }
                let response = try await server.request("PROPFIND", "/dav/addressbooks/alice/", user: nil,
                                                        headers: headers.merging(["Depth": "0"]) { $1 })
                #expect(response.status == 401)
                #expect(response.headers["www-authenticate"] != nil)
                #expect(response.headers["retry-after"] == nil)
            }
            // Logged in but not allowed (bob in alice's book, which does not exist for him: 404):
            // not a failed login either.
            for _ in 0..<10 {
                let forbidden = try await server.request("PROPFIND", "/dav/addressbooks/alice/default/", user: "bob",
                                                         headers: client.merging(["Depth": "0"]) { $1 })
                #expect(forbidden.status == 404)
            }
            // Not one of those counted: a first wrong password is the first failure, free.
            let first = try await server.request("GET", "/dav/", password: "guess", headers: client)
            #expect(first.status == 401)
            #expect(log.messages(startingWith: "auth_failed") == ["auth_failed user=alice ip=\(Self.blocked) reason=bad_password"])
            // And the right password still gets in.
            let right = try await server.request("PROPFIND", "/dav/addressbooks/alice/", headers: client.merging(["Depth": "0"]) { $1 })
            #expect(right.status == 207)
        }
    }

    @Test func repeatedWrongPasswordsLeadTo429AndThenEvenTheRightPasswordIsRefused() async throws {
        let log = LogCapture()
        try await TestServer.with(configure: Self.configure, logger: log.logger()) { server in
            let client = ["X-Forwarded-For": Self.blocked]
            let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:t1\r\nFN:T\r\nN:T;;;;\r\nEND:VCARD\r\n"
            let cardPath = "/dav/addressbooks/alice/default/t1.vcf"
            // The right password first: the login is cached, and GETs of the card go the
            // inline path.
            let put = try await server.request("PUT", cardPath, headers: client.merging(["Content-Type": "text/vcard"]) { $1 },
                                               body: Data(card.utf8))
            #expect(put.status == 201)
            #expect(try await server.request("GET", cardPath, headers: client).status == 200)

            var statuses: [Int] = []
            var last: CurlResult?
            for _ in 0..<6 {
                let response = try await server.request("GET", "/dav/", password: "guess", headers: client)
                statuses.append(response.status)
                last = response
            }
            #expect(statuses == [401, 401, 401, 401, 401, 429])
            let retryAfter = try #require(last?.headers["retry-after"].flatMap { Int($0) })
            #expect((1...120).contains(retryAfter))
            #expect(last?.headers["www-authenticate"] == nil)

            // Blocked: the right password, cached or not, and a GET the inline path would
            // answer, all get the 429 (logged as throttled: no password check ran). So does
            // the rest of the /56.
            for (method, path, from) in [("PROPFIND", "/dav/addressbooks/alice/", Self.blocked), ("GET", cardPath, Self.blocked),
                                         ("GET", cardPath, Self.sameSlash56)] {
                let response = try await server.request(method, path, headers: ["X-Forwarded-For": from, "Depth": "0"])
                #expect(response.status == 429, "\(method) \(path) from \(from)")
                #expect(response.headers["retry-after"].flatMap { Int($0) }.map { (1...120).contains($0) } == true)
            }
            let otherUser = try await server.request("GET", "/dav/", user: "bob", headers: ["X-Forwarded-For": Self.sameSlash56])
            #expect(otherUser.status == 429)
            // Without credentials it is still the plain challenge.
            let anonymous = try await server.request("GET", "/dav/", user: nil, headers: client)
            #expect(anonymous.status == 401)

            // Another /56, and IPv4 clients, are not affected.
            let elsewhere = ["X-Forwarded-For": Self.otherSlash56]
            #expect(try await server.request("GET", cardPath, headers: elsewhere).status == 200)
            #expect(try await server.request("GET", "/dav/", password: "guess", headers: elsewhere).status == 401)
            #expect(try await server.request("GET", "/dav/", user: "mallory", password: "x",
                                             headers: ["X-Forwarded-For": "::ffff:198.51.100.9"]).status == 401)
            #expect(try await server.request("GET", cardPath, user: "alice", headers: ["X-Forwarded-For": "198.51.100.9"]).status == 200)

            let lines = log.messages(startingWith: "auth_failed")
            #expect(lines == Array(repeating: "auth_failed user=alice ip=\(Self.blocked) reason=bad_password", count: 6) + [
                "auth_failed user=alice ip=\(Self.blocked) reason=throttled",
                "auth_failed user=alice ip=\(Self.blocked) reason=throttled",
                "auth_failed user=alice ip=\(Self.sameSlash56) reason=throttled",
                "auth_failed user=bob ip=\(Self.sameSlash56) reason=throttled",
                "auth_failed user=alice ip=\(Self.otherSlash56) reason=bad_password",
                "auth_failed user=mallory ip=198.51.100.9 reason=unknown_user",
            ])
        }
    }
}
