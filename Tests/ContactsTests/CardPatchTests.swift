import Contacts
import Foundation
import Testing
import VCard

/// `CardPatch`: an editor changes only what it edited; every other line keeps its bytes.
struct CardPatchTests {
    /// An Apple-style 3.0 card with folding, odd parameter spelling, companions and an
    /// unknown X- property: everything an editor must not disturb.
    static let apple30 = [
        "BEGIN:VCARD",
        "VERSION:3.0",
        "PRODID:-//Apple Inc.//iPhone OS 17.0//EN",
        "N:Appleseed;Johnny;;;",
        "FN:Johnny Appleseed",
        "ORG:Example Inc.;",
        "item1.TEL;type=pref:+1 555 0100",
        "item1.X-ABLabel:_$!<Mobile>!$_",
        "TEL;type=HOME;type=VOICE:+1 555 0101",
        "item2.EMAIL;type=INTERNET:johnny@example.com",
        "item2.X-ABLabel:Gym",
        "X-UNKNOWN-THING;X-PARAM=\"a,b\":keep me exactly",
        "NOTE:A long note that the writer folded because it is longer than seventy-five oc",
        " tets\\, with an escaped comma.",
        "item3.ADR;type=HOME:;;1 Infinite Loop;Cupertino;CA;95014;USA",
        "item3.X-ABADR:us",
        "UID:8D5F3C5A-1111-2222-3333-444455556666",
        "END:VCARD",
        "",
    ].joined(separator: "\r\n")

    static let v40 = [
        "BEGIN:VCARD",
        "VERSION:4.0",
        "UID:urn:uuid:4fbe8971-0bc3-424c-9c26-36c3e1eff6b1",
        "FN:Ann Example",
        "N:Example;Ann;;;",
        "TEL;VALUE=uri;TYPE=cell:tel:+44-20-7946-0000",
        "EMAIL;TYPE=work:ann@example.org",
        "X-CUSTOM;LANGUAGE=en:unknown stays",
        "END:VCARD",
        "",
    ].joined(separator: "\r\n")

    static func patch(_ text: String) throws -> CardPatch { try CardPatch(bytes: Array(text.utf8)) }
    static func text(_ patch: CardPatch) -> String { String(decoding: patch.bytes, as: UTF8.self) }
    static func lines(_ text: String) -> [String] { text.components(separatedBy: "\r\n") }

    /// The written card reads back strictly, as a PUT needs.
    static func reread(_ patch: CardPatch) throws -> VCard {
        let cards = try VCardParser.parse(patch.bytes)
        try #require(cards.count == 1)
        return cards[0]
    }

    @Test func anUntouchedCardIsWrittenBackByteForByte() throws {
        for source in [Self.apple30, Self.v40, Self.apple30.replacingOccurrences(of: "\r\n", with: "\n")] {
            var patch = try Self.patch(source)
            patch.apply(CardEdit(card: patch.originalCard))
            patch.touchRevision(at: Date(timeIntervalSince1970: 0))
            #expect(!patch.hasChanges)
            #expect(patch.bytes == Array(source.utf8))
        }
    }

    @Test func aCustomPhoneLabelIsWrittenTheAppleWayAndNothingElseMoves() throws {
        var patch = try Self.patch(Self.apple30)
        var edit = CardEdit(card: patch.originalCard)
        #expect(edit.phones.map(\.label) == [.mobile, .home])
        #expect(edit.emails.first?.label == .custom("Gym"))
        edit.phones[1].label = .custom("Boat")
        patch.apply(edit)
        patch.touchRevision(at: Date(timeIntervalSince1970: 1_800_000_000))
        let written = Self.text(patch)
        let lines = Self.lines(written)
        // item1..3 are taken: the new label gets item4; VOICE stays, HOME goes.
        #expect(lines.contains("item4.TEL;TYPE=VOICE:+1 555 0101"))
        #expect(lines.contains("item4.X-ABLABEL:Boat"))
        #expect(!written.contains("type=HOME;type=VOICE"))
        #expect(lines.contains("REV:2027-01-15T08:00:00Z"))
        // Every other original line is there, byte for byte, in order.
        let original = Self.lines(Self.apple30).filter { !$0.contains("555 0101") }
        let kept = lines.filter { original.contains($0) }
        #expect(kept == original)
        let card = try Self.reread(patch)
        #expect(CardEdit(card: card).phones.map(\.label) == [.mobile, .custom("Boat")])
    }

