import VCard

extension CardPatch {
    /// Whether the card is a group card (`KIND:group` or `X-ADDRESSBOOKSERVER-KIND:group`).
    public var isGroup: Bool {
        properties.contains { entry in
            (entry.property.name == "KIND" || entry.property.name == "X-ADDRESSBOOKSERVER-KIND")
                && entry.property.text.lowercased() == "group"
        }
    }

    /// Member UIDs of a group card, `urn:uuid:` removed, in card order.
    public var memberUIDs: [String] {
        properties.filter { Self.memberNames.contains($0.property.name) }.map { MemberReference.stripped($0.property.text) }
    }

    static let memberNames: Set<String> = ["MEMBER", "X-ADDRESSBOOKSERVER-MEMBER"]

    /// The member property this card uses: Apple's for a card that already has Apple's kind
    /// or members (or is 3.0, which has no MEMBER), else vCard 4's.
    var memberPropertyName: String {
        let names = Set(properties.map(\.property.name))
        if names.contains("X-ADDRESSBOOKSERVER-MEMBER") || names.contains("X-ADDRESSBOOKSERVER-KIND") || version == .v30 {
            return "X-ADDRESSBOOKSERVER-MEMBER"
        }
        return "MEMBER"
    }

    /// Adds a member line for `uid`; false when it is a member already.
    @discardableResult
    public mutating func addMember(_ uid: String) -> Bool {
        let stripped = MemberReference.stripped(uid)
        guard !memberUIDs.contains(stripped) else { return false }
        let name = memberPropertyName
        let property = VCardProperty(name: name, rawValue: MemberReference.uri(for: stripped))
        if let last = ids(named: name).last { insert(property, after: last) } else { insert(property) }
        return true
    }

    /// Removes every member line naming `uid`; false when there was none.
    @discardableResult
    public mutating func removeMember(_ uid: String) -> Bool {
        let stripped = MemberReference.stripped(uid)
        let lines = properties.filter { Self.memberNames.contains($0.property.name) && MemberReference.stripped($0.property.text) == stripped }
        for line in lines { remove(line.id) }
        return !lines.isEmpty
    }

    /// Points the member lines naming `old` at `new` (a merge): the first one is rewritten
    /// in place, repeats and lines that would name `new` twice go. False when `old` was no member.
    @discardableResult
    public mutating func replaceMember(_ old: String, with new: String) -> Bool {
        let oldUID = MemberReference.stripped(old), newUID = MemberReference.stripped(new)
        let lines = properties.filter { Self.memberNames.contains($0.property.name) && MemberReference.stripped($0.property.text) == oldUID }
        guard let first = lines.first else { return false }
        if memberUIDs.contains(newUID) {
            for line in lines { remove(line.id) }
        } else {
            var property = first.property
            property.rawValue = MemberReference.uri(for: newUID)
            replace(first.id, with: property)
            for line in lines.dropFirst() { remove(line.id) }
        }
        return true
    }
}
