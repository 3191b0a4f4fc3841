import Foundation
import RoloServer
import RoloTestControl
import Testing

/// The `/_rolo/` endpoints over real HTTP: off unless configured, bearer token, request log
/// and marks, rule management, reset.
@Suite struct TestControlAPITests {
    static let book = "/dav/addressbooks/alice/default/"

    static func card(_ uid: String, name: String = "Someone") -> Data {
        Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(name)\r\nN:\(name);;;;\r\nEND:VCARD\r\n".utf8)
    }

    static func put(_ server: TestServer, _ uid: String, name: String = "Someone",
                    user: String? = "alice") async throws -> CurlResult {
        try await server.request("PUT", book + uid + ".vcf", user: user,
                                 headers: ["Content-Type": "text/vcard; charset=utf-8"], body: card(uid, name: name))
    }

    @Test func controlPathsAnswerLikeUnknownPathsWhenTheAPIIsOff() async throws {
        try await TestServer.with { server in
            let unknown = try await server.request("GET", "/no-such-thing")
            let control = try await server.control("POST", "reset")
            let controlWithBasic = try await server.request("GET", "/_rolo/requests")
            #expect(unknown.status == 404)
            #expect(controlWithBasic.status == 404)
            #expect(control.status == 401, "without the API, /_rolo/ asks for DAV credentials like any path")
            #expect(control.headers["www-authenticate"]?.hasPrefix("Basic") == true)
            #expect(try await server.request("PROPFIND", Self.book, headers: ["Depth": "0"]).status == 207)
        }
    }

    @Test func missingOrWrongBearerTokenIsRefusedWith401JSON() async throws {
        try await TestServer.withTestAPI { server in
            let missing = try await server.control("GET", "faults", token: nil)
            let wrong = try await server.control("GET", "faults", token: "not-the-token")
            let prefix = try await server.control("GET", "faults", token: String(TestServer.controlToken.dropLast()))
            let basic = try await server.request("GET", "/_rolo/faults")
            for response in [missing, wrong, prefix, basic] {
                #expect(response.status == 401)
                #expect(response.headers["content-type"] == "application/json")
                #expect(response.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
                #expect(try response.jsonObject()["error"] is String)
            }
            #expect(try await server.control("GET", "faults").status == 200)
        }
    }

    @Test func unknownEndpointIs404AndWrongMethodIs405() async throws {
        try await TestServer.withTestAPI { server in
            let unknown = try await server.control("GET", "nothing-here")
            #expect(unknown.status == 404)
            #expect(try unknown.jsonObject()["error"] is String)
            #expect(try await server.control("GET", "reset").status == 405)
            #expect(try await server.control("PUT", "faults").status == 405)
            let index = try await server.control("GET", "")
            #expect(index.status == 200)
            #expect((try index.jsonObject()["endpoints"] as? [String])?.contains("POST /_rolo/reset") == true)
        }
    }

    @Test func requestLogListsWhatClientsSentSinceAMark() async throws {
        try await TestServer.withTestAPI { server in
            #expect(try await Self.put(server, "before").status == 201)
            let mark = try await server.control("POST", "marks", json: ["name": "start"]).jsonObject()
            #expect(mark["name"] as? String == "start")
            let markNumber = try #require(mark["mark"] as? Int)

            #expect(try await Self.put(server, "ada", name: "Ada").status == 201)
            #expect(try await server.request("GET", Self.book + "ada.vcf").status == 200)

            for since in ["start", String(markNumber)] {
                let logged = try await server.loggedRequests(since: since)
                #expect(logged.count == 2)
                let put = try #require(logged.first)
                #expect(put["method"] as? String == "PUT")
                #expect(put["path"] as? String == Self.book + "ada.vcf")
                #expect(put["status"] as? Int == 201)
                #expect(put["user"] as? String == "alice")
                #expect(put["bodyLength"] as? Int == Self.card("ada", name: "Ada").count)
                #expect(put["bodySHA256"] as? String == (try await sha256Hex(Self.card("ada", name: "Ada"))))
                #expect((put["headers"] as? [String: String])?["content-type"] == "text/vcard; charset=utf-8")
                #expect((put["headers"] as? [String: String])?["authorization"] == nil)
                #expect(put["durationMilliseconds"] is Double)
                #expect((put["seq"] as? Int ?? 0) > markNumber)
                let get = logged[1]
                #expect(get["method"] as? String == "GET")
                #expect(get["bodyLength"] as? Int == 0)
                #expect((get["seq"] as? Int ?? 0) > (put["seq"] as? Int ?? 0))
            }
            #expect(try await server.loggedRequests().count == 3)
            #expect(try await server.control("GET", "requests?since=no-such-mark").status == 404)
            #expect(try await server.control("POST", "marks", json: ["name": "12"]).status == 400)
        }
    }

