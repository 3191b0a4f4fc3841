import Foundation
import DAV
import Testing

@Suite struct OptionsTests {
    @Test func advertisesCompliance() async throws {
        let dav = try await TestDAV()
        let response = await dav.send("OPTIONS", "/dav/addressbooks/alice/default/")
        #expect(response.status == 200)
        let classes = Set((response.header("DAV") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(classes.isSuperset(of: ["1", "2", "3", "addressbook", "extended-mkcol"]))
        let allow = response.header("Allow") ?? ""
        for method in ["PROPFIND", "REPORT", "MKCOL", "PUT", "DELETE", "COPY", "MOVE", "LOCK", "UNLOCK"] { #expect(allow.contains(method)) }
    }

    @Test func unknownMethodIsNotImplemented() async throws {
        let dav = try await TestDAV()
        #expect(await dav.send("BREW", "/dav/addressbooks/alice/default/").status == 501)
    }
}

