import CardIndexing
import Foundation
import LDAPClient
import LDAPTestSupport
import Synchronization
import Testing
@testable import RoloServer
import RoloStore

/// The directory filled from a real slapd (issue 32): 2,000 generated people, more than the
/// server's size limit of 500 for one plain search, come in through paged searches; a change
/// in LDAP is one changed card; malformed values are left out with a note naming the user
/// and the attribute; "My card" wins where the user set something; a person removed from
/// LDAP leaves the directory (and an account of theirs loses its mount).
@Suite struct DirectoryLDAPTests {
    static let people = 2000
    static let mount = "/dav/addressbooks/alice/directory~rolo/"

    /// A rebuild as `rolo directory sync` runs it (under the lease the server's own takes),
    /// with the values it left out.
    static func rebuild(_ server: TestServer, _ settings: LDAPSourceSettings) async throws -> (DirectorySyncReport, [String]) {
        let result = Mutex<(DirectorySyncReport, [String])?>(nil)
        let rebuild = DirectoryRebuild(store: server.store, mode: .all, ldap: settings)
        for _ in 0..<600 {
            let ran = try await server.store.withMaintenanceLease("directory") {
                var notes: [String] = []
                let report = try await rebuild.run { notes.append($0) }
                result.withLock { $0 = (report, notes) }
            }
            if ran { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try #require(result.withLock { $0 }, "the directory lease was never free")
    }

    /// Waits for the server's own rebuild at start to end (it mounts the directory in bob's
    /// home last): the lease keeps other processes out, not another task of this one.
    static func waitForFirstRebuild(_ server: TestServer) async throws {
        for _ in 0..<600 {
            let mount = try await server.request("PROPFIND", "/dav/addressbooks/bob/directory~rolo/", user: "bob",
                                                 headers: ["Depth": "0"])
            if mount.status == 207 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the server's first rebuild never mounted the directory in bob's home")
    }

    /// The cards in the directory's book.
    static func cardNames(_ server: TestServer) async throws -> Set<String> {
        guard let book = try await server.store.collection(owner: DirectoryRules.owner, path: [DirectoryRules.book]) else { return [] }
        return Set(try await server.store.listResources(collectionID: book.id).map(\.name))
    }

    @Test func twoThousandPeopleFillTheDirectoryAndAnLDAPChangeIsOneChangedCard() async throws {
        try await withTestDirectory(people: Self.people) { directory async throws in
            let settings = LDAPSourceTests.settings(directory)
            try await TestServer.with(configure: {
                $0.directory = .all
                $0.authSources = [.ldap, .local]
                $0.ldap = settings
            }) { server async throws in
                // The server's first rebuild, at start: everyone, whether or not they signed in.
                // TestServer's local alice and bob keep their own cards (the directory's alice
                // and bob are other people's namesakes); carol comes from LDAP.
                let expected = Self.people + 3
                for _ in 0..<1200 {
                    if try await Self.cardNames(server).count >= expected { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                try await Self.waitForFirstRebuild(server)
                let names = try await Self.cardNames(server)
                #expect(names.count == expected)
                #expect(names.contains("person0001.vcf") && names.contains("person2000.vcf") && names.contains("carol@example.org.vcf"))
                let card = try await server.request("GET", Self.mount + "person0042.vcf")
                #expect(card.status == 200, "\(card.status)")
                for line in ["FN:Person Number42", "TITLE:Engineer 0", "ORG:Example;dept-2", "+1 555 0042", "+1 666 0042",
                             "person0042@example.org"] {
                    #expect(card.text.contains(line), "\(line) missing from \(card.text)")
                }
                let local = try await server.request("GET", Self.mount + "alice.vcf")
                #expect(local.status == 200 && !local.text.contains("Alice Archer"), "\(local.text)")
                let (quiet, _) = try await Self.rebuild(server, settings)
                #expect(quiet.isEmpty, "\(quiet.lines)")

                // One title changed, a phone with letters and a photo over the limit added,
                // one person removed: one change, one removal, two notes.
                let photo = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [UInt8](repeating: 0, count: 300_000))
                try directory.modify("""
                    dn: uid=person0042,ou=people,dc=example,dc=org
                    changetype: modify
                    replace: title
                    title: Chief Engineer
                    -
                    add: telephoneNumber
                    telephoneNumber: call me
                    -
                    add: jpegPhoto
                    jpegPhoto:: \(photo.base64EncodedString())

                    dn: uid=person0100,ou=people,dc=example,dc=org
                    changetype: delete

                    """)
                let etagBefore = card.headers["etag"]
                let (report, notes) = try await Self.rebuild(server, settings)
                #expect(report.changed == ["person0042"] && report.removed == ["person0100"] && report.added.isEmpty,
                        "\(report.lines)")
                #expect(notes.contains { $0.hasPrefix("person0042: telephoneNumber") }, "\(notes)")
                #expect(notes.contains { $0.hasPrefix("person0042: jpegPhoto") }, "\(notes)")
                let changed = try await server.request("GET", Self.mount + "person0042.vcf")
                #expect(changed.text.contains("TITLE:Chief Engineer") && changed.text.contains("+1 555 0042")
                        && !changed.text.contains("call me") && !changed.text.contains("PHOTO"), "\(changed.text)")
                #expect(changed.headers["etag"] != etagBefore)
                #expect(try await server.request("GET", Self.mount + "person0100.vcf").status == 404)
            }
        }
    }

    @Test func myCardWinsOverLDAPAndAPersonRemovedFromLDAPLeavesTheDirectory() async throws {
        try await withTestDirectory(people: 20) { directory async throws in
            let settings = LDAPSourceTests.settings(directory)
            try await TestServer.with(configure: {
                $0.directory = .all
                $0.authSources = [.ldap, .local]
                $0.ldap = settings
            }) { server async throws in
                try await Self.waitForFirstRebuild(server)
                // person0007 signs in: an account of the ldap source, then the directory in her home.
                let user = TestDirectory.personName(7)
                let home = try await server.request("PROPFIND", "/dav/addressbooks/\(user)/", user: user,
                                                    password: TestDirectory.password(of: user), headers: ["Depth": "0"])
                #expect(home.status == 207, "\(home.status)")
                try await server.store.setDirectoryEntry(user: user, DirectoryEntry(email: "", title: "Head of Boats"))
                let (mine, _) = try await Self.rebuild(server, settings)
                #expect(mine.changed == [user] && mine.mounted == [user], "\(mine.lines)")
                let card = try await server.request("GET", Self.mount + "\(user).vcf")
                #expect(card.text.contains("TITLE:Head of Boats") && !card.text.contains("EMAIL")
                        && card.text.contains("FN:Person Number7") && card.text.contains("+1 555 0007"), "\(card.text)")
                let mount = try await server.request("PROPFIND", "/dav/addressbooks/\(user)/directory~rolo/", user: user,
                                                     password: TestDirectory.password(of: user), headers: ["Depth": "0"])
                #expect(mount.status == 207, "\(mount.status)")

                // Opting out is hers too.
                try await server.store.setDirectoryEntry(user: user, DirectoryEntry(title: "Head of Boats", hidden: true))
                let (out, _) = try await Self.rebuild(server, settings)
                #expect(out.removed == [user], "\(out.lines)")
                try await server.store.setDirectoryEntry(user: user, DirectoryEntry())
                let (back, _) = try await Self.rebuild(server, settings)
                #expect(back.added == [user], "\(back.lines)")

                // Removed from LDAP: her card goes, and so does the directory from her home.
                try directory.modify("""
                    dn: uid=\(user),ou=people,dc=example,dc=org
                    changetype: delete

                    """)
                let (gone, _) = try await Self.rebuild(server, settings)
                #expect(gone.removed == [user] && gone.unmounted == [user] && gone.changed.isEmpty, "\(gone.lines)")
                #expect(try await server.request("GET", Self.mount + "\(user).vcf").status == 404)
            }
        }
    }

    /// "Fields a user hid never leave the server" holds for values from LDAP too: person0007
    /// hides her LDAP phones and title on "My card", and they are in no answer (GET,
    /// multiget, sync) nor brought back by the next rebuild from LDAP; unticked, they return.
    @Test func aFieldHiddenOnMyCardIsInNoAnswerEvenWhenLDAPHoldsIt() async throws {
        try await withTestDirectory(people: 20) { directory async throws in
            let settings = LDAPSourceTests.settings(directory)
            try await TestServer.with(configure: {
                $0.directory = .all
                $0.authSources = [.ldap, .local]
                $0.ldap = settings
            }) { server async throws in
                try await Self.waitForFirstRebuild(server)
                let user = TestDirectory.personName(7)
                let path = Self.mount + "\(user).vcf"
                let before = try await server.request("GET", path)
                #expect(before.text.contains("+1 555 0007") && before.text.contains("+1 666 0007") && before.text.contains("TITLE:"),
                        "\(before.text)")
                // Her first sign-in is in the browser: LDAP makes her account (local is listed too).
                #expect(try await server.store.account(name: user) == nil)
                let browser = WebUIHTTPTests.Browser(server)
                let signIn = try await browser.signIn(user, TestDirectory.password(of: user))
                #expect(signIn.status == 303, "\(signIn.status) \(signIn.text)")
                let page = try await browser.get("/web/account")
                var form = try #require(HTMLForm(in: page.text, id: "directory-form"), "\(page.text)")
                // Her name box is empty (her account's name, LDAP's cn, is only its placeholder):
                // saving leaves the card's name LDAP's displayName.
                #expect(form.values("display_name") == [""] && before.text.contains("FN:Person Number7"), "\(before.text)")
                form.set("hide_phone", to: "on")
                form.set("hide_title", to: "on")
                // A colleague's change in LDAP meanwhile: her save rebuilds her card alone.
                let colleague = Self.mount + "\(TestDirectory.personName(8)).vcf"
                let colleagueBefore = try await server.request("GET", colleague).text
                try directory.modify("""
                    dn: \(TestDirectory.userDN(TestDirectory.personName(8)))
                    changetype: modify
                    replace: title
                    title: Captain

                    """)
                #expect(try await browser.post(form.action, form.urlEncoded).status == 303)
                #expect(try await server.request("GET", colleague).text == colleagueBefore)

                func expectHidden(_ text: String, _ answer: String) {
                    #expect(text.contains("UID:rolo-directory-\(user)") && !text.contains("555 0007") && !text.contains("666 0007")
                            && !text.contains("TITLE"), "\(answer): \(text)")
                }
                let saved = try await server.request("GET", path).text
                expectHidden(saved, "GET")
                #expect(saved.contains("FN:Person Number7"), "\(saved)")
                let multiget = try await server.request("REPORT", Self.mount, headers: ["Content-Type": "application/xml"], body: Data("""
                    <?xml version="1.0"?><c:addressbook-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
                    <d:prop><c:address-data/></d:prop><d:href>\(path)</d:href></c:addressbook-multiget>
                    """.utf8))
                expectHidden(multiget.text, "multiget")
                let sync = try await server.request("REPORT", Self.mount, headers: ["Content-Type": "application/xml"], body: Data("""
                    <?xml version="1.0"?><d:sync-collection xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">\
                    <d:sync-token/><d:sync-level>1</d:sync-level><d:prop><c:address-data/></d:prop></d:sync-collection>
                    """.utf8))
                #expect(sync.status == 207)
                #expect(!sync.text.contains("555 0007") && !sync.text.contains("666 0007") && sync.text.contains("UID:rolo-directory-\(user)"),
                        "sync")
                let (again, _) = try await Self.rebuild(server, settings)
                #expect(again.changed == [TestDirectory.personName(8)] && again.added.isEmpty && again.removed.isEmpty, "\(again.lines)")
                #expect(try await server.request("GET", colleague).text.contains("TITLE:Captain"))
                expectHidden(try await server.request("GET", path).text, "GET after a rebuild")

                // The page shows them ticked; unticked, LDAP's values come back.
                let ticked = try await browser.get("/web/account")
                var shown = try #require(HTMLForm(in: ticked.text, id: "directory-form"))
                #expect(shown.values("hide_phone") == ["on"] && shown.values("hide_title") == ["on"] && shown.values("hide_email").isEmpty)
                shown.set("hide_phone", to: "")
                shown.set("hide_title", to: "")
                #expect(try await browser.post(shown.action, shown.urlEncoded).status == 303)
                let back = try await server.request("GET", path)
                #expect(back.text.contains("+1 555 0007") && back.text.contains("TITLE:"), "\(back.text)")
            }
        }
    }

    @Test func aDirectoryThatCannotBeReadChangesNothing() async throws {
        try await withTestDirectory(people: 5) { directory async throws in
            let settings = LDAPSourceTests.settings(directory)
            try await TestServer.with(configure: { $0.directory = .all }) { server async throws in
                try await Self.waitForFirstRebuild(server)
                _ = try await Self.rebuild(server, settings)
                let before = try await Self.cardNames(server)
                #expect(before.contains("person0005.vcf"))
                directory.stopServer()
                await #expect(throws: LDAPError.self) { _ = try await DirectoryRebuild(store: server.store, mode: .all, ldap: settings).run() }
                #expect(try await Self.cardNames(server) == before)
            }
        }
    }

    @Test func valuesThatAreNotUTF8OrNotAnImageAreLeftOutNamingUserAndAttribute() {
        let entry = LDAPEntry(dn: "uid=dora,ou=people,dc=example,dc=org", rawAttributes: [
            "title": [Data([0x43, 0xFF, 0xFE])], "o": [Data("Boats".utf8)],
            "jpegPhoto": [Data("GIF89a not a jpeg".utf8)], "mobile": [Data([0xC3]), Data("+44 20 7946 0000".utf8)],
        ])
        var reader = LDAPDirectoryPeople.FieldReader(entry: entry, user: "dora")
        #expect(reader.text("title") == nil && reader.text("o") == "Boats")
        #expect(reader.photo("jpegPhoto") == nil)
        #expect(reader.phones("mobile") == ["+44 20 7946 0000"])
        #expect(reader.skipped == ["dora: title is not UTF-8, left out", "dora: jpegPhoto is not a JPEG or PNG image, left out",
                                   "dora: mobile is not UTF-8, left out"])
    }
}
