import Foundation
import RoloStore
import Testing

/// Shared books, app passwords and the access history through real HTTP on a real SQLite
/// file: what a sharee's client sees through the mount, what it may do, what revocation
/// does mid-sync, what a scoped or revoked app password reaches, and what the history counts.
@Suite struct SharingHTTPTests {
    static let aliceBook = "/dav/addressbooks/alice/default/"
    static let mount = "/dav/addressbooks/bob/default~alice/"
    static let xml = ["Content-Type": "application/xml; charset=utf-8"]

    static func card(uid: String, name: String) -> Data {
        Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(name)\r\nN:\(name);;;;\r\nEMAIL:\(uid)@example.com\r\nEND:VCARD\r\n".utf8)
    }

    static func propfind(_ props: String) -> Data {
        Data("<?xml version=\"1.0\"?><d:propfind xmlns:d=\"DAV:\" xmlns:cs=\"http://calendarserver.org/ns/\"><d:prop>\(props)</d:prop></d:propfind>".utf8)
    }

    static func sync(_ token: String, data: Bool = true) -> Data {
        Data("""
            <?xml version="1.0"?><d:sync-collection xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
            <d:sync-token>\(token)</d:sync-token><d:sync-level>1</d:sync-level>\
            <d:prop><d:getetag/>\(data ? "<c:address-data/>" : "")</d:prop></d:sync-collection>
            """.utf8)
    }

    static func multiget(_ hrefs: [String]) -> Data {
        Data(("<?xml version=\"1.0\"?><c:addressbook-multiget xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:carddav\">"
              + "<d:prop><d:getetag/><c:address-data/></d:prop>"
              + hrefs.map { "<d:href>\($0)</d:href>" }.joined() + "</c:addressbook-multiget>").utf8)
    }

    /// The `<d:sync-token>` of a multistatus or PROPFIND answer.
    static func token(in text: String) -> String? {
        guard let start = text.range(of: "sync-token>"), let end = text[start.upperBound...].range(of: "</") else { return nil }
        return String(text[start.upperBound..<end.lowerBound])
    }

    /// Alice's book with three cards, shared with bob as `access`, accepted unless told.
    static func withSharedBook(_ access: ShareAccess, accepted: Bool = true,
                               _ body: (TestServer) async throws -> Void) async throws {
        try await TestServer.with(configure: { $0.accessHistoryFlushInterval = .milliseconds(50) }) { server in
            for (uid, name) in [("ann", "Ann"), ("ben", "Ben"), ("cy", "Cy")] {
                let put = try await server.request("PUT", aliceBook + "\(uid).vcf", headers: ["Content-Type": "text/vcard"],
                                                   body: card(uid: uid, name: name))
                #expect(put.status == 201)
            }
            try await server.store.shareBook(owner: "alice", book: "default", with: "bob", access: access, accepted: accepted)
            try await body(server)
        }
    }

    @Test func aPendingShareIsInvisibleUntilAccepted() async throws {
        try await Self.withSharedBook(.readOnly, accepted: false) { server in
            let home = try await server.request("PROPFIND", "/dav/addressbooks/bob/", user: "bob", headers: ["Depth": "1"],
                                                body: Self.propfind("<d:displayname/>"))
            #expect(home.status == 207 && !home.text.contains("default~alice"))
            #expect(try await server.request("PROPFIND", Self.mount, user: "bob", headers: ["Depth": "0"]).status == 404)
            #expect(try await server.request("GET", Self.mount + "ann.vcf", user: "bob").status == 404)
            try await server.store.acceptShare(sharee: "bob", owner: "alice", book: "default")
            #expect(try await server.request("GET", Self.mount + "ann.vcf", user: "bob").status == 200)
        }
    }

