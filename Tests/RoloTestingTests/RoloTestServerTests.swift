import Foundation
import RoloServer
import RoloTestControl
import RoloTesting
import Testing

/// RoloTesting as a client's test suite uses it: one call starts a real server on a free
/// loopback port, requests go over real HTTP, and the server is gone afterwards.
@Suite struct RoloTestServerTests {
    struct Boom: Error {}

    @Test func withRoloServerServesRealHTTPWithItsCredentialsAndStopsAfterwards() async throws {
        let (port, databasePath) = try await withRoloServer { server in
            #expect(server.username == "admin")
            #expect(server.password.count == 20)
            #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)/dav/")
            #expect(server.testAPIToken == nil)
            let home = try await server.send("PROPFIND", "addressbooks/admin/", headers: ["Depth": "0"])
            #expect(home.status == 207)
            let wrong = try await server.send("PROPFIND", "addressbooks/admin/", headers: ["Depth": "0"],
                                              authorization: "Basic " + Data("admin:nope".utf8).base64EncodedString())
            #expect(wrong.status == 401)
            #expect(FileManager.default.fileExists(atPath: server.store.path))
            return (server.port, server.store.path)
        }
        #expect(await !RoloTestServer.isListening(port: port))
        #expect(!FileManager.default.fileExists(atPath: databasePath))
    }

    @Test func withRoloServerStopsTheServerWhenTheBodyThrows() async throws {
        let ports = PortBox()
        await #expect(throws: Boom.self) {
            try await withRoloServer { server in
                ports.port = server.port
                #expect(await RoloTestServer.isListening(port: server.port))
                throw Boom()
            }
        }
        #expect(ports.port > 0)
        #expect(await !RoloTestServer.isListening(port: ports.port))
    }

    @Test func fixturesGiveUsersBooksAndCardsStoredAsAClientWould() async throws {
        let folder = try FixtureFolder.sample()
        defer { folder.remove() }
        try await withRoloServer(.init(fixtures: [folder.path])) { server in
            #expect(server.username == "alice")
            #expect(server.password == "s3cret")
            let books = try await server.send("PROPFIND", "addressbooks/alice/", headers: ["Depth": "1"])
            #expect(books.status == 207)
            #expect(books.text.contains("/dav/addressbooks/alice/default/"))
            #expect(books.text.contains("/dav/addressbooks/alice/work/"))

            let work = try await server.send("PROPFIND", "addressbooks/alice/work/", headers: ["Depth": "1"])
            #expect(work.text.contains("/dav/addressbooks/alice/work/alan.vcf"))
            #expect(!work.text.contains("notes"))

            let ada = try await server.send("GET", "addressbooks/alice/default/ada.vcf")
            #expect(ada.text == "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ada\r\nFN:Ada Lovelace\r\nN:Lovelace;Ada;;;\r\nEND:VCARD\r\n")

            // The 2.1 card without UID: converted to 3.0, with a UID digested from its bytes.
            let names = try #require(try await server.store.collection(owner: "alice", path: ["default"]))
            let stored = try await server.store.listResources(collectionID: names.id).map(\.name).sorted()
            #expect(stored.count == 2)
            let babbageName = try #require(stored.first { $0 != "ada.vcf" })
            let babbage = try await server.send("GET", "addressbooks/alice/default/\(babbageName)")
            #expect(babbage.text.contains("VERSION:3.0\r\n"))
            #expect(babbage.text.contains("UID:\(babbageName.dropLast(4))\r\n"))

            let bob = "Basic " + Data("bob:bob".utf8).base64EncodedString()
            let bobsEmptyBook = try await server.send("PROPFIND", "addressbooks/bob/empty/", headers: ["Depth": "1"],
                                                      authorization: bob)
            #expect(bobsEmptyBook.status == 207)
            #expect(bobsEmptyBook.text.components(separatedBy: "<d:response>").count - 1 == 1)
        }
    }

    @Test func cardsWithoutUIDGetTheSameNameOnEveryStart() async throws {
        let folder = try FixtureFolder.sample()
        defer { folder.remove() }
        var listings: [[String]] = []
        for _ in 0..<2 {
            listings.append(try await withRoloServer(.init(fixtures: [folder.path])) { server in
                let book = try #require(try await server.store.collection(owner: "bob", path: ["default"]))
                return try await server.store.listResources(collectionID: book.id).map { "\($0.name) \($0.etag)" }
            })
        }
        #expect(listings[0].count == 1)
        #expect(listings[0] == listings[1])
    }

    @Test func anInvalidCardFailsNamingItsFileBeforeAnythingStarts() async throws {
        let folder = try FixtureFolder([
            "carol/default/good.vcf": "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:g\r\nFN:Good\r\nN:;Good;;;\r\nEND:VCARD\r\n",
            // Fixtures are read leniently, like imports: only a card no reader can read fails.
            "carol/default/bad.vcf": "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:bad\r\nFN:Bad\r\nTEL;TYPE=\"cell:+1\r\nEND:VCARD\r\n",
        ])
        defer { folder.remove() }
        let error = await #expect(throws: FixtureError.self) {
            _ = try await RoloTestServer.start(.init(fixtures: [folder.path]))
        }
        #expect(error?.path.hasSuffix("carol/default/bad.vcf") == true)
        #expect(error?.reason.hasPrefix("card 1:") == true, "\(String(describing: error))")
    }

    @Test func aMissingFixtureFolderIsAFixtureError() throws {
        let error = #expect(throws: FixtureError.self) {
            _ = try FixtureSet(directory: "/nonexistent/rolo-fixtures")
        }
        #expect(error?.reason == "not a folder")
    }

    @Test func theTestAPIExistsWithItsTokenOnlyWhenAskedFor() async throws {
        try await withRoloServer(.init(testAPI: true)) { server in
            let token = try #require(server.testAPIToken)
            #expect(token.wholeMatch(of: /[0-9a-f]{32}/) != nil)
            let endpoints = try await server.send("GET", "/_rolo/", authorization: "Bearer \(token)")
            #expect(endpoints.status == 200)
            #expect(endpoints.text.contains("/_rolo/reset"))
            #expect(try await server.send("GET", "/_rolo/", authorization: "Bearer wrong").status == 401)
        }
        try await withRoloServer { server in #expect(server.testAPIToken == nil) }
    }
}

/// Carries the port out of a throwing body.
final class PortBox: @unchecked Sendable {
    var port = 0
}
