import Authorization
import DAV
import Foundation
import RoloStore
import Testing

/// RFC 3744 §9 reports in memory: principal searches, the search property set,
/// principal-match and acl-principal-prop-set (sharing itself is tested over HTTP).
@Suite struct PrincipalReportsTests {
    static let cs = "http://calendarserver.org/ns/"

    static func search(_ terms: [(prop: String, match: String)], test: String? = nil, props: String = "<D:displayname/>") -> String {
        let searches = terms.map { "<D:property-search><D:prop>\($0.prop)</D:prop><D:match>\($0.match)</D:match></D:property-search>" }
        return "<?xml version=\"1.0\"?><D:principal-property-search xmlns:D=\"DAV:\" xmlns:C=\"\(cs)\""
            + (test.map { " test=\"\($0)\"" } ?? "") + ">" + searches.joined()
            + "<D:prop>\(props)</D:prop></D:principal-property-search>"
    }

    static let principalMatchSelf = "<D:principal-match xmlns:D=\"DAV:\"><D:self/><D:prop><D:displayname/></D:prop></D:principal-match>"

    @Test func searchFindsOtherUsersByNameWithOnlyTheirPublicProperties() async throws {
        let dav = try await TestDAV()
        try await dav.store.updateAccount(name: "bob", UserAccountUpdate(displayName: "Robert Roe", email: "rob@example.com"))
        let response = await dav.send("REPORT", "/dav/principals/", headers: ["depth": "0"], body: Self.search(
            [("<D:displayname/>", "rob")],
            props: "<D:displayname/><C:email-address-set/><D:principal-URL/><D:resourcetype/><C2:addressbook-home-set xmlns:C2=\"urn:ietf:params:xml:ns:carddav\"/>"))
        #expect(response.status == 207)
        let views = try response.multistatus()
        #expect(Set(views.keys) == ["/dav/principals/bob/"])
        let bob = try #require(views["/dav/principals/bob/"])
        #expect(bob.value(of: "{DAV:}displayname")?.text == "Robert Roe")
        #expect(bob.value(of: "{\(Self.cs)}email-address-set")?.child(Self.cs, "email-address")?.text == "rob@example.com")
        #expect(bob.value(of: "{DAV:}principal-URL")?.hrefs == ["/dav/principals/bob/"])
        #expect(bob.value(of: "{DAV:}resourcetype")?.childNames == ["{DAV:}principal"])
        // Another user's home is not revealed.
        #expect(bob.status(of: "{urn:ietf:params:xml:ns:carddav}addressbook-home-set") == 404)
        // PROPFIND on that principal stays 404.
        #expect(await dav.propfind("/dav/principals/bob/", props: ["{DAV:}displayname"]).status == 404)
    }

