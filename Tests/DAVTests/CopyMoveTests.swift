import DAV
import Testing

@Suite struct CopyMoveTests {
    @Test func moveCardBetweenBooksKeepsBytesAndRemovesSource() async throws {
        let dav = try await TestDAV()
        await dav.send("MKCOL", "/dav/addressbooks/alice/work/", body: MkcolTests.extendedBody)
        await dav.putCard(uid: "m", fn: "Mover")
        let move = await dav.send("MOVE", "/dav/addressbooks/alice/default/m.vcf",
                                  headers: ["destination": "http://127.0.0.1:8080/dav/addressbooks/alice/work/m.vcf"])
        #expect(move.status == 201)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/m.vcf").status == 404)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/work/m.vcf").text == Fixtures.card(uid: "m", fn: "Mover"))
    }

    @Test func renameWithinABookIsAllowedDespiteSameUID() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "r", fn: "Renamed")
        let move = await dav.send("MOVE", "/dav/addressbooks/alice/default/r.vcf",
                                  headers: ["destination": "/dav/addressbooks/alice/default/new-name.vcf"])
        #expect(move.status == 201)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/new-name.vcf").status == 200)
    }

    @Test func refusedCopyOverAnExistingCardLeavesTheDestinationAsItWas() async throws {
        let dav = try await TestDAV()
        await dav.send("MKCOL", "/dav/addressbooks/alice/work/", body: MkcolTests.extendedBody)
        await dav.putCard(uid: "keep", fn: "Kept", book: "work")
        await dav.putCard(uid: "dup", fn: "Other", book: "work")
        await dav.putCard(uid: "dup", fn: "Source")
        let copy = await dav.send("COPY", "/dav/addressbooks/alice/default/dup.vcf",
                                  headers: ["destination": "/dav/addressbooks/alice/work/keep.vcf", "overwrite": "T"])
        #expect(copy.status == 403)
        #expect(copy.text.contains("no-uid-conflict"))
        #expect(await dav.send("GET", "/dav/addressbooks/alice/work/keep.vcf").text == Fixtures.card(uid: "keep", fn: "Kept"))
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/dup.vcf").status == 200)
    }

    @Test func moveTakesDeadPropertiesAlong() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "p", fn: "Props")
        let patch = await dav.send("PROPPATCH", "/dav/addressbooks/alice/default/p.vcf", body: """
            <?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:X="urn:x"><D:set><D:prop><X:colour>red</X:colour></D:prop></D:set></D:propertyupdate>
            """)
        #expect(patch.status == 207)
        let move = await dav.send("MOVE", "/dav/addressbooks/alice/default/p.vcf",
                                  headers: ["destination": "/dav/addressbooks/alice/default/q.vcf"])
        #expect(move.status == 201)
        let found = await dav.propfind("/dav/addressbooks/alice/default/q.vcf", props: ["{urn:x}colour"])
        #expect(found.text.contains("red"))
        #expect(await dav.send("GET", "/dav/addressbooks/alice/default/p.vcf").status == 404)
    }

    @Test func copyIntoTheSameBookIsAUIDConflict() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "c", fn: "Copied")
        let copy = await dav.send("COPY", "/dav/addressbooks/alice/default/c.vcf",
                                  headers: ["destination": "/dav/addressbooks/alice/default/c2.vcf"])
        #expect(copy.status == 403)
        #expect(copy.text.contains("no-uid-conflict"))
    }

    @Test func overwriteFalseOnExistingIs412AndTrueIs204() async throws {
        let dav = try await TestDAV()
        await dav.send("MKCOL", "/dav/addressbooks/alice/files/")
        await dav.send("PUT", "/dav/addressbooks/alice/files/a.txt", body: "A")
        await dav.send("PUT", "/dav/addressbooks/alice/files/b.txt", body: "B")
        let refused = await dav.send("COPY", "/dav/addressbooks/alice/files/a.txt",
                                     headers: ["destination": "/dav/addressbooks/alice/files/b.txt", "overwrite": "F"])
        #expect(refused.status == 412)
        let replaced = await dav.send("COPY", "/dav/addressbooks/alice/files/a.txt",
                                      headers: ["destination": "/dav/addressbooks/alice/files/b.txt", "overwrite": "T"])
        #expect(replaced.status == 204)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/files/b.txt").text == "A")
    }

    @Test func copyCollectionRecursivelyAndShallow() async throws {
        let dav = try await TestDAV()
        await dav.send("MKCOL", "/dav/addressbooks/alice/files/")
        await dav.send("MKCOL", "/dav/addressbooks/alice/files/sub/")
        await dav.send("PUT", "/dav/addressbooks/alice/files/sub/x.txt", body: "X")
        #expect(await dav.send("COPY", "/dav/addressbooks/alice/files/", headers: ["destination": "/dav/addressbooks/alice/copy/"]).status == 201)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/copy/sub/x.txt").text == "X")
        #expect(await dav.send("COPY", "/dav/addressbooks/alice/files/",
                               headers: ["destination": "/dav/addressbooks/alice/shallow/", "depth": "0"]).status == 201)
        #expect(await dav.propfind("/dav/addressbooks/alice/shallow/", props: ["{DAV:}resourcetype"]).status == 207)
        #expect(await dav.propfind("/dav/addressbooks/alice/shallow/sub/", props: ["{DAV:}resourcetype"]).status == 404)
    }

    @Test func moveCollectionAndMissingDestinationParentIs409() async throws {
        let dav = try await TestDAV()
        await dav.send("MKCOL", "/dav/addressbooks/alice/files/")
        await dav.send("PUT", "/dav/addressbooks/alice/files/x.txt", body: "X")
        #expect(await dav.send("MOVE", "/dav/addressbooks/alice/files/", headers: ["destination": "/dav/addressbooks/alice/moved/"]).status == 201)
        #expect(await dav.send("GET", "/dav/addressbooks/alice/moved/x.txt").text == "X")
        #expect(await dav.propfind("/dav/addressbooks/alice/files/", props: ["{DAV:}resourcetype"]).status == 404)
        #expect(await dav.send("COPY", "/dav/addressbooks/alice/moved/x.txt",
                               headers: ["destination": "/dav/addressbooks/alice/none/x.txt"]).status == 409)
    }

    @Test func fileCopiedIntoAnAddressBookMustBeAValidCard() async throws {
        let dav = try await TestDAV()
        await dav.send("MKCOL", "/dav/addressbooks/alice/files/")
        await dav.send("PUT", "/dav/addressbooks/alice/files/junk.vcf", body: "junk")
        let copy = await dav.send("COPY", "/dav/addressbooks/alice/files/junk.vcf",
                                  headers: ["destination": "/dav/addressbooks/alice/default/junk.vcf"])
        #expect(copy.status == 403)
        #expect(copy.text.contains("valid-address-data"))
    }

    @Test func destinationOnAnotherServerIs502() async throws {
        let dav = try await TestDAV()
        await dav.putCard(uid: "c", fn: "C")
        let copy = await dav.send("COPY", "/dav/addressbooks/alice/default/c.vcf",
                                  headers: ["destination": "http://127.0.0.1:9/elsewhere/c.vcf"])
        #expect(copy.status == 502)
    }
}

