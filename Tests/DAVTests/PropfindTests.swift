import DAV
import Testing

@Suite struct PropfindTests {
    @Test func rootAnswersCurrentUserPrincipal() async throws {
        let dav = try await TestDAV()
        for path in ["/", "/dav/", "/dav"] {
            let response = await dav.propfind(path, props: ["{DAV:}current-user-principal"])
            #expect(response.status == 207)
            let view = try #require(try response.multistatus().values.first)
            #expect(view.value(of: "{DAV:}current-user-principal")?.hrefs == ["/dav/principals/alice/"])
        }
    }

    @Test func principalAnswersHomeSetAndPrincipalURL() async throws {
        let dav = try await TestDAV()
        let response = await dav.propfind("/dav/principals/alice/", props: [
            "{urn:ietf:params:xml:ns:carddav}addressbook-home-set", "{DAV:}principal-URL", "{DAV:}resourcetype",
            "{DAV:}displayname", "{urn:ietf:params:xml:ns:carddav}principal-address",
        ])
        let view = try #require(try response.multistatus()["/dav/principals/alice/"])
        #expect(view.value(of: "{urn:ietf:params:xml:ns:carddav}addressbook-home-set")?.hrefs == ["/dav/addressbooks/alice/"])
        #expect(view.value(of: "{DAV:}principal-URL")?.hrefs == ["/dav/principals/alice/"])
        #expect(view.value(of: "{DAV:}resourcetype")?.childNames == ["{DAV:}principal"])
        #expect(view.value(of: "{DAV:}displayname")?.text == "alice")
        #expect(view.status(of: "{urn:ietf:params:xml:ns:carddav}principal-address") == 404)
    }

    @Test func homeDepthOneListsAddressBooksWithCardDAVProperties() async throws {
        let dav = try await TestDAV()
        let response = await dav.propfind("/dav/addressbooks/alice/", depth: "1", props: [
            "{DAV:}resourcetype", "{http://calendarserver.org/ns/}getctag", "{DAV:}sync-token",
            "{urn:ietf:params:xml:ns:carddav}supported-address-data", "{urn:ietf:params:xml:ns:carddav}max-resource-size",
            "{DAV:}current-user-privilege-set", "{DAV:}supported-report-set", "{DAV:}owner",
        ])
        let views = try response.multistatus()
        #expect(Set(views.keys) == ["/dav/addressbooks/alice/", "/dav/addressbooks/alice/default/"])
        let book = try #require(views["/dav/addressbooks/alice/default/"])
        #expect(book.value(of: "{DAV:}resourcetype")?.childNames == ["{DAV:}collection", "{urn:ietf:params:xml:ns:carddav}addressbook"])
        #expect(book.value(of: "{http://calendarserver.org/ns/}getctag")?.text == "0")
        #expect(book.value(of: "{DAV:}sync-token")?.text.isEmpty == false)
        let types = book.value(of: "{urn:ietf:params:xml:ns:carddav}supported-address-data")?.children
            .map { "\($0.attribute("content-type") ?? "") \($0.attribute("version") ?? "")" }
        #expect(types == ["text/vcard 3.0", "text/vcard 4.0", "application/vcard+json 4.0"])
        #expect(book.value(of: "{urn:ietf:params:xml:ns:carddav}max-resource-size")?.text == "10485760")
        let privileges = book.value(of: "{DAV:}current-user-privilege-set")?.children.flatMap { $0.children.map(\.name) } ?? []
        #expect(Set(privileges).isSuperset(of: ["read", "write", "write-properties", "write-content", "bind", "unbind"]))
        let reports = book.value(of: "{DAV:}supported-report-set")?.children.flatMap { $0.children.flatMap { $0.children.map(\.name) } } ?? []
        #expect(Set(reports).isSuperset(of: ["addressbook-multiget", "addressbook-query", "sync-collection"]))
        #expect(book.value(of: "{DAV:}owner")?.hrefs == ["/dav/principals/alice/"])
        // The home has a ctag of its own: it moves when its list of books changes (shares).
        #expect(views["/dav/addressbooks/alice/"]?.status(of: "{http://calendarserver.org/ns/}getctag") == 200)
    }

