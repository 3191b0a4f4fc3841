import DAV
import DAVXML
import Foundation
import RoloServer
import RoloSQLite
import RoloStore
import Testing

/// Big listings are streamed over a real connection: they must arrive whole and
/// well-formed, and a failure half-way must cut the connection rather than end the body.
@Suite struct StreamedResponseTests {
    static let book = "/dav/addressbooks/alice/default/"

    /// `count` small cards imported straight into alice's default book.
    static func importCards(_ count: Int, into store: SQLiteStore) async throws {
        let book = try #require(try await store.collection(owner: "alice", path: ["default"]))
        let cards = (0..<count).map { index in
            let uid = "card-\(index)"
            let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:Person \(index)\r\nN:\(index);Person;;;\r\nEND:VCARD\r\n"
            return CardImport(name: uid + ".vcf", data: Data(text.utf8),
                              card: CardMetadata(uid: uid, kind: "individual", indexEntries: [IndexEntry(property: "FN", value: "Person \(index)")], members: []))
        }
        try await store.importCards(collectionID: book.id, cards: cards, batchSize: 1000, progress: nil)
    }

    @Test func propfindOfABookLargerThanAPageArrivesWholeAndWellFormed() async throws {
        try await TestServer.with { server in
            let count = 2_345 // more than two pages of 1000
            try await Self.importCards(count, into: server.store)
            let propfind = Data("""
                <?xml version="1.0" encoding="utf-8"?>
                <d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:getcontenttype/></d:prop></d:propfind>
                """.utf8)
            let response = try await server.request("PROPFIND", Self.book, headers: ["Depth": "1"], body: propfind)
            #expect(response.status == 207)
            #expect(response.headers["transfer-encoding"] == "chunked")
            #expect(response.headers["content-length"] == nil)
            let root = try XMLDocumentParser.parse([UInt8](response.body))
            let hrefs = root.children("DAV:", "response").map { $0.child("DAV:", "href")?.text ?? "" }
            #expect(hrefs.first == Self.book)
            #expect(hrefs.count == count + 1)
            #expect(Set(hrefs.dropFirst()) == Set((0..<count).map { Self.book + "card-\($0).vcf" }))
            let etags = root.children("DAV:", "response").dropFirst().compactMap {
                $0.child("DAV:", "propstat")?.child("DAV:", "prop")?.child("DAV:", "getetag")?.text
            }
            #expect(etags.count == count)
        }
    }

    @Test func initialSyncOfABookLargerThanAPageCarriesEveryCardAndTheToken() async throws {
        try await TestServer.with { server in
            let count = 1_500
            try await Self.importCards(count, into: server.store)
            let sync = Data("""
                <d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>
                """.utf8)
            let response = try await server.request("REPORT", Self.book, body: sync)
            #expect(response.status == 207)
            let root = try XMLDocumentParser.parse([UInt8](response.body))
            #expect(Set(root.children("DAV:", "response").compactMap { $0.child("DAV:", "href")?.text }).count == count)
            #expect(root.child("DAV:", "sync-token")?.text.isEmpty == false)
        }
    }

    @Test func aStreamFailingAfterTheHeadCutsTheConnectionInsteadOfEndingTheBody() async throws {
        struct Broken: Error {}
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = ServerConfiguration(port: 0, databasePath: folder.appendingPathComponent("rolo.sqlite").path,
                                                logLevel: .critical)
        let store = try SQLiteStore(path: configuration.databasePath, bcryptCost: 4)
        defer { try? store.close() }
        try await store.createUser(name: "alice", password: "alice-secret")
        let handler: DAVHandler = { _ in
            DAVResponse(status: 207, headers: [("Content-Type", "application/xml; charset=utf-8")],
                        streamedBody: DAVBodyStream { write in
                            try await write(Array("<?xml version=\"1.0\"?><d:multistatus xmlns:d=\"DAV:\">".utf8))
                            throw Broken()
                        })
        }
        let running = try await RoloServer(configuration: configuration, store: store, handler: handler).start()
        do {
            let response = try await Curl.run(["-X", "PROPFIND", "-u", "alice:alice-secret",
                                               "http://127.0.0.1:\(running.port)" + Self.book])
            #expect(response.status == 207)
            #expect(response.text.hasPrefix("<?xml"))
            #expect(!response.text.contains("</d:multistatus>"))
            #expect(throws: (any Error).self) { try XMLDocumentParser.parse([UInt8](response.body)) }
            // curl itself reports the cut: 18 is "transfer closed with outstanding read data".
            let exit = try await runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code} %{exitcode}",
                                                              "-X", "PROPFIND", "-u", "alice:alice-secret",
                                                              "http://127.0.0.1:\(running.port)" + Self.book])
            #expect(exit == "207 18")
            let health = try await Curl.run(["http://127.0.0.1:\(running.port)/health"])
            #expect(health.status == 200, "the server goes on serving")
        } catch {
            try? await running.shutdown()
            throw error
        }
        try await running.shutdown()
    }
}
