import Foundation
import RoloStore
import Testing

/// The JSON API under `/api/` through real HTTP: shares from both sides, app passwords, the
/// access history; bad input refused with a JSON error and nothing changed; app passwords
/// refused outright.
@Suite struct AccountAPIHTTPTests {
    static let json = ["Content-Type": "application/json"]

    static func object(_ result: CurlResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: result.body)) as? [String: Any] ?? [:]
    }

    static func list(_ result: CurlResult) -> [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: result.body)) as? [[String: Any]] ?? []
    }

    /// An admin manages other users' shares with `rolo share` on the server, never through
    /// their own account (`Access.decide`): the API refuses and changes nothing.
    @Test func anAdminCannotAcceptOrRemoveSomeoneElsesShareThroughTheAPI() async throws {
        try await TestServer.with { server in
            try await server.store.createUser(name: "root", password: "root-pw")
            try await server.store.updateAccount(name: "root", UserAccountUpdate(admin: true))
            try await server.store.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: false)
            let accept = try await server.request("POST", "/api/shares/alice/default/bob/accept", user: "root", password: "root-pw")
            #expect(accept.status == 403)
            #expect(Self.object(accept)["error"] as? String == "Only the sharee accepts a share.")
            let remove = try await server.request("DELETE", "/api/shares/alice/default/bob", user: "root", password: "root-pw")
            #expect(remove.status == 403)
            #expect(Self.object(remove)["error"] as? String == "Only the owner or the sharee removes a share.")
            let shares = try await server.store.shares(of: "alice")
            #expect(shares.count == 1 && shares.first?.state == .pending)
        }
    }

    @Test func sharesAreOfferedAcceptedAndLeftThroughTheAPI() async throws {
        try await TestServer.with { server in
            // Bad input: a clear JSON error, and no share made.
            let refused: [(Data, Int, String)] = [
                (Data(#"{"book":"default","sharee":"alice"}"#.utf8), 400, "own owner"),
                (Data(#"{"book":"default","sharee":"zed"}"#.utf8), 400, "no user zed"),
                (Data(#"{"book":"nope","sharee":"bob"}"#.utf8), 404, "Not found"),
                (Data(#"{"book":"default","sharee":"bob","access":"all"}"#.utf8), 400, "access must be"),
                (Data("not json".utf8), 400, "JSON object"),
            ]
            for (body, status, message) in refused {
                let answer = try await server.request("POST", "/api/shares", headers: Self.json, body: body)
                #expect(answer.status == status, "\(answer.text)")
                #expect((Self.object(answer)["error"] as? String)?.contains(message) == true, "\(answer.text)")
            }
            #expect(try await server.store.shares(of: "alice").isEmpty)

            let offered = try await server.request("POST", "/api/shares", headers: Self.json,
                                                   body: Data(#"{"book":"default","sharee":"bob","access":"read-write"}"#.utf8))
            #expect(offered.status == 201)
            #expect(Self.object(offered)["state"] as? String == "pending" && Self.object(offered)["mount"] as? String == "default~alice")
            let bobs = Self.object(try await server.request("GET", "/api/shares", user: "bob"))
            #expect((bobs["received"] as? [[String: Any]])?.first?["owner"] as? String == "alice")
            #expect((bobs["given"] as? [[String: Any]])?.isEmpty == true)

            // Only the sharee accepts (alice is no admin).
            #expect(try await server.request("POST", "/api/shares/alice/default/bob/accept").status == 403)
            #expect(try await server.request("PROPFIND", "/dav/addressbooks/bob/default~alice/", user: "bob",
                                             headers: ["Depth": "0"]).status == 404)
            let accepted = try await server.request("POST", "/api/shares/alice/default/bob/accept", user: "bob")
            #expect(accepted.status == 200 && Self.object(accepted)["state"] as? String == "accepted")
            #expect(try await server.request("PROPFIND", "/dav/addressbooks/bob/default~alice/", user: "bob",
                                             headers: ["Depth": "0"]).status == 207)

            // A third user can neither accept nor remove it.
            try await server.store.createUser(name: "carol", password: "carol-pw")
            #expect(try await server.request("DELETE", "/api/shares/alice/default/bob", user: "carol", password: "carol-pw").status == 403)
            // The sharee leaves: the mount answers 404 at once.
            #expect(try await server.request("DELETE", "/api/shares/alice/default/bob", user: "bob").status == 204)
            #expect(try await server.request("PROPFIND", "/dav/addressbooks/bob/default~alice/", user: "bob",
                                             headers: ["Depth": "0"]).status == 404)
            #expect(try await server.request("DELETE", "/api/shares/alice/default/bob", user: "bob").status == 404)
        }
    }

    @Test func appPasswordsAreMadeListedAndRevokedButNeverManageTheAccount() async throws {
        try await TestServer.with(configure: { $0.accessHistoryFlushInterval = .milliseconds(50) }) { server in
            let made = try await server.request("POST", "/api/tokens", user: "bob", headers: Self.json,
                                                body: Data(#"{"name":"Phone","read_only":true,"books":["default"]}"#.utf8))
            #expect(made.status == 201)
            let secret = try #require(Self.object(made)["secret"] as? String)
            #expect(secret.hasPrefix("rolo_") && Self.object(made)["books"] as? [String] == ["default"])
            let again = try await server.request("POST", "/api/tokens", user: "bob", headers: Self.json,
                                                 body: Data(#"{"name":"Phone"}"#.utf8))
            #expect(again.status == 400 && again.text.contains("already has an app password"))
            let listed = try await server.request("GET", "/api/tokens", user: "bob")
            #expect(Self.list(listed).map { $0["name"] as? String } == ["Phone"] && !listed.text.contains(secret))

            // The app password opens DAV, read-only, and never the API.
            #expect(try await server.request("GET", "/api/tokens", user: "bob", password: secret).status == 403)
            #expect(try await server.request("POST", "/api/tokens", user: "bob", password: secret, headers: Self.json,
                                             body: Data(#"{"name":"Sneaky"}"#.utf8)).status == 403)
            #expect(try await server.request("PROPFIND", "/dav/addressbooks/bob/default/", user: "bob", password: secret,
                                             headers: ["Depth": "1"]).status == 207)
            // The access history is written by a background flush (every 50 ms here).
            func phoneReadDefault() async throws -> Bool {
                let history = Self.list(try await server.request("GET", "/api/access?since=2000-01-01", user: "bob"))
                return history.contains { $0["credential"] as? String == "Phone" && $0["book"] as? String == "default" }
            }
            try await eventually(phoneReadDefault)
            #expect(try await phoneReadDefault())
            #expect(try await server.request("GET", "/api/access?since=yesterday", user: "bob").status == 400)

            #expect(try await server.request("DELETE", "/api/tokens/Phone", user: "bob").status == 204)
            #expect(try await server.request("PROPFIND", "/dav/addressbooks/bob/default/", user: "bob", password: secret,
                                             headers: ["Depth": "0"]).status == 401)
            #expect(try await server.request("DELETE", "/api/tokens/Phone", user: "bob").status == 404)
            // Without credentials: the usual challenge.
            #expect(try await server.request("GET", "/api/shares", user: nil).status == 401)
            #expect(try await server.request("GET", "/api/nothing").status == 404)
        }
    }
}
