import DAV
import Foundation
import Testing

@Suite struct PutTests {
    @Test func newCardIs201WithETagThenReplaceIs204() async throws {
        let dav = try await TestDAV()
        let created = await dav.putCard(uid: "u1", fn: "Ann")
        #expect(created.status == 201)
        let etag = try #require(created.header("ETag"))
        let replaced = await dav.putCard(uid: "u1", fn: "Ann B")
        #expect(replaced.status == 204)
        #expect(replaced.header("ETag") != etag)
    }

    @Test func bytesAreStoredVerbatim() async throws {
        let dav = try await TestDAV()
        let body = "BEGIN:VCARD\nVERSION:4.0\nUID:verbatim\nFN:Zoë  Spaces\nX-CUSTOM;X-P=1:keep me\nEND:VCARD\n"
        let put = await dav.send("PUT", "/dav/addressbooks/alice/default/v.vcf", headers: ["content-type": "text/vcard; charset=utf-8"], body: body)
        #expect(put.status == 201)
        let get = await dav.send("GET", "/dav/addressbooks/alice/default/v.vcf")
        #expect(get.body == Data(body.utf8))
    }

    @Test func wrongContentTypeIs403WithSupportedAddressData() async throws {
        let dav = try await TestDAV()
        let response = await dav.putCard(uid: "u1", fn: "Ann", headers: ["content-type": "application/json"])
        #expect(response.status == 403)
        #expect(try response.errorConditions().contains("{urn:ietf:params:xml:ns:carddav}supported-address-data"))
    }

    @Test func legacyAndMissingContentTypesAreAccepted() async throws {
        let dav = try await TestDAV()
        #expect(await dav.putCard(uid: "a", fn: "A", headers: ["content-type": "text/x-vcard"]).status == 201)
        #expect(await dav.putCard(uid: "b", fn: "B", headers: [:]).status == 201)
    }

    @Test func invalidCardIs403ValidAddressDataWithMessage() async throws {
        let dav = try await TestDAV()
        let noUID = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:No Uid\r\nN:Uid;No;;;\r\nEND:VCARD\r\n"
        let response = await dav.send("PUT", "/dav/addressbooks/alice/default/n.vcf", headers: ["content-type": "text/vcard"], body: noUID)
        #expect(response.status == 403)
        let error = try response.xml()
        #expect(error.child("urn:ietf:params:xml:ns:carddav", "valid-address-data") != nil)
        #expect(error.child("urn:x-rolo:ns", "message")?.text.isEmpty == false)

        let garbage = await dav.send("PUT", "/dav/addressbooks/alice/default/g.vcf", headers: ["content-type": "text/vcard"], body: "hello")
        #expect(garbage.status == 403)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/g.vcf").status == 404)
    }

    @Test func twoCardsInOneBodyAreRefused() async throws {
        let dav = try await TestDAV()
        let body = Fixtures.card(uid: "a", fn: "A") + Fixtures.card(uid: "b", fn: "B")
        let response = await dav.send("PUT", "/dav/addressbooks/alice/default/ab.vcf", headers: ["content-type": "text/vcard"], body: body)
        #expect(response.status == 403)
        #expect(try response.errorConditions().contains("{urn:ietf:params:xml:ns:carddav}valid-address-data"))
    }

    @Test func vCard21IsRefusedAsUnsupportedAddressData() async throws {
        let dav = try await TestDAV()
        let body = "BEGIN:VCARD\r\nVERSION:2.1\r\nUID:old\r\nFN:Old\r\nN:Old;;;;\r\nEND:VCARD\r\n"
        let response = await dav.send("PUT", "/dav/addressbooks/alice/default/old.vcf", headers: ["content-type": "text/vcard"], body: body)
        #expect(response.status == 403)
        #expect(try response.errorConditions().contains("{urn:ietf:params:xml:ns:carddav}supported-address-data"))
    }

