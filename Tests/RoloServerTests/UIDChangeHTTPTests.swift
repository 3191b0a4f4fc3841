import Foundation
import Testing

/// RFC 6352 §6.3.2.1 through real HTTP: a card's UID is unique in its book and stays with
/// its resource, so a PUT or MOVE that would put a card of another UID in place of an
/// existing one is 403 `CARDDAV:no-uid-conflict` and changes nothing.
@Suite struct UIDChangeHTTPTests {
    static let book = "/dav/addressbooks/alice/default/"
    static let condition = "{urn:ietf:params:xml:ns:carddav}no-uid-conflict"

    @Test func aPutThatChangesTheUIDOfAnExistingCardIsRefusedAndChangesNothing() async throws {
        try await TestServer.with { server in
            let created = try await DAVFlowTests.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            #expect(created.status == 201)
            let before = try await server.request("GET", Self.book + "ada.vcf")

            let changed = try await server.request("PUT", Self.book + "ada.vcf", headers: DAVFlowTests.vcardType,
                                                   body: DAVFlowTests.card(uid: "someone-else", name: "Ada Lovelace"))
            #expect(changed.status == 403, "\(changed.text)")
            #expect(changed.errorConditions == [Self.condition], "\(changed.text)")
            #expect(changed.text.contains("ada.vcf"), "the error names the card that holds the UID: \(changed.text)")

            let after = try await server.request("GET", Self.book + "ada.vcf")
            #expect(after.body == before.body)
            #expect(after.headers["etag"] == before.headers["etag"])

            // The same UID with other content is an ordinary update.
            let updated = try await server.request("PUT", Self.book + "ada.vcf", headers: DAVFlowTests.vcardType,
                                                   body: DAVFlowTests.card(uid: "ada-1", name: "Ada King"))
            #expect(updated.status == 204)
        }
    }

    @Test func aMoveOverACardOfAnotherUIDIsRefusedAndChangesNothing() async throws {
        try await TestServer.with { server in
            _ = try await DAVFlowTests.put(server, "ada.vcf", uid: "ada-1", fullName: "Ada Lovelace")
            _ = try await DAVFlowTests.put(server, "alan.vcf", uid: "alan-1", fullName: "Alan Turing")
            let base = "http://127.0.0.1:\(server.port)"

            let moved = try await server.request("MOVE", Self.book + "alan.vcf",
                                                 headers: ["Destination": base + Self.book + "ada.vcf", "Overwrite": "T"])
            #expect(moved.status == 403, "\(moved.text)")
            #expect(moved.errorConditions == [Self.condition], "\(moved.text)")
            // Both cards are where they were.
            #expect(try await server.request("GET", Self.book + "alan.vcf").text.contains("UID:alan-1"))
            #expect(try await server.request("GET", Self.book + "ada.vcf").text.contains("UID:ada-1"))

            // A move to a free name is still fine.
            let renamed = try await server.request("MOVE", Self.book + "alan.vcf",
                                                   headers: ["Destination": base + Self.book + "turing.vcf"])
            #expect(renamed.status == 201, "\(renamed.text)")
        }
    }
}
