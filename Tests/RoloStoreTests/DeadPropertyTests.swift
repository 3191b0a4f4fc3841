import Foundation
import Testing
@testable import RoloSQLite
@testable import RoloStore

@Suite(.closesStores) struct DeadPropertyTests {
    let color = PropertyName(namespace: "http://apple.com/ns/ical/", name: "calendar-color")
    let note = PropertyName(namespace: "urn:example", name: "note")

    @Test(arguments: StoreBackend.cardBackends)
    func propertiesAreSetReplacedAndRemovedPerOwner(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let store = fixture.cards
        let id = fixture.book.id
        try await fixture.put("a.vcf")
        let xml = #"<x:v xmlns:x="urn:example">a &amp; b</x:v>"#
        try await store.updateDeadProperties(collectionID: id, resource: nil,
                                             set: [DeadProperty(name: color, xmlValue: "#FF0000"), DeadProperty(name: note, xmlValue: xml)],
                                             remove: [])
        try await store.updateDeadProperties(collectionID: id, resource: "a.vcf",
                                             set: [DeadProperty(name: note, xmlValue: "card note")], remove: [])
        #expect(try await store.deadProperties(collectionID: id, resource: nil)
                == [DeadProperty(name: color, xmlValue: "#FF0000"), DeadProperty(name: note, xmlValue: xml)])
        try await store.updateDeadProperties(collectionID: id, resource: nil,
                                             set: [DeadProperty(name: color, xmlValue: "#00FF00")], remove: [note])
        #expect(try await store.deadProperties(collectionID: id, resource: nil) == [DeadProperty(name: color, xmlValue: "#00FF00")])
        #expect(try await store.deadProperties(collectionID: id, resource: "a.vcf") == [DeadProperty(name: note, xmlValue: "card note")])
    }

    @Test(arguments: StoreBackend.cardBackends)
    func resourcePropertiesSurviveAPutAndGoWithADelete(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        let id = fixture.book.id
        try await fixture.put("a.vcf")
        try await fixture.cards.updateDeadProperties(collectionID: id, resource: "a.vcf",
                                                     set: [DeadProperty(name: note, xmlValue: "n")], remove: [])
        try await fixture.put("a.vcf", fn: "Edited")
        #expect(try await fixture.cards.deadProperties(collectionID: id, resource: "a.vcf").count == 1)
        try await fixture.cards.deleteResource(collectionID: id, name: "a.vcf", precondition: .none)
        try await fixture.put("a.vcf")
        #expect(try await fixture.cards.deadProperties(collectionID: id, resource: "a.vcf").isEmpty)
        await #expect(throws: StoreError.notFound) {
            try await fixture.cards.updateDeadProperties(collectionID: id, resource: "missing.vcf",
                                                         set: [DeadProperty(name: note, xmlValue: "n")], remove: [])
        }
    }
}