    @Test func cardPropertiesCarryETagTypeLengthAndRFC1123Date() async throws {
        let dav = try await TestDAV()
        let put = await dav.putCard(uid: "u1", fn: "Ann")
        #expect(put.status == 201)
        let response = await dav.propfind("/dav/addressbooks/alice/default/", depth: "1", props: [
            "{DAV:}getetag", "{DAV:}getcontenttype", "{DAV:}getcontentlength", "{DAV:}getlastmodified", "{DAV:}resourcetype",
        ])
        let card = try #require(try response.multistatus()["/dav/addressbooks/alice/default/u1.vcf"])
        #expect(card.value(of: "{DAV:}getetag")?.text == put.header("ETag"))
        #expect(card.value(of: "{DAV:}getcontenttype")?.text.hasPrefix("text/vcard") == true)
        #expect(card.value(of: "{DAV:}getcontentlength")?.text == String(Fixtures.card(uid: "u1", fn: "Ann").utf8.count))
        #expect(card.value(of: "{DAV:}getlastmodified")?.text.hasSuffix(" GMT") == true)
        #expect(card.value(of: "{DAV:}resourcetype")?.children.isEmpty == true)
    }

    @Test func unknownPropertiesAnswer404InTheirOwnPropstat() async throws {
        let dav = try await TestDAV()
        let response = await dav.propfind("/dav/addressbooks/alice/default/", props: ["{DAV:}displayname", "{urn:x}nothing"])
        let view = try #require(try response.multistatus()["/dav/addressbooks/alice/default/"])
        #expect(view.status(of: "{DAV:}displayname") == 200)
        #expect(view.status(of: "{urn:x}nothing") == 404)
    }

    @Test func missingDepthIsInfinityAndRefusedWithFiniteDepthCondition() async throws {
        let dav = try await TestDAV()
        let response = await dav.send("PROPFIND", "/dav/addressbooks/alice/", body: Fixtures.propfind(["{DAV:}displayname"]))
        #expect(response.status == 403)
        #expect(try response.errorConditions().contains("{DAV:}propfind-finite-depth"))
    }

    @Test func emptyBodyIsAllpropAndPropnameListsNames() async throws {
        let dav = try await TestDAV()
        let allprop = await dav.send("PROPFIND", "/dav/addressbooks/alice/default/", headers: ["depth": "0"])
        let view = try #require(try allprop.multistatus()["/dav/addressbooks/alice/default/"])
        #expect(view.value(of: "{DAV:}resourcetype") != nil)
        #expect(view.value(of: "{DAV:}displayname")?.text == "Contacts")

        let propname = await dav.send("PROPFIND", "/dav/addressbooks/alice/default/", headers: ["depth": "0"],
                                      body: "<propfind xmlns=\"DAV:\"><propname/></propfind>")
        let names = try #require(try propname.multistatus()["/dav/addressbooks/alice/default/"])
        #expect(names.value(of: "{DAV:}sync-token")?.children.isEmpty == true)
        #expect(names.value(of: "{DAV:}sync-token")?.text.isEmpty == true)
    }

    @Test func malformedXMLIs400() async throws {
        let dav = try await TestDAV()
        let response = await dav.send("PROPFIND", "/dav/addressbooks/alice/", headers: ["depth": "0"], body: "<propfind xmlns=\"DAV:\"><prop>")
        #expect(response.status == 400)
    }

    @Test func missingResourceIs404() async throws {
        let dav = try await TestDAV()
        let response = await dav.propfind("/dav/addressbooks/alice/nope/", props: ["{DAV:}displayname"])
        #expect(response.status == 404)
    }

    @Test func quotaPropertiesReportUsage() async throws {
        let dav = try await TestDAV(configuration: DAVConfiguration(quotaBytes: 10_000))
        await dav.putCard(uid: "u1", fn: "Ann")
        let response = await dav.propfind("/dav/addressbooks/alice/", props: ["{DAV:}quota-used-bytes", "{DAV:}quota-available-bytes"])
        let view = try #require(try response.multistatus()["/dav/addressbooks/alice/"])
        let used = try #require(Int(view.value(of: "{DAV:}quota-used-bytes")?.text ?? ""))
        #expect(used == Fixtures.card(uid: "u1", fn: "Ann").utf8.count)
        #expect(view.value(of: "{DAV:}quota-available-bytes")?.text == String(10_000 - used))
    }

    @Test func hrefsUseTheProxyPrefixAndPercentEncoding() async throws {
        let dav = try await TestDAV(configuration: DAVConfiguration(proxyPrefix: "/contacts"))
        await dav.send("MKCOL", "/contacts/dav/addressbooks/alice/my files/")
        let response = await dav.propfind("/contacts/dav/addressbooks/alice/", depth: "1", props: ["{DAV:}resourcetype"])
        let hrefs = Set(try response.multistatus().keys)
        #expect(hrefs.contains("/contacts/dav/addressbooks/alice/my%20files/"))
        #expect(hrefs.contains("/contacts/dav/addressbooks/alice/default/"))
    }
}