    @Test func aBuiltInLabelReplacesACustomOneAndDropsItsXABLabel() throws {
        var patch = try Self.patch(Self.apple30)
        var edit = CardEdit(card: patch.originalCard)
        edit.emails[0].label = .work
        patch.apply(edit)
        let lines = Self.lines(Self.text(patch))
        #expect(lines.contains("item2.EMAIL;TYPE=WORK,INTERNET:johnny@example.com"))
        #expect(!lines.contains("item2.X-ABLabel:Gym"))
        #expect(CardEdit(card: try Self.reread(patch)).emails.first?.label == .work)
    }

    @Test func aRelabelInVersion4WritesLowerCaseTypes() throws {
        var patch = try Self.patch(Self.v40)
        var edit = CardEdit(card: patch.originalCard)
        #expect(edit.phones.first?.value == "+44-20-7946-0000")
        edit.phones[0].label = .home
        edit.phones[0].value = "+44 20 7946 0001"
        patch.apply(edit)
        let lines = Self.lines(Self.text(patch))
        #expect(lines.contains("TEL;VALUE=uri;TYPE=home:tel:+44 20 7946 0001"))
        #expect(lines.contains("X-CUSTOM;LANGUAGE=en:unknown stays"))
    }

    @Test func removingAValueRemovesItsLineAndItsCompanions() throws {
        var patch = try Self.patch(Self.apple30)
        var edit = CardEdit(card: patch.originalCard)
        edit.emails.removeAll()
        edit.addresses.removeAll()
        patch.apply(edit)
        let written = Self.text(patch)
        #expect(!written.contains("johnny@example.com") && !written.contains("Gym"))
        #expect(!written.contains("ADR") && !written.contains("X-ABADR"))
        #expect(written.contains("item1.X-ABLabel:_$!<Mobile>!$_"))
        // An emptied value is a removal too.
        var again = try Self.patch(Self.apple30)
        var emptied = CardEdit(card: again.originalCard)
        emptied.phones[0].value = "  "
        again.apply(emptied)
        #expect(!Self.text(again).contains("555 0100") && !Self.text(again).contains("<Mobile>"))
    }

    @Test func newValuesGoAfterTheirKindWithLabels() throws {
        var patch = try Self.patch(Self.v40)
        var edit = CardEdit(card: patch.originalCard)
        edit.phones.append(CardEdit.Value(label: .custom("Boat"), value: "+44 1"))
        edit.emails.append(CardEdit.Value(label: .home, value: "ann@home.example"))
        edit.addresses.append(CardEdit.Address(label: .work, value: PostalAddress(street: "1 Main St; Rear", locality: "Town")))
        patch.apply(edit)
        let lines = Self.lines(Self.text(patch))
        let tel = try #require(lines.firstIndex(of: "item1.TEL:+44 1"))
        #expect(lines[tel - 1].hasPrefix("TEL;VALUE=uri") && lines[tel + 1] == "item1.X-ABLABEL:Boat")
        let email = try #require(lines.firstIndex(of: "EMAIL;TYPE=home:ann@home.example"))
        #expect(lines[email - 1] == "EMAIL;TYPE=work:ann@example.org")
        #expect(lines.contains("ADR;TYPE=work:;;1 Main St\\; Rear;Town;;;"))
        let read = CardEdit(card: try Self.reread(patch))
        #expect(read.addresses.first?.value.street == "1 Main St; Rear")
    }

    @Test func aBirthdayWithoutAYearIsWrittenAsEachVersionSpellsIt() throws {
        var v4 = try Self.patch(Self.v40)
        var edit4 = CardEdit(card: v4.originalCard)
        edit4.birthday = ContactDate(year: nil, month: 4, day: 15)
        v4.apply(edit4)
        #expect(Self.lines(Self.text(v4)).contains("BDAY:--0415"))
        #expect(CardEdit(card: try Self.reread(v4)).birthday == ContactDate(year: nil, month: 4, day: 15))

        var v3 = try Self.patch(Self.apple30)
        var edit3 = CardEdit(card: v3.originalCard)
        edit3.birthday = ContactDate(year: nil, month: 4, day: 15)
        v3.apply(edit3)
        #expect(Self.lines(Self.text(v3)).contains("BDAY;X-APPLE-OMIT-YEAR=1604:1604-04-15"))
        #expect(CardEdit(card: try Self.reread(v3)).birthday == ContactDate(year: nil, month: 4, day: 15))

        // With a year, then removed.
        var again = try CardPatch(bytes: v3.bytes)
        var withYear = CardEdit(card: again.originalCard)
        withYear.birthday = ContactDate(year: 1980, month: 4, day: 15)
        again.apply(withYear)
        #expect(Self.lines(Self.text(again)).contains("BDAY:1980-04-15"))
        var removed = try CardPatch(bytes: again.bytes)
        var none = CardEdit(card: removed.originalCard)
        none.birthday = nil
        removed.apply(none)
        #expect(!Self.text(removed).contains("BDAY"))
    }

