import Contacts
import Testing
import VCard

/// The design.md label table, read and written, both versions.
struct LabelMappingTests {
    @Test(arguments: [
        (["CELL", "VOICE", "PREF"], Label.mobile), (["IPHONE", "CELL"], .iPhone), (["HOME", "FAX"], .homeFax),
        (["WORK", "FAX"], .workFax), (["fax"], .otherFax), (["WORK", "CELL"], .mobile), (["MAIN"], .main),
        (["PAGER"], .pager), (["home"], .home), (["Work"], .work), (["OTHER"], .other),
    ] as [([String], Label)])
    func typeTokensReadToTheirLabel(tokens: [String], label: Label) {
        #expect(Label(typeTokens: tokens) == label)
    }

    @Test func labelNeutralTokensGiveNoLabel() {
        #expect(Label(typeTokens: ["VOICE", "INTERNET", "PREF", "X400"]) == nil)
        #expect(Label(typeTokens: []) == nil)
    }

    @Test(arguments: [
        ("_$!<Other>!$_", Label.other), ("_$!<HomePage>!$_", .homePage), ("_$!<HomeFAX>!$_", .homeFax),
        ("_$!<WorkFAX>!$_", .workFax), ("_$!<iPhone>!$_", .iPhone), ("_$!<Anniversary>!$_", .anniversary),
        ("_$!<Spouse>!$_", .spouse), ("_$!<Mobile>!$_", .mobile), ("Gym", .custom("Gym")),
        ("_$!<Unknown>!$_", .custom("_$!<Unknown>!$_")),
    ] as [(String, Label)])
    func appleLabelsReadToTheirLabel(text: String, label: Label) {
        #expect(Label(abLabel: text) == label)
    }

    @Test func emptyABLabelIsNoLabel() {
        #expect(Label(abLabel: "") == nil)
    }

    @Test func everyBuiltInWritesAnAppleLabelThatReadsBack() {
        for label in Label.builtIns {
            #expect(Label(abLabel: label.abLabelText) == label, "\(label.name) -> \(label.abLabelText)")
        }
        #expect(Label.homeFax.abLabelText == "_$!<HomeFAX>!$_")
        #expect(Label.iPhone.abLabelText == "_$!<iPhone>!$_")
    }

    @Test func writingFollowsTheDesignTable() {
        func encoding(_ label: Label, _ version: VCardVersion) -> LabelEncoding { label.vCardEncoding(version: version) }
        #expect(encoding(.home, .v30) == LabelEncoding(typeTokens: ["HOME"], abLabel: nil))
        #expect(encoding(.home, .v40) == LabelEncoding(typeTokens: ["home"], abLabel: nil))
        #expect(encoding(.mobile, .v30).typeTokens == ["CELL"])
        #expect(encoding(.iPhone, .v30) == LabelEncoding(typeTokens: ["IPHONE", "CELL"], abLabel: nil))
        #expect(encoding(.iPhone, .v40) == LabelEncoding(typeTokens: ["cell"], abLabel: "_$!<iPhone>!$_"))
        #expect(encoding(.main, .v30).typeTokens == ["MAIN"])
        #expect(encoding(.homeFax, .v40).typeTokens == ["home", "fax"])
        #expect(encoding(.workFax, .v30).typeTokens == ["WORK", "FAX"])
        #expect(encoding(.otherFax, .v30).typeTokens == ["FAX"])
        #expect(encoding(.pager, .v30).typeTokens == ["PAGER"])
        #expect(encoding(.other, .v30) == LabelEncoding(typeTokens: [], abLabel: "_$!<Other>!$_"))
        #expect(encoding(.custom("Gym"), .v40) == LabelEncoding(typeTokens: [], abLabel: "Gym"))
    }

    @Test func everyLabelWrittenOnAPhoneReadsBackInBothVersions() throws {
        let labels: [Label?] = Label.builtIns + [.custom("Gym"), .custom("Parents' home"), nil]
        let phones = labels.enumerated().map { index, label in
            LabeledValue(identifier: "p\(index)", label: label, value: "+1 555 01\(index)", isPreferred: index == 2)
        }
        let contact = Contact(identifier: "label-table", formattedName: "Labels", phoneNumbers: phones)
        for version in [VCardVersion.v30, .v40] {
            let text = VCardWriter.write(contact.vCard(version: version))
            let reread = Contact(vCard: try #require(try VCardParser.parse(text).first))
            #expect(reread.phoneNumbers.map(\.label) == labels, "\(version.rawValue):\n\(text)")
            #expect(reread.phoneNumbers.map(\.isPreferred) == phones.map(\.isPreferred))
        }
    }

    @Test func aChangedLabelIsNotOverriddenByKeptTypeTokens() throws {
        // TYPE=WORK,CELL reads as mobile and keeps WORK; relabelling it home must write home.
        let card = try #require(try VCardParser.parse("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:A\r\nTEL;TYPE=WORK,CELL:1\r\nEND:VCARD\r\n").first)
        let contact = Contact(vCard: card)
        #expect(contact.phoneNumbers.first?.label == .mobile)
        let relabelled = Contact(identifier: nil, formattedName: "A",
                                 phoneNumbers: [try #require(contact.phoneNumbers.first).withLabel(.work)])
        let reread = Contact(vCard: relabelled.vCard(version: .v30))
        #expect(reread.phoneNumbers.first?.label == .work)
        let kept = Contact(vCard: contact.vCard(version: .v30))
        #expect(kept.phoneNumbers.first?.label == .mobile)
        #expect(kept.vCard(version: .v30).first("TEL")?.types.contains("WORK") == true, "WORK is kept")
    }
}