    @Test func aReadOnlyMountReadsLikeTheOwnersBookAndRefusesEveryWrite() async throws {
        try await Self.withSharedBook(.readOnly) { server in
            // The home lists bob's own default book first, then the mount.
            let home = try await server.request("PROPFIND", "/dav/addressbooks/bob/", user: "bob", headers: ["Depth": "1"],
                                                body: Self.propfind("<d:displayname/><d:owner/><d:current-user-privilege-set/>"))
            #expect(home.status == 207)
            let own = try #require(home.text.range(of: "/dav/addressbooks/bob/default/"))
            let mounted = try #require(home.text.range(of: Self.mount))
            #expect(own.lowerBound < mounted.lowerBound)
            #expect(home.text.contains("Contacts (alice)"))
            #expect(home.text.contains("/dav/principals/alice/"))

            // Read-only is exactly read + read-current-user-privilege-set.
            let book = try await server.request("PROPFIND", Self.mount, user: "bob", headers: ["Depth": "0"],
                                                body: Self.propfind("<d:current-user-privilege-set/><d:sync-token/><cs:getctag/>"))
            let privileges = book.text.components(separatedBy: "<d:privilege>").dropFirst().compactMap {
                $0.components(separatedBy: "/>").first?.replacingOccurrences(of: "<d:", with: "")
            }
            #expect(Set(privileges) == ["read", "read-current-user-privilege-set"], "\(book.text)")
            let ownerView = try await server.request("PROPFIND", Self.aliceBook, headers: ["Depth": "0"],
                                                     body: Self.propfind("<d:sync-token/>"))
            #expect(Self.token(in: book.text) != nil && Self.token(in: book.text) == Self.token(in: ownerView.text))

            // Every read method through the mount answers with the mount's hrefs.
            let get = try await server.request("GET", Self.mount + "ann.vcf", user: "bob")
            #expect(get.status == 200 && get.text.contains("FN:Ann"))
            #expect(try await server.request("HEAD", Self.mount + "ann.vcf", user: "bob").status == 200)
            let listing = try await server.request("PROPFIND", Self.mount, user: "bob", headers: ["Depth": "1"],
                                                   body: Self.propfind("<d:getetag/>"))
            #expect(listing.text.contains(Self.mount + "ben.vcf") && !listing.text.contains(Self.aliceBook))
            let multiget = try await server.request("REPORT", Self.mount, user: "bob", headers: Self.xml.merging(["Depth": "1"]) { $1 },
                                                    body: Self.multiget([Self.mount + "ann.vcf", Self.mount + "cy.vcf"]))
            #expect(multiget.status == 207 && multiget.text.contains("FN:Cy") && multiget.text.contains(Self.mount + "ann.vcf"))
            let query = try await server.request("REPORT", Self.mount, user: "bob", headers: Self.xml.merging(["Depth": "1"]) { $1 }, body: Data("""
                <?xml version="1.0"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
                <d:prop><d:getetag/></d:prop><c:filter><c:prop-filter name="FN"><c:text-match match-type="equals">Ben</c:text-match>\
                </c:prop-filter></c:filter></c:addressbook-query>
                """.utf8))
            #expect(query.text.contains(Self.mount + "ben.vcf") && !query.text.contains("ann.vcf"))
            let sync = try await server.request("REPORT", Self.mount, user: "bob", headers: Self.xml, body: Self.sync(""))
            #expect(sync.status == 207 && sync.text.contains(Self.mount + "cy.vcf"))

            // Writes: 403 need-privileges naming the resource, never 401; nothing changes.
            let put = try await server.request("PUT", Self.mount + "dan.vcf", user: "bob", headers: ["Content-Type": "text/vcard"],
                                               body: Self.card(uid: "dan", name: "Dan"))
            #expect(put.status == 403)
            #expect(put.text.contains("need-privileges") && put.text.contains("<d:href>\(Self.mount)</d:href>") && put.text.contains("<d:bind/>"))
            let edit = try await server.request("PUT", Self.mount + "ann.vcf", user: "bob", headers: ["Content-Type": "text/vcard"],
                                                body: Self.card(uid: "ann", name: "Changed"))
            #expect(edit.status == 403 && edit.text.contains("write-content"))
            let delete = try await server.request("DELETE", Self.mount + "ann.vcf", user: "bob")
            #expect(delete.status == 403 && delete.text.contains("unbind"))
            let proppatch = try await server.request("PROPPATCH", Self.mount, user: "bob", headers: Self.xml, body: Data("""
                <?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:displayname>Mine</d:displayname></d:prop></d:set></d:propertyupdate>
                """.utf8))
            #expect(proppatch.status == 403)
            let move = try await server.request("MOVE", Self.mount + "ann.vcf", user: "bob",
                                                headers: ["Destination": "/dav/addressbooks/bob/default/ann.vcf"])
            #expect(move.status == 403)
            // COPY out of a read-only mount into bob's own book is a read: allowed.
            let copy = try await server.request("COPY", Self.mount + "ann.vcf", user: "bob",
                                                headers: ["Destination": "/dav/addressbooks/bob/default/ann.vcf"])
            #expect(copy.status == 201)
            #expect(try await server.request("GET", Self.aliceBook + "ann.vcf").text.contains("FN:Ann"))
            // The owner's path answers 404 to bob, for reads and writes alike.
            #expect(try await server.request("GET", Self.aliceBook + "ann.vcf", user: "bob").status == 404)
            #expect(try await server.request("PROPFIND", Self.aliceBook, user: "bob", headers: ["Depth": "1"]).status == 404)
            #expect(try await server.request("DELETE", Self.aliceBook + "ann.vcf", user: "bob").status == 404)
            // MKCOL over the mount's name, or any '~' name, is refused.
            #expect(try await server.request("MKCOL", Self.mount, user: "bob").status == 403)
        }
    }

