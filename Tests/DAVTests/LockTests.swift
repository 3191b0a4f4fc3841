import DAV
import Testing

@Suite struct LockTests {
    static let lockinfo = """
    <D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype>
    <D:owner><D:href>mailto:alice@example.com</D:href></D:owner></D:lockinfo>
    """
    static let file = "/dav/addressbooks/alice/files/f.txt"

    func setUp() async throws -> TestDAV {
        let dav = try await TestDAV()
        await dav.send("MKCOL", "/dav/addressbooks/alice/files/")
        await dav.send("PUT", Self.file, body: "v1")
        return dav
    }

    func lock(_ dav: TestDAV, _ path: String = file, depth: String = "0") async throws -> String {
        let response = await dav.send("LOCK", path, headers: ["depth": depth, "timeout": "Second-600"], body: Self.lockinfo)
        #expect(response.status == 200 || response.status == 201)
        let header = try #require(response.header("Lock-Token"))
        return String(header.dropFirst().dropLast())
    }

    @Test func lockedResourceNeedsItsTokenToChange() async throws {
        let dav = try await setUp()
        let token = try await lock(dav)
        let refused = await dav.send("PUT", Self.file, body: "v2")
        #expect(refused.status == 423)
        #expect(try refused.errorConditions().contains("{DAV:}lock-token-submitted"))
        #expect(await dav.send("DELETE", Self.file).status == 423)
        #expect(await dav.send("PUT", Self.file, headers: ["if": "(<\(token)>)"], body: "v2").status == 204)
        #expect(await dav.send("GET", Self.file).text == "v2")
    }

    @Test func secondExclusiveLockConflictsAndUnlockFreesIt() async throws {
        let dav = try await setUp()
        let token = try await lock(dav)
        #expect(await dav.send("LOCK", Self.file, headers: ["depth": "0"], body: Self.lockinfo).status == 423)
        #expect(await dav.send("UNLOCK", Self.file, headers: ["lock-token": "<urn:uuid:wrong>"]).status == 409)
        #expect(await dav.send("UNLOCK", Self.file, headers: ["lock-token": "<\(token)>"]).status == 204)
        #expect(await dav.send("PUT", Self.file, body: "free").status == 204)
    }

    @Test func lockdiscoveryShowsOwnerAndToken() async throws {
        let dav = try await setUp()
        let token = try await lock(dav)
        let response = await dav.propfind(Self.file, props: ["{DAV:}lockdiscovery", "{DAV:}supportedlock"])
        let view = try #require(try response.multistatus()[Self.file])
        let active = try #require(view.value(of: "{DAV:}lockdiscovery")?.child("DAV:", "activelock"))
        #expect(active.child("DAV:", "locktoken")?.hrefs == [token])
        #expect(active.child("DAV:", "owner")?.hrefs == ["mailto:alice@example.com"])
        #expect(view.value(of: "{DAV:}supportedlock")?.children.count == 2)
    }

    @Test func depthInfinityCollectionLockCoversMembersAndRefreshWorksFromAMember() async throws {
        let dav = try await setUp()
        let token = try await lock(dav, "/dav/addressbooks/alice/files/", depth: "infinity")
        #expect(await dav.send("PUT", "/dav/addressbooks/alice/files/new.txt", body: "x").status == 423)
        let tagged = "</dav/addressbooks/alice/files/> (<\(token)>)"
        #expect(await dav.send("PUT", "/dav/addressbooks/alice/files/new.txt", headers: ["if": tagged], body: "x").status == 201)
        let refresh = await dav.send("LOCK", Self.file, headers: ["if": "(<\(token)>)", "timeout": "Second-900"])
        #expect(refresh.status == 200)
        #expect(refresh.text.contains("Second-900"))
    }

    @Test func lockingAnUnmappedURLCreatesAnEmptyFile() async throws {
        let dav = try await setUp()
        let response = await dav.send("LOCK", "/dav/addressbooks/alice/files/unmapped", headers: ["depth": "0"], body: Self.lockinfo)
        #expect(response.status == 201)
        let get = await dav.send("GET", "/dav/addressbooks/alice/files/unmapped")
        #expect(get.status == 200)
        #expect(get.body.isEmpty)
    }

    @Test func ifHeaderWithUnknownTokenFailsAndNotNoLockHolds() async throws {
        let dav = try await setUp()
        #expect(await dav.send("PUT", Self.file, headers: ["if": "(<urn:uuid:nope>)"], body: "x").status == 412)
        #expect(await dav.send("PUT", Self.file, headers: ["if": "(Not <DAV:no-lock>)"], body: "x").status == 204)
    }
}
