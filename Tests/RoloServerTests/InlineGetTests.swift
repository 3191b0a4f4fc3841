import Foundation
import Testing
@testable import RoloServer

/// GETs of cards answered in the channel pipeline (`InlineGetHandler`), through a real
/// server: the same answers as the full path, in request order, counted and logged.
@Suite struct InlineGetTests {
    static let alice = "Basic " + Data("alice:alice-secret".utf8).base64EncodedString()

    static func card(_ uid: String, _ name: String) -> String {
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(name)\r\nEND:VCARD\r\n"
    }

    /// The headers that must match between two answers to the same request (not `Date`).
    static func comparable(_ headers: [String: String]) -> [String: String] {
        headers.filter { $0.key != "date" }
    }

    @Test func answersEqualThoseOfTheFullPath() async throws {
        try await TestServer.with { server in
            let path = server.configuration.basePath + "/addressbooks/alice/default/ada.vcf"
            let put = try await server.request("PUT", path, headers: ["Content-Type": "text/vcard"],
                                               body: Data(Self.card("ada", "Ada Lovelace").utf8))
            #expect(put.status == 201)
            let etag = try #require(put.headers["etag"])
            // The PUT verified alice's login, so her GETs are answered inline; with a query
            // string (which the engine ignores) the same GET takes the full path.
            let cases: [(String, [String: String])] = [
                ("GET", [:]), ("HEAD", [:]), ("GET", ["If-None-Match": etag]), ("GET", ["If-None-Match": "\"x\""]),
                ("GET", ["If-Match": "\"x\""]), ("GET", ["If-Match": etag]),
            ]
            for (method, headers) in cases {
                let inline = try await server.request(method, path, headers: headers)
                let full = try await server.request(method, path + "?full", headers: headers)
                #expect(inline.status == full.status, "\(method) \(headers)")
                #expect(Self.comparable(inline.headers) == Self.comparable(full.headers), "\(method) \(headers)")
                // `curl -I` writes a HEAD's header block (Date included) where a body would go.
                if method != "HEAD" { #expect(inline.body == full.body, "\(method) \(headers)") }
            }
            let missing = try await server.request("GET", server.configuration.basePath + "/addressbooks/alice/default/none.vcf")
            #expect(missing.status == 404)
            let others = try await server.request("GET", server.configuration.basePath + "/addressbooks/bob/default/ada.vcf")
            #expect(others.status == 404)
        }
    }

    /// The bytes on the wire, not just what curl makes of them: status line, field names,
    /// their order and values (but `Date`), and the body, for each kind of inline answer.
    @Test func wireBytesEqualThoseOfTheFullPath() async throws {
        try await TestServer.with { server in
            let path = server.configuration.basePath + "/addressbooks/alice/default/ada.vcf"
            let put = try await server.request("PUT", path, headers: ["Content-Type": "text/vcard"],
                                               body: Data(Self.card("ada", "Ada Lovelace").utf8))
            let etag = try #require(put.headers["etag"])
            let auth = ["Authorization": Self.alice]
            let cases: [(String, [String: String])] = [
                ("GET", auth), ("HEAD", auth), ("GET", auth.merging(["If-None-Match": etag]) { a, _ in a }),
                ("HEAD", auth.merging(["If-None-Match": etag]) { a, _ in a }),
                ("GET", auth.merging(["If-Match": "\"x\""]) { a, _ in a }), ("GET", auth.merging(["If-Match": etag]) { a, _ in a }),
            ]
            for (method, headers) in cases {
                // One connection each, so the first is answered inline and the second goes the full way.
                let answers = try await PipelinedConnection.exchange(port: server.port, [
                    PipelinedConnection.request(method, path, headers: headers),
                    PipelinedConnection.request(method, path + "?full", headers: headers),
                ])
                #expect(answers[0].linesWithoutDate == answers[1].linesWithoutDate, "\(method) \(headers)")
                #expect(answers[0].body == answers[1].body, "\(method) \(headers)")
                #expect(answers[0].head.contains("\r\nDate: ") && answers[1].head.contains("\r\nDate: "))
            }
        }
    }

    static func pipelined(_ book: String) -> [Data] {
        let auth = ["Authorization": Self.alice]
        return [
            PipelinedConnection.request("GET", book + "ada.vcf", headers: auth),
            PipelinedConnection.request("PUT", book + "bob.vcf", headers: auth.merging(["Content-Type": "text/vcard"]) { a, _ in a },
                                        body: Self.card("bob", "Bob Builder")),
            // Behind the PUT: must wait for it, and then see the card it stored.
            PipelinedConnection.request("GET", book + "bob.vcf", headers: auth),
            PipelinedConnection.request("HEAD", book + "bob.vcf", headers: auth),
            PipelinedConnection.request("GET", book + "none.vcf", headers: auth),
            PipelinedConnection.request("DELETE", book + "ada.vcf", headers: auth),
            PipelinedConnection.request("GET", book + "ada.vcf", headers: auth),
            PipelinedConnection.request("GET", book + "bob.vcf", headers: auth),
        ]
    }

    /// Pipelined in one write, or in 7-byte pieces a few milliseconds apart (heads and the
    /// PUT's body split over many reads): the answers come in request order.
    @Test(arguments: [nil, 7])
    func pipelinedRequestsAreAnsweredInTheirOrder(piece: Int?) async throws {
        try await TestServer.with { server in
            let book = server.configuration.basePath + "/addressbooks/alice/default/"
            let seed = try await server.request("PUT", book + "ada.vcf", headers: ["Content-Type": "text/vcard"],
                                                body: Data(Self.card("ada", "Ada Lovelace").utf8))
            #expect(seed.status == 201)  // alice's login is now cached: her GETs can be answered inline
            let answers = try await PipelinedConnection.exchange(port: server.port, Self.pipelined(book), piece: piece)
            #expect(answers.map(\.status) == [200, 201, 200, 200, 404, 204, 404, 200])
            #expect(answers[0].text == Self.card("ada", "Ada Lovelace"))
            #expect(answers[2].text == Self.card("bob", "Bob Builder"))
            #expect(answers[3].headers["content-length"] == String(Self.card("bob", "Bob Builder").utf8.count))
            #expect(answers[7].text == Self.card("bob", "Bob Builder"))
        }
    }

    /// The idle timeout now kept in front of the codec: a connection busy with inline GETs
    /// stays open past it, an idle one is closed.
    @Test func aBusyConnectionOutlivesTheIdleTimeout() async throws {
        try await TestServer.with(configure: { $0.idleTimeout = .seconds(1) }) { server in
            let path = server.configuration.basePath + "/addressbooks/alice/default/ada.vcf"
            _ = try await server.request("PUT", path, headers: ["Content-Type": "text/vcard"],
                                         body: Data(Self.card("ada", "Ada Lovelace").utf8))
            let get = PipelinedConnection.request("GET", path, headers: ["Authorization": Self.alice])
            let (statuses, closed) = try await PipelinedConnection.with(port: server.port) { connection in
                var statuses: [Int] = []
                for _ in 0..<8 {
                    try connection.send(get)
                    statuses.append(try connection.answer().status)
                    usleep(300_000)
                }
                return (statuses, try connection.closedByServer(within: 5))
            }
            #expect(statuses == Array(repeating: 200, count: 8))
            #expect(closed)
        }
    }

    @Test func inlineAnswersAreCountedAndLogged() async throws {
        try await TestServer.with { server in
            let path = server.configuration.basePath + "/addressbooks/alice/default/ada.vcf"
            _ = try await server.request("PUT", path, headers: ["Content-Type": "text/vcard"],
                                         body: Data(Self.card("ada", "Ada Lovelace").utf8))
            let answers = try await PipelinedConnection.exchange(port: server.port, Array(
                repeating: PipelinedConnection.request("GET", path, headers: ["Authorization": Self.alice]), count: 5))
            #expect(answers.allSatisfy { $0.status == 200 })
            let metrics = try await server.request("GET", "/metrics", user: nil)
            #expect(metrics.text.contains(#"rolo_http_requests_total{method="GET",status="200"} 5"#))
        }
    }

    @Test func theTestAPISeesEveryGET() async throws {
        try await TestServer.withTestAPI { server in
            let path = server.configuration.basePath + "/addressbooks/alice/default/ada.vcf"
            _ = try await server.request("PUT", path, headers: ["Content-Type": "text/vcard"],
                                         body: Data(Self.card("ada", "Ada Lovelace").utf8))
            try await server.addFault(["fault": "status", "status": 503, "method": "GET", "count": 1])
            #expect(try await server.request("GET", path).status == 503)
            #expect(try await server.request("GET", path).status == 200)
            #expect(try await server.loggedRequests().map { $0["method"] as? String } == ["PUT", "GET", "GET"])
        }
    }
}