    @Test func duplicateUIDIs403NoUIDConflictNamingTheExistingCard() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "same", fn: "First", name: "first")
        let response = await dav.putCard(uid: "same", fn: "Second", name: "second")
        #expect(response.status == 403)
        let condition = try #require(try response.xml().child("urn:ietf:params:xml:ns:carddav", "no-uid-conflict"))
        #expect(condition.hrefs == ["/dav/addressbooks/alice/default/first.vcf"])
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/second.vcf").status == 404)
    }

    @Test func oversizedCardIsRefusedWithMaxResourceSize() async throws {
        let dav = try await TestDAV(configuration: DAVConfiguration(maxResourceSize: 200))
        let response = await dav.putCard(uid: "big", fn: "Big", extra: "NOTE:" + String(repeating: "x", count: 300))
        #expect(response.status == 413)
        #expect(try response.errorConditions().contains("{urn:ietf:params:xml:ns:carddav}max-resource-size"))
    }

    @Test func ifNoneMatchStarOnExistingCardIs412() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "u1", fn: "Ann")
        let response = await dav.putCard(uid: "u1", fn: "Other", headers: ["content-type": "text/vcard", "if-none-match": "*"])
        #expect(response.status == 412)
    }

    @Test func ifMatchWithStaleETagIs412AndCurrentETagSucceeds() async throws {
        let dav = try await TestDAV()
        let etag = try #require(await dav.putCard(uid: "u1", fn: "Ann").header("ETag"))
        #expect(await dav.putCard(uid: "u1", fn: "B", headers: ["content-type": "text/vcard", "if-match": "\"stale\""]).status == 412)
        #expect(await dav.putCard(uid: "u1", fn: "C", headers: ["content-type": "text/vcard", "if-match": etag]).status == 204)
    }

    @Test func putIntoPlainCollectionAcceptsAnyBytes() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("MKCOL", "/dav/addressbooks/alice/files/").status == 201)
        let put = await dav.send("PUT", "/dav/addressbooks/alice/files/notes.txt", headers: ["content-type": "text/plain"], body: "not a card")
        #expect(put.status == 201)
        let get = await dav.send("GET", "/dav/addressbooks/alice/files/notes.txt")
        #expect(get.text == "not a card")
        #expect(get.header("Content-Type") == "text/plain")
    }

    @Test func putWithMissingParentIs409AndOnCollectionIs405() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("PUT", "/dav/addressbooks/alice/nope/x.vcf", body: "x").status == 409)
        #expect(await dav.send("PUT", "/dav/addressbooks/alice/default/", body: "x").status == 405)
    }

    /// Which PUTs the server tells a store it may write with nothing of the card read
    /// (`LookupAhead.writesUnread`): an update naming one ETag, or a new card; nothing with an
    /// `If` header, both preconditions, several or weak-only lists, or a quota to count.
    @Test func onlyAnUpdateByOneETagOrANewCardMayGoUnread() async throws {
        let dav = try await TestDAV()
        let path = "/dav/addressbooks/alice/default/a.vcf"
        func unread(_ headers: [String: String], method: String = "PUT", in service: DAVService? = nil,
                    path: String = path) -> Bool {
            (service ?? dav.service).lookupAhead(forPath: path, method: method) { headers[$0] }?.writesUnread ?? false
        }
        #expect(unread(["if-match": "\"e1\""]))
        #expect(unread(["if-match": "W/\"e1\""]))
        #expect(unread(["if-none-match": "*"]))
        #expect(unread(["if-none-match": " * "]))
        #expect(!unread([:]), "no precondition: it may replace a card it never named")
        #expect(!unread(["if-match": "*"]))
        #expect(!unread(["if-match": "\"e1\", \"e2\""]))
        #expect(!unread(["if-none-match": "\"e1\""]))
        #expect(!unread(["if-match": "\"e1\"", "if-none-match": "*"]))
        #expect(!unread(["if-none-match": "*", "if": "(<urn:uuid:x>)"]))
        #expect(!unread(["if-match": "\"e1\"", "if": "(<urn:uuid:x>)"]))
        #expect(!unread(["if-none-match": "*"], method: "DELETE"))
        #expect(!unread(["if-none-match": "*"], path: "/dav/addressbooks/alice/default/"))
        let quota = try await TestDAV(configuration: DAVConfiguration(quotaBytes: 150))
        #expect(!unread(["if-none-match": "*"], in: quota.service))
        #expect(!unread(["if-match": "\"e1\""], in: quota.service))
    }

    @Test func quotaExceededIs507() async throws {
        let dav = try await TestDAV(configuration: DAVConfiguration(quotaBytes: 150))
        #expect(await dav.putCard(uid: "a", fn: "A").status == 201)
        let response = await dav.putCard(uid: "b", fn: "B", extra: "NOTE:" + String(repeating: "y", count: 100))
        #expect(response.status == 507)
    }
}