    @Test func theFormattedNameFollowsTheNamesWhenItWasMadeFromThem() throws {
        var patch = try Self.patch(Self.apple30)
        var edit = CardEdit(card: patch.originalCard)
        edit.givenName = "John"
        patch.apply(edit)
        let lines = Self.lines(Self.text(patch))
        #expect(lines.contains("N:Appleseed;John;;;") && lines.contains("FN:John Appleseed"))

        // A nickname-like FN the person typed stays.
        let custom = Self.apple30.replacingOccurrences(of: "FN:Johnny Appleseed", with: "FN:The Apple Man")
        var kept = try Self.patch(custom)
        var keptEdit = CardEdit(card: kept.originalCard)
        keptEdit.givenName = "John"
        kept.apply(keptEdit)
        #expect(Self.lines(Self.text(kept)).contains("FN:The Apple Man"))
    }

    @Test func singleValuesAreReplacedAddedAndRemovedWithTheirParameters() throws {
        var patch = try Self.patch(Self.apple30)
        var edit = CardEdit(card: patch.originalCard)
        edit.note = ""
        edit.organization = "Other Corp"
        edit.jobTitle = "Engineer, Senior"
        edit.nickname = "Jo"
        patch.apply(edit)
        let written = Self.text(patch)
        #expect(!written.contains("NOTE"))
        #expect(Self.lines(written).contains("ORG:Other Corp"))
        #expect(Self.lines(written).contains("TITLE:Engineer\\, Senior"))
        #expect(Self.lines(written).contains("NICKNAME:Jo"))
        let read = CardEdit(card: try Self.reread(patch))
        #expect(read.jobTitle == "Engineer, Senior" && read.organization == "Other Corp")
    }

    @Test func lineFeedCardsStayLineFeedCards() throws {
        let source = Self.v40.replacingOccurrences(of: "\r\n", with: "\n")
        var patch = try Self.patch(source)
        var edit = CardEdit(card: patch.originalCard)
        edit.note = "new note"
        patch.apply(edit)
        #expect(!patch.bytes.contains(0x0D))
        #expect(Self.text(patch).contains("\nNOTE:new note\n"))
    }

    @Test func groupMembershipIsEditedInTheCardsOwnStyle() throws {
        let v4Group = "BEGIN:VCARD\r\nVERSION:4.0\r\nKIND:group\r\nFN:Friends\r\nUID:g1\r\nMEMBER:urn:uuid:a\r\nEND:VCARD\r\n"
        var v4 = try Self.patch(v4Group)
        #expect(v4.isGroup && v4.memberUIDs == ["a"])
        let changed1 = v4.addMember("b")
        #expect(changed1)
        let changed2 = v4.addMember("urn:uuid:b")
        #expect(!changed2)
        #expect(Self.lines(Self.text(v4)).contains("MEMBER:urn:uuid:b"))
        let changed3 = v4.removeMember("a")
        #expect(changed3)
        #expect(v4.memberUIDs == ["b"])
        #expect(!Self.text(v4).contains("MEMBER:urn:uuid:a"))

        let appleGroup = "BEGIN:VCARD\r\nVERSION:3.0\r\nX-ADDRESSBOOKSERVER-KIND:group\r\nN:Team\r\nFN:Team\r\nUID:g2\r\n"
            + "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:a\r\nX-ADDRESSBOOKSERVER-MEMBER:urn:uuid:c\r\nEND:VCARD\r\n"
        var apple = try Self.patch(appleGroup)
        let changed4 = apple.addMember("b")
        #expect(changed4)
        let lines = Self.lines(Self.text(apple))
        #expect(lines[lines.firstIndex(of: "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:c")! + 1] == "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:b")
        // A merge points members at the survivor; a survivor already there is not listed twice.
        let changed5 = apple.replaceMember("a", with: "z")
        #expect(changed5)
        #expect(apple.memberUIDs == ["z", "c", "b"])
        let changed6 = apple.replaceMember("c", with: "z")
        #expect(changed6)
        #expect(apple.memberUIDs == ["z", "b"])
        let changed7 = apple.replaceMember("nobody", with: "z")
        #expect(!changed7)
    }

