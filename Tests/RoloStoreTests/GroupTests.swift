import Foundation
import Testing
@testable import RoloStore

@Suite(.closesStores) struct GroupTests {
    @Test(arguments: StoreBackend.cardBackends)
    func membershipIsQueryableBothWaysForBothGroupStyles(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        // vCard 4 KIND:group + MEMBER and Apple's X-ADDRESSBOOKSERVER-MEMBER arrive alike:
        // the caller extracts member UIDs without their urn:uuid: prefix.
        try await fixture.put("friends.vcf", uid: "g1", kind: "group", precondition: .none)
        try await fixture.put("friends.vcf", uid: "g1", members: ["u1", "u2"], kind: "group")
        try await fixture.put("apple-team.vcf", uid: "g2", members: ["u2", "u3"], kind: "group")
        let id = fixture.book.id
        #expect(try await fixture.cards.groupMembers(collectionID: id, groupName: "friends.vcf") == ["u1", "u2"])
        #expect(try await fixture.cards.groups(collectionID: id, containingUID: "u2") == ["apple-team.vcf", "friends.vcf"])
        #expect(try await fixture.cards.groups(collectionID: id, containingUID: "u3") == ["apple-team.vcf"])
        #expect(try await fixture.cards.groups(collectionID: id, containingUID: "u9").isEmpty)
    }

    @Test(arguments: StoreBackend.cardBackends)
    func rewritingOrDeletingAGroupUpdatesMembership(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let id = fixture.book.id
        try await fixture.put("g.vcf", uid: "g", members: ["a", "b"], kind: "group")
        try await fixture.put("g.vcf", uid: "g", members: ["c"], kind: "group")
        #expect(try await fixture.cards.groupMembers(collectionID: id, groupName: "g.vcf") == ["c"])
        #expect(try await fixture.cards.groups(collectionID: id, containingUID: "a").isEmpty)
        try await fixture.cards.deleteResource(collectionID: id, name: "g.vcf", precondition: .none)
        #expect(try await fixture.cards.groups(collectionID: id, containingUID: "c").isEmpty)
        #expect(try await fixture.cards.groupMembers(collectionID: id, groupName: "g.vcf").isEmpty)
    }
}
