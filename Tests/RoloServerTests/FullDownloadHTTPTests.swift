import Foundation
import RoloStore
import Testing

/// The access history's "full download" flag (Docs/privacy.md tells users to watch it)
/// through real HTTP, for every way a client reads a whole book: a new app password of the
/// owner's, and a sharee on the mount (issue 29: neither's first sync raised it).
@Suite struct FullDownloadHTTPTests {
    typealias Sharing = SharingHTTPTests

    /// Who reads: the owner's new app password on her book, or bob on his mount of it.
    enum Reader: CaseIterable, CustomStringConvertible {
        case appPassword, sharee
        var description: String { self == .appPassword ? "app password" : "sharee" }
        var book: String { self == .appPassword ? Sharing.aliceBook : Sharing.mount }
    }

    /// The ways to read the whole book of three cards.
    enum WholeRead: CaseIterable {
        case syncFromEmpty, propfindWithAddressData, multigetOfEveryCard, queryMatchingEveryCard, getOfTheBook
    }

    static func query() -> Data {
        Data("""
            <?xml version="1.0"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
            <d:prop><d:getetag/><c:address-data/></d:prop><c:filter><c:prop-filter name="FN"/></c:filter></c:addressbook-query>
            """.utf8)
    }

    @Test(arguments: Reader.allCases, WholeRead.allCases)
    func everyWayOfReadingTheWholeBookIsFlagged(reader: Reader, read: WholeRead) async throws {
        try await Sharing.withSharedBook(.readOnly) { server in
            let (user, password) = try await Self.credentials(reader, server)
            let book = reader.book
            let response: CurlResult
            switch read {
            case .syncFromEmpty:
                response = try await server.request("REPORT", book, user: user, password: password, headers: Sharing.xml,
                                                    body: Sharing.sync(""))
            case .propfindWithAddressData:
                response = try await server.request("PROPFIND", book, user: user, password: password,
                                                    headers: Sharing.xml.merging(["Depth": "1"]) { $1 },
                                                    body: Data("""
                                                        <?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
                                                        <d:prop><d:getetag/><c:address-data/></d:prop></d:propfind>
                                                        """.utf8))
            case .multigetOfEveryCard:
                response = try await server.request("REPORT", book, user: user, password: password, headers: Sharing.xml,
                                                    body: Sharing.multiget(["ann", "ben", "cy"].map { book + $0 + ".vcf" }))
            case .queryMatchingEveryCard:
                response = try await server.request("REPORT", book, user: user, password: password,
                                                    headers: Sharing.xml.merging(["Depth": "1"]) { $1 }, body: Self.query())
            case .getOfTheBook:
                response = try await server.request("GET", book, user: user, password: password)
            }
            #expect(response.status == (read == .getOfTheBook ? 200 : 207), "\(response.text)")
            #expect(response.text.components(separatedBy: "BEGIN:VCARD").count - 1 == 3, "\(response.text)")
            let row = try await Self.historyRow(reader, server)
            #expect(row.fullDownload, "\(reader), \(read): \(row)")
            #expect(row.cardsRead == 3)
        }
    }

    @Test(arguments: Reader.allCases)
    func readingPartOfTheBookIsNotFlagged(reader: Reader) async throws {
        try await Sharing.withSharedBook(.readOnly) { server in
            let (user, password) = try await Self.credentials(reader, server)
            let book = reader.book
            let multiget = try await server.request("REPORT", book, user: user, password: password, headers: Sharing.xml,
                                                    body: Sharing.multiget([book + "ann.vcf", book + "ben.vcf", book + "nobody.vcf"]))
            #expect(multiget.status == 207)
            #expect(try await server.request("GET", book + "cy.vcf", user: user, password: password).status == 200)
            let row = try await Self.historyRow(reader, server, requests: 2)
            #expect(row.cardsRead == 3)
            #expect(!row.fullDownload, "\(reader): \(row)")
        }
    }

    /// A new app password of alice's, or bob's account password.
    static func credentials(_ reader: Reader, _ server: TestServer) async throws -> (String, String) {
        switch reader {
        case .appPassword:
            let phone = try await server.store.createAppPassword(user: "alice", name: "New phone", readOnly: true, books: nil)
            return ("alice", phone.secret)
        case .sharee:
            return ("bob", "bob-secret")
        }
    }

    /// The reader's row of the history once the recorder (every 50 ms here) has flushed
    /// `requests` of them; for a sharee, also the row the owner sees, which must agree.
    static func historyRow(_ reader: Reader, _ server: TestServer, requests: Int = 1) async throws -> AccessRecord {
        let user = reader == .appPassword ? "alice" : "bob"
        let matches = { (row: AccessRecord) in
            reader == .appPassword ? row.credential == "New phone" : row.bookOwner == "alice" && row.book == "default"
        }
        let deadline = ContinuousClock.now + .seconds(30)
        var found: AccessRecord?
        // Polled once more after the deadline (a loaded machine may wake this task late).
        while true {
            let rows = try await server.store.accessHistory(user: user, since: Date(timeIntervalSince1970: 0))
            found = rows.hourlyTotal(where: matches).flatMap { $0.requests >= requests ? $0 : nil }
            if found != nil || ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let row = try #require(found, "no history row for the \(reader)")
        if reader == .sharee {
            let alices = try await server.store.accessHistory(user: "alice", since: Date(timeIntervalSince1970: 0))
            let seen = try #require(alices.hourlyTotal { $0.user == "bob" })
            #expect(seen.fullDownload == row.fullDownload)
        }
        return row
    }
}