    @Test func refusedRequestIsLoggedWithoutUserOrUnreadBody() async throws {
        try await TestServer.withTestAPI { server in
            #expect(try await Self.put(server, "anonymous", user: nil).status == 401)
            let logged = try await server.loggedRequests()
            let entry = try #require(logged.first)
            #expect(logged.count == 1)
            #expect(entry["status"] as? Int == 401)
            #expect(entry["user"] == nil)
            #expect(entry["bodySHA256"] == nil, "the server answered before reading the body")
        }
    }

    @Test func controlRequestsAreNeitherLoggedNorFaulted() async throws {
        try await TestServer.withTestAPI { server in
            try await server.addFault(["fault": "status", "status": 500, "count": 3])
            #expect(try await server.control("POST", "marks").status == 200)
            let rules = try await server.faultRules()
            #expect(rules.first?["remaining"] as? Int == 3)
            #expect(try await server.loggedRequests().isEmpty)
        }
    }

    @Test func faultRulesAreListedAndRemovedOneOrAll() async throws {
        try await TestServer.withTestAPI { server in
            let first = try await server.addFault(["fault": "status", "status": 503, "method": "put",
                                                   "path": "/dav/**", "count": 2])
            #expect(first["id"] as? Int == 1)
            #expect(first["remaining"] as? Int == 2)
            #expect(first["method"] as? String == "PUT")
            try await server.addFault(["fault": "delay", "delayMilliseconds": 10])
            try await server.addFault(["fault": "drop-connection"])
            #expect(try await server.faultRules().map { $0["id"] as? Int } == [1, 2, 3])

            let removed = try await server.control("DELETE", "faults/2")
            #expect(try removed.jsonObject()["removed"] as? Int == 1)
            #expect(try await server.control("DELETE", "faults/2").status == 404)
            #expect(try await server.faultRules().map { $0["id"] as? Int } == [1, 3])

            let all = try await server.control("DELETE", "faults")
            #expect(try all.jsonObject()["removed"] as? Int == 2)
            #expect(try await server.faultRules().isEmpty)
        }
    }

    @Test func invalidFaultRulesAreRefusedWithAReasonAndNotInstalled() async throws {
        try await TestServer.withTestAPI { server in
            let invalid: [[String: Any]] = [
                ["fault": "status", "status": 503, "methd": "PUT"],
                ["fault": "status"],
                ["fault": "status", "status": 99],
                ["fault": "status", "status": 503, "headers": ["Bad Name": "x"]],
                ["fault": "delay"],
                ["fault": "delay", "delayMilliseconds": -1],
                ["fault": "precondition-failed", "method": "GET"],
                ["fault": "expire-sync-token", "method": "PROPFIND"],
                ["fault": "status", "status": 503, "path": "dav/*"],
                ["fault": "status", "status": 503, "count": 0],
                ["fault": "explode"],
                ["status": 503],
            ]
            for rule in invalid {
                let response = try await server.control("POST", "faults", json: rule)
                #expect(response.status == 400, "\(rule)")
                #expect((try? response.jsonObject()["error"] as? String)?.isEmpty == false, "\(rule)")
            }
            let notJSON = try await server.request("POST", "/_rolo/faults", user: nil,
                                                   headers: ["Authorization": "Bearer \(TestServer.controlToken)"],
                                                   body: Data("fault=status".utf8))
            #expect(notJSON.status == 400)
            #expect(try await server.faultRules().isEmpty)
        }
    }

    @Test func resetErasesTheStoreAndForgetsRulesLogAndCachedLogins() async throws {
        try await TestServer.withTestAPI { server in
            #expect(try await Self.put(server, "ada").status == 201)
            try await server.addFault(["fault": "status", "status": 503, "path": "/nowhere"])
            let reset = try await server.control("POST", "reset")
            #expect(reset.status == 200)
            let fixtures = try #require(try reset.jsonObject()["fixtures"] as? [String: Int])
            #expect(fixtures == ["users": 0, "books": 0, "cards": 0])
            #expect(try await server.faultRules().isEmpty)
            #expect(try await server.loggedRequests().isEmpty)
            // alice's login was cached by the PUT; after the reset she no longer exists.
            #expect(try await server.request("PROPFIND", Self.book, headers: ["Depth": "0"]).status == 401)
            #expect(try await server.store.listUsers().isEmpty)
        }
    }

    @Test func resetReleasesDAVLocks() async throws {
        try await TestServer.withTestAPI { server in
            #expect(try await Self.put(server, "locked").status == 201)
            let lockBody = Data("""
                <?xml version="1.0" encoding="utf-8"?>
                <D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>
                """.utf8)
            let lock = try await server.request("LOCK", Self.book + "locked.vcf",
                                                headers: ["Content-Type": "application/xml"], body: lockBody)
            #expect(lock.status == 200)
            #expect(try await Self.put(server, "locked").status == 423)

            #expect(try await server.control("POST", "reset").status == 200)
            try await server.store.createUser(name: "alice", password: "alice-secret")
            #expect(try await Self.put(server, "locked").status == 201, "the lock went with the reset")
        }
    }

