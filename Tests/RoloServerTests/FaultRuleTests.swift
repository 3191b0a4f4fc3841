import Foundation
import Testing

/// Each fault kind changes the DAV answer exactly as configured, only for requests the
/// rule matches, and the server answers normally again after N of them.
@Suite struct FaultRuleTests {
    static let book = TestControlAPITests.book

    static func put(_ server: TestServer, _ uid: String, name: String = "Someone",
                    headers: [String: String] = [:]) async throws -> CurlResult {
        try await server.request("PUT", book + uid + ".vcf",
                                 headers: headers.merging(["Content-Type": "text/vcard"]) { first, _ in first },
                                 body: TestControlAPITests.card(uid, name: name))
    }

    @Test func statusFaultAnswersTheConfiguredResponseForNMatchingRequestsThenNormally() async throws {
        try await TestServer.withTestAPI { server in
            try await server.addFault(["fault": "status", "method": "PUT", "path": Self.book + "*.vcf", "count": 2,
                                       "status": 503, "body": "busy, try later\n", "headers": ["Retry-After": "2"]])
            let first = try await Self.put(server, "a")
            #expect(first.status == 503)
            #expect(first.text == "busy, try later\n")
            #expect(first.headers["retry-after"] == "2")
            #expect(first.headers["content-type"] == "text/plain; charset=utf-8")
            // Requests the rule does not match neither fail nor count down.
            #expect(try await server.request("GET", Self.book + "a.vcf").status == 404, "the faulted PUT stored nothing")
            #expect(try await server.request("PUT", "/dav/addressbooks/alice/other.vcf",
                                             body: TestControlAPITests.card("x")).status != 503)
            #expect(try await server.faultRules().first?["remaining"] as? Int == 1)

            #expect(try await Self.put(server, "b").status == 503)
            #expect(try await server.faultRules().isEmpty)
            #expect(try await Self.put(server, "c").status == 201)

