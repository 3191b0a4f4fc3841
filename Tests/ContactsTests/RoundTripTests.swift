import Contacts
import Testing
import VCard

/// vCard -> Contact -> vCard loses nothing, and version conversions keep every labeled value.
struct RoundTripTests {
    static let cards: [(name: String, card: VCard)] = (try? Fixtures.allCards()) ?? []

    @Test func thereAreCardsToRoundTrip() {
        #expect(Self.cards.count >= 9, "fixtures did not load")
    }

    /// Writes in the card's own version, re-parses the bytes, reads again: the same Contact,
    /// unmapped properties and kept parameters included. (2.1 is written as 3.0.)
    @Test func vCardToContactToVCardToContactIsTheIdentity() throws {
        for (name, card) in Self.cards where card.version != .v21 {
            let contact = Contact(vCard: card)
            let reread = try reparse(contact.vCard(version: card.version))
            let identical = reread == contact
            #expect(identical, "\(name) changed:\n\(describeChange(contact, reread))")
        }
    }

    @Test func writingInTheOtherVersionThroughTheModelKeepsLabeledValues() throws {
        for (name, card) in Self.cards {
            let contact = Contact(vCard: card)
            let original = LabeledFacts(contact)
            for version in [VCardVersion.v30, .v40] {
                let reread = try reparse(contact.vCard(version: version))
                let facts = LabeledFacts(reread)
                let kept = facts == original
                #expect(kept, "\(name) as \(version.rawValue):\n\(original.differences(from: facts))")
            }
        }
    }

    /// 3.0 -> 4.0 -> 3.0 (and 4.0 -> 3.0 -> 4.0) through VCardConverter, read by the model.
    @Test func convertingThereAndBackKeepsLabelsValuesAndPreferences() throws {
        for (name, card) in Self.cards where card.version != .v21 {
            let other: VCardVersion = card.version == .v30 ? .v40 : .v30
            let there = VCardConverter.convert(card, to: other)
            let back = VCardConverter.convert(try reparseCard(there), to: card.version)
            let before = LabeledFacts(Contact(vCard: card))
            let afterThere = LabeledFacts(Contact(vCard: there))
            let afterBack = LabeledFacts(Contact(vCard: try reparseCard(back)))
            let keptThere = afterThere == before, keptBack = afterBack == before
            #expect(keptThere, "\(name) -> \(other.rawValue):\n\(before.differences(from: afterThere))")
            #expect(keptBack, "\(name) -> \(other.rawValue) -> back:\n\(before.differences(from: afterBack))")
        }
    }

    @Test func aTwoOneCardWrittenAsThreeKeepsItsFacts() throws {
        let card = try #require(try Fixtures.cards(fixture: "outlook-2.1.vcf").first)
        let contact = Contact(vCard: card)
        let written = contact.vCard(version: .v21)
        #expect(written.version == .v30)
        let reread = try reparse(written)
        #expect(LabeledFacts(reread) == LabeledFacts(contact))
        #expect(reread.formattedName == "Seán O'Brien")
        #expect(reread.note == contact.note)
    }

    private func reparseCard(_ card: VCard) throws -> VCard {
        let text = VCardWriter.write(card)
        let cards = try VCardParser.parse(text)
        return try #require(cards.count == 1 ? cards.first : nil, "writer produced \(cards.count) cards:\n\(text)")
    }

    private func reparse(_ card: VCard) throws -> Contact {
        Contact(vCard: try reparseCard(card))
    }

    private func describeChange(_ before: Contact, _ after: Contact) -> String {
        var lines = OracleDiff.differences(expected: before.oracleJSON(), actual: after.oracleJSON())
        if before.unmappedProperties != after.unmappedProperties {
            lines.append("unmapped before: \(before.unmappedProperties)")
            lines.append("unmapped after:  \(after.unmappedProperties)")
        }
        if lines.isEmpty { lines.append("(differences in kept parameters or identifiers)\n\(before)\n\(after)") }
        return lines.joined(separator: "\n")
    }
}