    /// A fixture folder in a fresh temporary directory: `users` maps user → book → card files.
    static func fixtureFolder(_ users: [String: [String: [String: String]]], passwords: [String: String] = [:]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-fixtures-\(UUID().uuidString)")
        for (user, books) in users {
            let home = root.appendingPathComponent(user)
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            if let password = passwords[user] { try Data((password + "\n").utf8).write(to: home.appendingPathComponent("password")) }
            for (book, files) in books {
                let folder = home.appendingPathComponent(book)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
            }
        }
        return root
    }

    static func cardText(_ uid: String, name: String) -> String {
        String(decoding: card(uid, name: name), as: UTF8.self)
    }

    @Test func resetRestoresTheConfiguredFixtures() async throws {
        let folder = try Self.fixtureFolder(["carol": ["default": ["ada.vcf": Self.cardText("ada", name: "Ada")],
                                                       "work": ["team.vcf": Self.cardText("t1", name: "One") + Self.cardText("t2", name: "Two")]]],
                                            passwords: ["carol": "carol-pw"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixtures = try FixtureSet(directory: folder.path)
        try await TestServer.withTestAPI(fixtures: [fixtures]) { server in
            let first = try await server.control("POST", "reset")
            #expect(try first.jsonObject()["fixtures"] as? [String: Int] == ["users": 1, "books": 2, "cards": 3])
            let card = "/dav/addressbooks/carol/default/ada.vcf"
            let original = try await server.request("GET", card, user: "carol", password: "carol-pw")
            #expect(original.status == 200)
            #expect(original.text.contains("FN:Ada"))
            #expect(try await server.request("PROPFIND", Self.book, headers: ["Depth": "0"]).status == 401, "alice is gone")

            let changed = try await server.request("PUT", card, user: "carol", password: "carol-pw",
                                                   headers: ["Content-Type": "text/vcard"], body: Self.card("ada", name: "Changed"))
            #expect(changed.status == 204 || changed.status == 200)
            #expect(try await server.request("DELETE", "/dav/addressbooks/carol/work/", user: "carol", password: "carol-pw").status == 204)

            #expect(try await server.control("POST", "reset").status == 200)
            let restored = try await server.request("GET", card, user: "carol", password: "carol-pw")
            #expect(restored.body == original.body)
            #expect(restored.headers["etag"] == original.headers["etag"])
            let work = try await server.request("PROPFIND", "/dav/addressbooks/carol/work/", user: "carol", password: "carol-pw",
                                                headers: ["Depth": "1"])
            #expect(work.status == 207)
            #expect(work.text.components(separatedBy: ".vcf</").count - 1 == 2)
        }
    }

    @Test func fixturesEndpointLoadsAFolderOnTopOfTheStore() async throws {
        let folder = try Self.fixtureFolder(["alice": ["extra": ["x.vcf": Self.cardText("x", name: "Xavier")]],
                                             "dave": ["default": ["d.vcf": Self.cardText("d", name: "Dee")]]])
        defer { try? FileManager.default.removeItem(at: folder) }
        try await TestServer.withTestAPI { server in
            #expect(try await Self.put(server, "kept").status == 201)
            let loaded = try await server.control("POST", "fixtures", json: ["directory": folder.path])
            #expect(loaded.status == 200)
            #expect(try loaded.jsonObject()["fixtures"] as? [String: Int] == ["users": 2, "books": 2, "cards": 2])
            #expect(try await server.request("GET", "/dav/addressbooks/alice/extra/x.vcf").text.contains("FN:Xavier"))
            #expect(try await server.request("GET", Self.book + "kept.vcf").status == 200, "what was there stays")
            #expect(try await server.request("GET", "/dav/addressbooks/dave/default/d.vcf", user: "dave", password: "dave").status == 200)
        }
    }

    @Test func brokenFixtureFolderIsRefusedNamingTheFileAndChangesNothing() async throws {
        let folder = try Self.fixtureFolder(["erin": ["default": ["good.vcf": Self.cardText("g", name: "Good"),
                                                                  "bad.vcf": "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Bad\r\nTEL;TYPE=\"cell:+1\r\nEND:VCARD\r\n"]]])
        defer { try? FileManager.default.removeItem(at: folder) }
        try await TestServer.withTestAPI { server in
            let refused = try await server.control("POST", "fixtures", json: ["directory": folder.path])
            #expect(refused.status == 400)
            #expect((try refused.jsonObject()["path"] as? String)?.hasSuffix("erin/default/bad.vcf") == true)
            #expect(try await server.store.listUsers().sorted() == ["alice", "bob"])
            let missing = try await server.control("POST", "fixtures", json: ["directory": folder.path + "-nowhere"])
            #expect(missing.status == 400)
            #expect(try await server.control("POST", "fixtures", json: [:]).status == 400)
        }
    }
}