    @Test func aReadWriteMountWritesTheOwnersBookWithTheSameChangeLog() async throws {
        try await Self.withSharedBook(.readWrite) { server in
            let before = try await server.request("REPORT", Self.mount, user: "bob", headers: Self.xml, body: Self.sync("", data: false))
            let token = try #require(Self.token(in: before.text))

            let put = try await server.request("PUT", Self.mount + "dan.vcf", user: "bob", headers: ["Content-Type": "text/vcard"],
                                               body: Self.card(uid: "dan", name: "Dan"))
            #expect(put.status == 201)
            let etag = try #require(put.headers["etag"])
            let edit = try await server.request("PUT", Self.mount + "dan.vcf", user: "bob",
                                                headers: ["Content-Type": "text/vcard", "If-Match": etag],
                                                body: Self.card(uid: "dan", name: "Daniel"))
            #expect(edit.status == 204)
            #expect(try await server.request("DELETE", Self.mount + "cy.vcf", user: "bob").status == 204)
            let move = try await server.request("MOVE", Self.mount + "ben.vcf", user: "bob",
                                                headers: ["Destination": Self.mount + "benjamin.vcf"])
            #expect(move.status == 201)

            // The owner sees every change, in the same change log.
            #expect(try await server.request("GET", Self.aliceBook + "dan.vcf").text.contains("FN:Daniel"))
            #expect(try await server.request("GET", Self.aliceBook + "cy.vcf").status == 404)
            let ownerSync = try await server.request("REPORT", Self.aliceBook, headers: Self.xml, body: Self.sync(token, data: false))
            #expect(ownerSync.text.contains(Self.aliceBook + "dan.vcf") && ownerSync.text.contains(Self.aliceBook + "benjamin.vcf"))
            let shareeSync = try await server.request("REPORT", Self.mount, user: "bob", headers: Self.xml, body: Self.sync(token, data: false))
            #expect(shareeSync.text.contains(Self.mount + "cy.vcf") && Self.token(in: shareeSync.text) == Self.token(in: ownerSync.text))
            // Each change records who made it.
            let book = try #require(try await server.store.collection(owner: "alice", path: ["default"]))
            let changes = try await server.store.attributedChanges(collectionID: book.id, limit: 10)
            #expect(changes.first { $0.name == "dan.vcf" }?.user == "bob")
            #expect(changes.first { $0.name == "ann.vcf" }?.user == "alice")

            // Bob's DELETE of the mount leaves the share; alice's cards stay; bob's home moves.
            let homeBefore = try await server.request("PROPFIND", "/dav/addressbooks/bob/", user: "bob", headers: ["Depth": "0"],
                                                      body: Self.propfind("<cs:getctag/>"))
            #expect(try await server.request("DELETE", Self.mount, user: "bob").status == 204)
            let homeAfter = try await server.request("PROPFIND", "/dav/addressbooks/bob/", user: "bob", headers: ["Depth": "0"],
                                                     body: Self.propfind("<cs:getctag/>"))
            #expect(homeBefore.text != homeAfter.text)
            #expect(try await server.request("GET", Self.aliceBook + "ann.vcf").status == 200)
            #expect(try await server.store.shares(of: "alice").isEmpty)
        }
    }