@Suite struct CopyMovePropertyTests {
    @Test func moveWithinACollectionKeepsDeadProperties() async throws {
        let dav = try await TestDAV()
        await dav.send("MKCOL", "/dav/addressbooks/alice/files/")
        await dav.send("PUT", "/dav/addressbooks/alice/files/p", body: "P")
        await dav.send("PROPPATCH", "/dav/addressbooks/alice/files/p",
                       body: ProppatchTests.update("<D:set><D:prop><X:k xmlns:X=\"urn:x\">v</X:k></D:prop></D:set>"))
        #expect(await dav.send("MOVE", "/dav/addressbooks/alice/files/p", headers: ["destination": "/dav/addressbooks/alice/files/p2"]).status == 201)
        let read = await dav.propfind("/dav/addressbooks/alice/files/p2", props: ["{urn:x}k"])
        #expect(try read.multistatus()["/dav/addressbooks/alice/files/p2"]?.value(of: "{urn:x}k")?.text == "v")
    }
}

@Suite struct DestinationTests {
    @Test func absoluteDestinationOnAnotherHostIs502AndOnOurHostWorks() async throws {
        let dav = try await TestDAV()
        await dav.send("MKCOL", "/dav/addressbooks/alice/files/")
        await dav.send("PUT", "/dav/addressbooks/alice/files/a", body: "A")
        let elsewhere = await dav.send("COPY", "/dav/addressbooks/alice/files/a",
                                       headers: ["host": "127.0.0.1:8080", "destination": "http://127.0.0.2:8080/dav/addressbooks/alice/files/b"])
        #expect(elsewhere.status == 502)
        let here = await dav.send("COPY", "/dav/addressbooks/alice/files/a",
                                  headers: ["host": "127.0.0.1:8080", "destination": "http://127.0.0.1:8080/dav/addressbooks/alice/files/b"])
        #expect(here.status == 201)
    }
}
