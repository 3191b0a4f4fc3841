import Foundation
import Testing

/// The endpoints the server answers itself, without credentials.
@Suite struct ServerEndpointTests {
    @Test func healthAnswersOkWithoutCredentials() async throws {
        try await TestServer.with { server in
            let response = try await server.request("GET", "/health", user: nil)
            #expect(response.status == 200)
            #expect(response.text == "ok\n")
        }
    }

    @Test func everyAnswerCarriesTheCurrentDateAndTheServerName() async throws {
        try await TestServer.with { server in
            for (method, path, user) in [("GET", "/health", nil), ("PROPFIND", "/dav/", nil), ("GET", "/dav/nothing", "alice")] {
                // Whole seconds: the header has no finer ones.
                let before = Date().timeIntervalSince1970.rounded(.down)
                let response = try await server.request(method, path, user: user)
                let after = Date().timeIntervalSince1970
                #expect(response.headers["server"] == "Rolo")
                let date = try #require(response.headers["date"], "no Date header on \(method) \(path)")
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "GMT")
                formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
                let sent = try #require(formatter.date(from: date), "not an IMF-fixdate: \(date)")
                // Taken while the request was answered: not a cached or stale date. Bracketed
                // by the test's own clock readings rather than a bound on the difference, which
                // a loaded run's wait for the test task to resume could exceed.
                #expect(sent.timeIntervalSince1970 >= before && sent.timeIntervalSince1970 <= after,
                        "\(date) outside the request's [\(before), \(after)]")
            }
        }
    }

    @Test func wellKnownCardDAVRedirectsToDAVRootWithoutCredentials() async throws {
        try await TestServer.with { server in
            for method in ["GET", "PROPFIND"] {
                let response = try await server.request(method, "/.well-known/carddav", user: nil)
                #expect(response.status == 301)
                #expect(response.headers["location"] == "/dav/")
            }
        }
    }

    @Test func wellKnownFollowsTheConfiguredBasePath() async throws {
        try await TestServer.with(configure: { $0.basePath = "/carddav/" }) { server in
            let response = try await server.request("GET", "/.well-known/carddav", user: nil)
            #expect(response.headers["location"] == "/carddav/")
        }
    }

    @Test func optionsNeedsNoCredentials() async throws {
        try await TestServer.with { server in
            let response = try await server.request("OPTIONS", "/dav/", user: nil)
            #expect(response.status != 401)
            #expect(response.headers["www-authenticate"] == nil)
        }
    }

    @Test func metricsCountRequestsByMethodAndStatus() async throws {
        try await TestServer.with { server in
            _ = try await server.request("GET", "/health", user: nil)
            _ = try await server.request("PROPFIND", "/dav/", user: nil)
            let metrics = try await server.request("GET", "/metrics", user: nil)
            #expect(metrics.status == 200)
            #expect(metrics.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(metrics.text.contains(#"rolo_http_requests_total{method="GET",status="200"} 1"#))
            #expect(metrics.text.contains(#"rolo_http_requests_total{method="PROPFIND",status="401"} 1"#))
            #expect(metrics.text.contains("rolo_http_request_duration_seconds_count 2"))
        }
    }

    @Test func metricsGaugesReportWhatTheStoreHolds() async throws {
        try await TestServer.with { server in
            let card = "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:m-1\r\nFN:Metric Card\r\nEND:VCARD\r\n"
            let put = try await server.request("PUT", "/dav/addressbooks/alice/default/m-1.vcf",
                                               headers: ["Content-Type": "text/vcard"], body: Data(card.utf8))
            #expect(put.status == 201)
            let text = try await server.request("GET", "/metrics", user: nil).text
            func gauge(_ name: String) -> Double? {
                text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
                    .flatMap { Double($0.split(separator: " ")[1]) }
            }
            #expect(gauge("rolo_users") == 2)
            #expect(gauge("rolo_address_books") == 2)
            #expect(gauge("rolo_cards") == 1)
            #expect((gauge("rolo_database_size_bytes") ?? 0) > 0)
            #expect(text.contains("# TYPE rolo_http_request_duration_seconds histogram"))
        }
    }
}