    @Test func revokingAShareMidSyncAnswers404EverywhereUnderTheMount() async throws {
        try await Self.withSharedBook(.readWrite) { server in
            let first = try await server.request("REPORT", Self.mount, user: "bob", headers: Self.xml, body: Self.sync(""))
            let token = try #require(Self.token(in: first.text))
            try await server.store.removeShare(owner: "alice", book: "default", sharee: "bob")
            let sync = try await server.request("REPORT", Self.mount, user: "bob", headers: Self.xml, body: Self.sync(token))
            #expect(sync.status == 404)
            #expect(try await server.request("PROPFIND", Self.mount, user: "bob", headers: ["Depth": "0"]).status == 404)
            #expect(try await server.request("GET", Self.mount + "ann.vcf", user: "bob").status == 404)
            #expect(try await server.request("PUT", Self.mount + "x.vcf", user: "bob", headers: ["Content-Type": "text/vcard"],
                                             body: Self.card(uid: "x", name: "X")).status == 404)
            let home = try await server.request("PROPFIND", "/dav/addressbooks/bob/", user: "bob", headers: ["Depth": "1"])
            #expect(!home.text.contains("default~alice"))
            #expect(try await server.request("GET", Self.aliceBook + "ann.vcf").status == 200)
        }
    }

    @Test func appPasswordsAreScopedReadOnlyAndRevocable() async throws {
        try await Self.withSharedBook(.readWrite) { server in
            try await server.store.createCollection(owner: "alice", path: ["work"], kind: .addressBook, displayName: "Work", description: nil)
            let work = try await server.store.createAppPassword(user: "alice", name: "Work phone", readOnly: false, books: ["work"])
            // A home that lists only its book; the others answer 404.
            let home = try await server.request("PROPFIND", "/dav/addressbooks/alice/", password: work.secret, headers: ["Depth": "1"])
            #expect(home.status == 207 && home.text.contains("/dav/addressbooks/alice/work/") && !home.text.contains("alice/default/"))
            #expect(try await server.request("GET", Self.aliceBook + "ann.vcf", password: work.secret).status == 404)
            #expect(try await server.request("PUT", "/dav/addressbooks/alice/work/w.vcf", password: work.secret,
                                             headers: ["Content-Type": "text/vcard"], body: Self.card(uid: "w", name: "W")).status == 201)
            // Creating books is managing the account: a scoped password may not.
            #expect(try await server.request("MKCOL", "/dav/addressbooks/alice/more/", password: work.secret).status == 403)

            let reader = try await server.store.createAppPassword(user: "bob", name: "Tablet", readOnly: true, books: nil)
            let cups = try await server.request("PROPFIND", Self.mount, user: "bob", password: reader.secret, headers: ["Depth": "0"],
                                                body: Self.propfind("<d:current-user-privilege-set/>"))
            #expect(cups.status == 207 && !cups.text.contains("write"))
            let put = try await server.request("PUT", Self.mount + "t.vcf", user: "bob", password: reader.secret,
                                               headers: ["Content-Type": "text/vcard"], body: Self.card(uid: "t", name: "T"))
            #expect(put.status == 403 && put.text.contains("need-privileges"))
            // Leaving a share is the account's business, not a device's.
            #expect(try await server.request("DELETE", Self.mount, user: "bob", password: reader.secret).status == 403)
            // Someone else's name with the password: refused.
            #expect(try await server.request("GET", Self.mount + "ann.vcf", user: "alice", password: reader.secret).status == 401)

            #expect(try await server.request("GET", Self.mount + "ann.vcf", user: "bob", password: reader.secret).status == 200)
            try await server.store.revokeAppPassword(user: "bob", name: "Tablet")
            #expect(try await server.request("GET", Self.mount + "ann.vcf", user: "bob", password: reader.secret).status == 401)
        }
    }

    @Test func theAccountPasswordCanBeTurnedOffForDAV() async throws {
        try await TestServer.with { server in
            let phone = try await server.store.createAppPassword(user: "bob", name: "Phone", readOnly: false, books: nil)
            try await server.store.updateAccount(name: "bob", UserAccountUpdate(appPasswordsOnly: true))
            #expect(try await server.request("PROPFIND", "/dav/", user: "bob", headers: ["Depth": "0"]).status == 401)
            #expect(try await server.request("PROPFIND", "/dav/", user: "bob", password: phone.secret, headers: ["Depth": "0"]).status == 207)
        }
    }

    @Test func theHistoryCountsWhatWasServedPerCredentialAndBook() async throws {
        try await Self.withSharedBook(.readOnly) { server in
            let phone = try await server.store.createAppPassword(user: "bob", name: "Bob's phone", readOnly: false, books: nil)
            let first = try await server.request("REPORT", Self.mount, user: "bob", password: phone.secret,
                                                 headers: Self.xml.merging(["User-Agent": "DAVx5/4.4"]) { $1 }, body: Self.sync(""))
            #expect(first.status == 207)
            let multiget = try await server.request("REPORT", Self.mount, user: "bob", password: phone.secret, headers: Self.xml,
                                                    body: Self.multiget([Self.mount + "ann.vcf", Self.mount + "ben.vcf"]))
            #expect(multiget.status == 207)
            #expect(try await server.request("GET", Self.mount + "cy.vcf", user: "bob", password: phone.secret,
                                             headers: ["User-Agent": "DAVx5/4.4"]).status == 200)
            // The recorder flushes every 50 ms here; wait for the flush that holds all three.
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                let rows = try await server.store.accessHistory(user: "bob", since: Date(timeIntervalSince1970: 0))
                if let row = rows.hourlyTotal(where: { $0.credential == "Bob's phone" }), row.requests >= 3 { break }
                try await Task.sleep(for: .milliseconds(50))
            }

            let bobs = try await server.store.accessHistory(user: "bob", since: Date(timeIntervalSince1970: 0))
            let row = try #require(bobs.hourlyTotal { $0.credential == "Bob's phone" && $0.book == "default" })
            #expect(row.requests == 3 && row.cardsRead == 3 + 2 + 1 && row.fullDownload && row.bookOwner == "alice")
            // The owner sees bob's reads of her book, not his device.
            let alices = try await server.store.accessHistory(user: "alice", since: Date(timeIntervalSince1970: 0))
            let shared = try #require(alices.hourlyTotal { $0.user == "bob" })
            #expect(shared.cardsRead == 6 && shared.credential == nil)
            let used = try #require(try await server.store.appPasswords(user: "bob").first)
            #expect(used.lastAddress == "127.0.0.0/24" && used.lastUserAgent == "DAVx5/4.4")
        }
    }
}