    @Test func categoryMembershipEditsTheMemberCard() throws {
        let source = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:A\r\nN:;A;;;\r\nCATEGORIES:Friends,Work\r\nEND:VCARD\r\n"
        var patch = try Self.patch(source)
        let changed8 = patch.setCategory("Family", member: true)
        #expect(changed8)
        let changed9 = patch.setCategory("friends", member: true)
        #expect(!changed9)
        #expect(Self.lines(Self.text(patch)).contains("CATEGORIES:Friends,Work,Family"))
        let changed10 = patch.setCategory("Work", member: false)
        #expect(changed10)
        #expect(patch.categories == ["Friends", "Family"])
        var none = try Self.patch(Self.v40)
        let changed11 = none.setCategory("Book club, Tuesdays", member: true)
        #expect(changed11)
        #expect(Self.lines(Self.text(none)).contains("CATEGORIES:Book club\\, Tuesdays"))
        #expect(none.categories == ["Book club, Tuesdays"])
    }

    @Test func photosAreSetInTheCardsVersionAndRemoved() throws {
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]
        var v3 = try Self.patch(Self.apple30)
        v3.setPhoto(ContactImage(mediaType: "image/jpeg", data: jpeg))
        #expect(Self.text(v3).contains("PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AECAw=="))
        var v4 = try Self.patch(Self.v40)
        v4.setPhoto(ContactImage(mediaType: "image/jpeg", data: jpeg))
        #expect(Self.text(v4).contains("PHOTO:data:image/jpeg;base64,/9j/4AECAw=="))
        var removed = try CardPatch(bytes: v4.bytes)
        removed.removePhoto()
        #expect(!Self.text(removed).contains("PHOTO"))
    }

    @Test func mergeKeepsEveryMultiValueOnceAndAsksAboutSingleValues() throws {
        let other = [
            "BEGIN:VCARD", "VERSION:4.0", "UID:other", "FN:Johnny A.", "N:Appleseed;Johnny;;;",
            "TEL;TYPE=cell:+1 (555) 0100", "TEL;TYPE=work:+1 555 0199", "EMAIL:JOHNNY@example.com",
            "item1.EMAIL:j@work.example", "item1.X-ABLabel:Desk", "BDAY:19800415", "CATEGORIES:Friends",
            "X-OTHER;X-P=1:carried too", "END:VCARD", "",
        ].joined(separator: "\r\n")
        let survivorCard = try VCardParser.parse(Self.apple30)[0]
        let otherCard = try VCardParser.parse(other)[0]
        let conflicts = CardMerge.conflicts([survivorCard, otherCard])
        #expect(conflicts.map(\.property) == ["FN"])
        #expect(conflicts[0].options.map(\.value) == ["Johnny Appleseed", "Johnny A."])

        var survivor = try Self.patch(Self.apple30)
        CardMerge.merge(into: &survivor, others: [otherCard], choices: ["FN": 1])
        let merged = try Self.reread(survivor)
        let edit = CardEdit(card: merged)
        // +1 (555) 0100 is the same number as +1 555 0100; the e-mail differs only in case.
        #expect(edit.phones.map(\.value) == ["+1 555 0100", "+1 555 0101", "+1 555 0199"])
        #expect(edit.emails.map(\.value) == ["johnny@example.com", "j@work.example"])
        #expect(edit.emails.last?.label == .custom("Desk"))
        #expect(edit.formattedName == "Johnny A.")
        #expect(edit.birthday == ContactDate(year: 1980, month: 4, day: 15))
        #expect(edit.categories == ["Friends"])
        #expect(merged.first("UID")?.text == "8D5F3C5A-1111-2222-3333-444455556666")
        // What the merge does not know is kept as well: a merge loses no value.
        #expect(merged.first("X-OTHER")?.text == "carried too")
        // The survivor's own untouched lines keep their bytes.
        let lines = Self.lines(Self.text(survivor))
        for line in ["X-UNKNOWN-THING;X-PARAM=\"a,b\":keep me exactly", "item2.X-ABLabel:Gym", "item3.X-ABADR:us"] {
            #expect(lines.contains(line))
        }
    }

    @Test func aCardThatCannotBeMappedToItsLinesIsStillPatched() throws {
        let v21 = "BEGIN:VCARD\r\nVERSION:2.1\r\nN:Doe;Jane\r\nFN:Jane Doe\r\nTEL;CELL:123\r\nEND:VCARD\r\n"
        var patch = try Self.patch(v21)
        var edit = CardEdit(card: patch.originalCard)
        edit.phones[0].label = .custom("Boat")
        patch.apply(edit)
        let card = try Self.reread(patch)
        #expect(card.version == .v30)
        #expect(CardEdit(card: card).phones.first?.label == .custom("Boat"))
        #expect(throws: CardPatch.PatchError.self) { try CardPatch(bytes: Array("not a card".utf8)) }
    }
}