            let faulted = try await server.loggedRequests().filter { $0["fault"] as? Int == 1 }
            #expect(faulted.count == 2)
            #expect(faulted.first?["bodySHA256"] as? String == (try await sha256Hex(TestControlAPITests.card("a"))),
                    "a refused body is still logged")
        }
    }

    @Test func statusFaultWithoutBodySendsAnEmptyOne() async throws {
        try await TestServer.withTestAPI { server in
            try await server.addFault(["fault": "status", "method": "PROPFIND", "status": 500])
            let response = try await server.request("PROPFIND", Self.book, headers: ["Depth": "0"])
            #expect(response.status == 500)
            #expect(response.body.isEmpty)
            #expect(try await server.request("PROPFIND", Self.book, headers: ["Depth": "0"]).status == 207)
        }
    }

    @Test func delayFaultWaitsThenAnswersNormally() async throws {
        try await TestServer.withTestAPI { server in
            try await server.addFault(["fault": "delay", "path": "/health", "delayMilliseconds": 400])
            let delayed = try await server.request("GET", "/health", user: nil)
            #expect(delayed.status == 200)
            #expect(delayed.text == "ok\n")
            #expect(delayed.seconds >= 0.4)
            #expect(try await server.faultRules().isEmpty)
            let logged = try await server.loggedRequests()
            #expect(logged.first?["fault"] as? Int == 1)
            #expect((logged.first?["durationMilliseconds"] as? Double ?? 0) >= 400)
        }
    }

    @Test func dropConnectionFaultSendsTheHeadThenCutsTheBody() async throws {
        try await TestServer.withTestAPI { server in
            let card = TestControlAPITests.card("cut", name: String(repeating: "Long Name ", count: 40))
            #expect(try await Self.put(server, "cut", name: String(repeating: "Long Name ", count: 40)).status == 201)
            try await server.addFault(["fault": "drop-connection", "method": "GET", "path": Self.book + "cut.vcf"])
            let url = server.base + Self.book + "cut.vcf"

            let cut = try await curlAllowingFailure(["-u", "alice:alice-secret", url])
            #expect(cut.exitCode == 18, "curl: transfer closed with outstanding read data remaining")
            #expect(cut.headerBlock.hasPrefix("HTTP/1.1 200"))
            #expect(cut.headerBlock.lowercased().contains("content-length: \(card.count)"))
            #expect(cut.body.count == card.count / 2)
            #expect(cut.body == card.prefix(card.count / 2))

            let whole = try await curlAllowingFailure(["-u", "alice:alice-secret", url])
            #expect(whole.exitCode == 0)
            #expect(whole.body == card)
        }
    }

    @Test func dropConnectionFaultOnAnEmptyBodyStillBreaksTheResponse() async throws {
        try await TestServer.withTestAPI { server in
            try await server.addFault(["fault": "drop-connection", "method": "PUT"])
            let url = server.base + Self.book + "empty-answer.vcf"
            let cut = try await curlAllowingFailure(["-u", "alice:alice-secret", "-X", "PUT", "-H", "Content-Type: text/vcard",
                                                     "--data-binary", String(decoding: TestControlAPITests.card("e"), as: UTF8.self), url])
            #expect(cut.exitCode == 18)
            #expect(cut.headerBlock.hasPrefix("HTTP/1.1 201"))
            // The request itself was handled: the card is stored, only the answer was lost.
            #expect(try await server.request("GET", Self.book + "empty-answer.vcf").status == 200)
        }
    }

    @Test func preconditionFailedFaultRefusesAPutAsIfEditedConcurrently() async throws {
        try await TestServer.withTestAPI { server in
            let created = try await Self.put(server, "ada", name: "Ada")
            let etag = try #require(created.headers["etag"])
            try await server.addFault(["fault": "precondition-failed", "path": Self.book + "ada.vcf"])
            #expect(try await server.faultRules().first?["method"] as? String == "PUT")

            let refused = try await Self.put(server, "ada", name: "Ada Changed", headers: ["If-Match": etag])
            #expect(refused.status == 412)
            let stored = try await server.request("GET", Self.book + "ada.vcf")
            #expect(stored.text.contains("FN:Ada\r\n"), "the refused PUT changed nothing")
            #expect(stored.headers["etag"] == etag)

            let accepted = try await Self.put(server, "ada", name: "Ada Changed", headers: ["If-Match": etag])
            #expect(accepted.status == 204 || accepted.status == 200)
            #expect(try await server.request("GET", Self.book + "ada.vcf").text.contains("FN:Ada Changed"))
        }
    }

    static func syncCollection(_ server: TestServer, token: String) async throws -> CurlResult {
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <D:sync-collection xmlns:D="DAV:"><D:sync-token>\(token)</D:sync-token><D:sync-level>1</D:sync-level>\
            <D:prop><D:getetag/></D:prop></D:sync-collection>
            """
        return try await server.request("REPORT", book, headers: ["Content-Type": "application/xml", "Depth": "1"],
                                        body: Data(body.utf8))
    }

    static func syncToken(in response: CurlResult) throws -> String {
        let text = response.text
        let start = try #require(text.range(of: "sync-token>"))
        let end = try #require(text.range(of: "</", range: start.upperBound..<text.endIndex))
        return String(text[start.upperBound..<end.lowerBound])
    }

    @Test func expireSyncTokenFaultForcesAFullResyncForNTokenSyncs() async throws {
        try await TestServer.withTestAPI { server in
            #expect(try await Self.put(server, "ada").status == 201)
            let initial = try await Self.syncCollection(server, token: "")
            #expect(initial.status == 207)
            let token = try Self.syncToken(in: initial)
            try await server.addFault(["fault": "expire-sync-token", "count": 2])

            // An initial sync carries no token: the rule leaves it alone and does not count it.
            #expect(try await Self.syncCollection(server, token: "").status == 207)
            #expect(try await server.faultRules().first?["remaining"] as? Int == 2)

            var expiredBodies: [String] = []
            for _ in 0..<2 {
                let expired = try await Self.syncCollection(server, token: token)
                #expect(expired.status == 403)
                #expect(expired.headers["content-type"] == "application/xml; charset=utf-8")
                expiredBodies.append(expired.text)
            }
            // What the engine answers a token it does not know, minus its human-readable message.
            let genuine = try await Self.syncCollection(server, token: "http://rolo.invalid/sync/999/1")
            #expect(genuine.status == 403)
            let withoutMessage = genuine.text.replacing(/<(\w+):message[^>]*>[^<]*<\/\1:message>/, with: "")
            #expect(withoutMessage.contains("valid-sync-token"))
            #expect(expiredBodies == [withoutMessage, withoutMessage])
            let normal = try await Self.syncCollection(server, token: token)
            #expect(normal.status == 207)
            #expect(try Self.syncToken(in: normal) == token, "nothing changed since the token")
        }
    }

    @Test func firstMatchingRuleWinsAndOnlyItCountsDown() async throws {
        try await TestServer.withTestAPI { server in
            try await server.addFault(["fault": "status", "status": 507, "path": "/health"])
            try await server.addFault(["fault": "status", "status": 502, "path": "/**"])
            #expect(try await server.request("GET", "/health", user: nil).status == 507)
            #expect(try await server.faultRules().map { $0["id"] as? Int } == [2])
            #expect(try await server.request("GET", "/health", user: nil).status == 502)
            #expect(try await server.request("GET", "/health", user: nil).status == 200)
        }
    }
}