    @Test func theUserNameMatchesAndOwnPrincipalShowsEverything() async throws {
        let dav = try await TestDAV()
        let response = await dav.send("REPORT", "/dav/principals/", body: Self.search(
            [("<D:displayname/>", "ALI")], props: "<C2:addressbook-home-set xmlns:C2=\"urn:ietf:params:xml:ns:carddav\"/><D:displayname/>"))
        let views = try response.multistatus()
        #expect(Set(views.keys) == ["/dav/principals/alice/"])
        #expect(views["/dav/principals/alice/"]?.value(of: "{DAV:}displayname")?.text == "alice")
        #expect(views["/dav/principals/alice/"]?.value(of: "{urn:ietf:params:xml:ns:carddav}addressbook-home-set")?.hrefs
                == ["/dav/addressbooks/alice/"])
    }

    @Test func anyofAndAllofCombineTermsAndEmailIsSearchable() async throws {
        let dav = try await TestDAV()
        try await dav.store.updateAccount(name: "bob", UserAccountUpdate(displayName: "Bob Builder", email: "bob@builders.test"))
        try await dav.store.updateAccount(name: "alice", UserAccountUpdate(email: "alice@wonder.test"))
        let email = try await dav.send("REPORT", "/dav/principals/",
                                       body: Self.search([("<C:email-address-set/>", "wonder")]), user: "bob").multistatus()
        #expect(Set(email.keys) == ["/dav/principals/alice/"])
        // The e-mail term does not match the user name.
        let byName = try await dav.send("REPORT", "/dav/principals/", body: Self.search([("<C:email-address-set/>", "Bob Builder")])).multistatus()
        #expect(byName.isEmpty)
        let allof = try await dav.send("REPORT", "/dav/principals/", body: Self.search(
            [("<D:displayname/>", "bob"), ("<C:email-address-set/>", "wonder")], test: "allof")).multistatus()
        #expect(allof.isEmpty)
        let anyof = try await dav.send("REPORT", "/dav/principals/", body: Self.search(
            [("<D:displayname/>", "bob"), ("<C:email-address-set/>", "wonder")], test: "anyof")).multistatus()
        #expect(Set(anyof.keys) == ["/dav/principals/alice/", "/dav/principals/bob/"])
        // The root accepts it too, and a starts-with match-type narrows.
        let root = await dav.send("REPORT", "/dav/", body: """
            <D:principal-property-search xmlns:D="DAV:"><D:property-search><D:prop><D:displayname/></D:prop>\
            <D:match match-type="starts-with">bu</D:match></D:property-search><D:prop><D:displayname/></D:prop></D:principal-property-search>
            """)
        #expect(try root.multistatus().isEmpty)
        let contains = await dav.send("REPORT", "/dav/", body: Self.search([("<D:displayname/>", "bu")]))
        #expect(Set(try contains.multistatus().keys) == ["/dav/principals/bob/"])
    }

    @Test func refusesSearchesThatWouldListEveryoneOrCannotBeAnswered() async throws {
        let dav = try await TestDAV()
        let empty = await dav.send("REPORT", "/dav/principals/", body: Self.search([("<D:displayname/>", "  ")]))
        #expect(empty.status == 400 && empty.text.contains("empty"))
        let none = await dav.send("REPORT", "/dav/principals/", body: "<D:principal-property-search xmlns:D=\"DAV:\"><D:prop><D:displayname/></D:prop></D:principal-property-search>")
        #expect(none.status == 400)
        let unsearchable = await dav.send("REPORT", "/dav/principals/", body: Self.search([("<D:getetag/>", "a")]))
        #expect(unsearchable.status == 400 && unsearchable.text.contains("displayname"))
        let depth = await dav.send("REPORT", "/dav/principals/", headers: ["depth": "1"], body: Self.search([("<D:displayname/>", "a")]))
        #expect(depth.status == 400)
        let onBook = await dav.send("REPORT", "/dav/addressbooks/alice/default/", body: Self.search([("<D:displayname/>", "a")]))
        #expect(onBook.status == 403)
        // An app password may not search (it never manages sharing).
        let appPassword = Credential(user: "alice", appPasswordID: 7, scope: .full)
        let app = await dav.service.handle(DAVRequest(method: "REPORT", path: "/dav/principals/", headers: [:],
                                                      body: Data(Self.search([("<D:displayname/>", "bob")]).utf8), credential: appPassword))
        #expect(app.status == 403 && String(decoding: app.body, as: UTF8.self).contains("App passwords"))
    }

    @Test func resultsStopAtTheLimitWithA507() async throws {
        let dav = try await TestDAV()
        for index in 0..<(50 + 3) {
            try await dav.store.createUser(name: String(format: "member%02d", index), password: "x")
        }
        let response = await dav.send("REPORT", "/dav/principals/", body: Self.search([("<D:displayname/>", "member")]))
        let views = try response.multistatus()
        #expect(views.keys.filter { $0.hasPrefix("/dav/principals/member") }.count == 50)
        #expect(views["/dav/principals/"]?.status == 507)
    }

    @Test func searchPropertySetListsDisplayNameAndEmail() async throws {
        let dav = try await TestDAV()
        let response = await dav.send("REPORT", "/dav/principals/", body: "<D:principal-search-property-set xmlns:D=\"DAV:\"/>")
        #expect(response.status == 200)
        let root = try response.xml()
        #expect(root.clarkName == "{DAV:}principal-search-property-set")
        let properties = root.children("DAV:", "principal-search-property")
        #expect(properties.compactMap { $0.child("DAV:", "prop")?.children.first?.clarkName }
                == ["{DAV:}displayname", "{\(Self.cs)}email-address-set"])
        #expect(properties.allSatisfy { $0.child("DAV:", "description")?.text.isEmpty == false })
        let onHome = await dav.send("REPORT", "/dav/addressbooks/alice/", body: "<D:principal-search-property-set xmlns:D=\"DAV:\"/>")
        #expect(onHome.status == 403)
    }

    @Test func principalMatchSelfAnswersTheCurrentUser() async throws {
        let dav = try await TestDAV()
        let views = try await dav.send("REPORT", "/dav/principals/", body: Self.principalMatchSelf, user: "bob").multistatus()
        #expect(Set(views.keys) == ["/dav/principals/bob/"])
        #expect(views["/dav/principals/bob/"]?.value(of: "{DAV:}displayname")?.text == "bob")
        // Without a prop: hrefs only.
        let bare = await dav.send("REPORT", "/dav/principals/", body: "<D:principal-match xmlns:D=\"DAV:\"><D:self/></D:principal-match>")
        #expect(try bare.multistatus()["/dav/principals/alice/"]?.status == 200)
        // A book holds no principals.
        let book = await dav.send("REPORT", "/dav/addressbooks/alice/default/", body: Self.principalMatchSelf)
        #expect(book.status == 207)
        #expect(try book.multistatus().isEmpty)
        let invalid = await dav.send("REPORT", "/dav/principals/", body: "<D:principal-match xmlns:D=\"DAV:\"/>")
        #expect(invalid.status == 400)
    }

    @Test func principalMatchOnOwnerListsTheOwnersCards() async throws {
        let dav = try await TestDAV()
        #expect(await dav.putCard(uid: "ann", fn: "Ann").status == 201)
        #expect(await dav.putCard(uid: "ben", fn: "Ben").status == 201)
        let body = "<D:principal-match xmlns:D=\"DAV:\"><D:principal-property><D:owner/></D:principal-property><D:prop><D:getetag/></D:prop></D:principal-match>"
        let views = try await dav.send("REPORT", "/dav/addressbooks/alice/default/", body: body).multistatus()
        #expect(Set(views.keys) == ["/dav/addressbooks/alice/default/ann.vcf", "/dav/addressbooks/alice/default/ben.vcf"])
        #expect(views["/dav/addressbooks/alice/default/ann.vcf"]?.value(of: "{DAV:}getetag")?.text.isEmpty == false)
        // The home's members owned by alice: her default book.
        let home = try await dav.send("REPORT", "/dav/addressbooks/alice/", body: body).multistatus()
        #expect(Set(home.keys) == ["/dav/addressbooks/alice/default/"])
        // A property that names nobody matches nothing.
        let other = "<D:principal-match xmlns:D=\"DAV:\"><D:principal-property><D:getetag/></D:principal-property></D:principal-match>"
        #expect(try await dav.send("REPORT", "/dav/addressbooks/alice/default/", body: other).multistatus().isEmpty)
    }

    @Test func aclPrincipalPropSetListsTheOwnerOfAnUnsharedBook() async throws {
        let dav = try await TestDAV()
        try await dav.store.updateAccount(name: "alice", UserAccountUpdate(displayName: "Alice Liddell"))
        let body = "<D:acl-principal-prop-set xmlns:D=\"DAV:\"><D:prop><D:displayname/><D:principal-URL/></D:prop></D:acl-principal-prop-set>"
        let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/", headers: ["depth": "0"], body: body)
        let views = try response.multistatus()
        #expect(Set(views.keys) == ["/dav/principals/alice/"])
        #expect(views["/dav/principals/alice/"]?.value(of: "{DAV:}displayname")?.text == "Alice Liddell")
        #expect(await dav.send("REPORT", "/dav/principals/", body: body).status == 403)
        #expect(await dav.send("REPORT", "/dav/addressbooks/alice/default/", headers: ["depth": "1"], body: body).status == 400)
        // A read-only app password lacks read-acl.
        let readOnly = Credential(user: "alice", appPasswordID: 3, scope: CredentialScope(readOnly: true, books: nil))
        let refused = await dav.service.handle(DAVRequest(method: "REPORT", path: "/dav/addressbooks/alice/default/", headers: [:],
                                                          body: Data(body.utf8), credential: readOnly))
        #expect(refused.status == 403 && String(decoding: refused.body, as: UTF8.self).contains("read-acl"))
    }

    @Test func supportedReportSetNamesThePrincipalReportsWhereTheyApply() async throws {
        let dav = try await TestDAV()
        func reports(_ path: String) async throws -> Set<String> {
            let view = try await dav.propfind(path, props: ["{DAV:}supported-report-set"]).multistatus()[path]
            return Set(view?.value(of: "{DAV:}supported-report-set")?.children.flatMap { $0.children.flatMap { $0.children.map(\.name) } } ?? [])
        }
        let principals = try await reports("/dav/principals/")
        #expect(principals.isSuperset(of: ["principal-property-search", "principal-search-property-set", "principal-match"]))
        #expect(!principals.contains("acl-principal-prop-set"))
        let book = try await reports("/dav/addressbooks/alice/default/")
        #expect(book.isSuperset(of: ["acl-principal-prop-set", "principal-match", "addressbook-query"]))
        #expect(!book.contains("principal-property-search"))
    }
}
