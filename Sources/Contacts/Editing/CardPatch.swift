import Foundation
import VCard

/// Edits a stored vCard line by line, so that what an editor does not touch keeps its bytes.
///
/// The stored bytes are split into the card's head (`BEGIN:VCARD`), one entry per property
/// (its physical lines, folding and line end included) and the tail (`END:VCARD`). An edit
/// replaces, removes or inserts entries; writing the card back joins the untouched entries'
/// original bytes with the new lines (written by `VCardWriter`, in the card's own line
/// ending). So unknown `X-` properties, Apple's `itemN.X-ABLabel` companions, a PHOTO, the
/// folding and the parameter spelling of every untouched line survive byte for byte.
///
/// Entries are named by their index in the card as it was read (`originalCard.properties`);
/// inserted ones get indexes after those. A card whose bytes cannot be mapped to its lines
/// (a UTF-16 file, a 2.1 card) is patched all the same, but every line is written anew.
public struct CardPatch: Sendable {
    public enum PatchError: Error, Sendable, Equatable, CustomStringConvertible {
        case unreadable(String)
        case notOneCard

        public var description: String {
            switch self {
            case .unreadable(let reason): "the card cannot be read: \(reason)"
            case .notOneCard: "the data holds no card or more than one"
            }
        }
    }

    struct Entry: Sendable {
        var id: Int
        var property: VCardProperty
        /// The original bytes while the entry is untouched.
        var raw: [UInt8]?
        var removed = false
    }

    /// The card as read from the bytes, before any edit (a 2.1 card converted to 3.0).
    public let originalCard: VCard
    /// The version every new line is written in.
    public var version: VCardVersion { originalCard.version }
    var head: [UInt8]
    var entries: [Entry]
    var tail: [UInt8]
    let lineEnd: [UInt8]
    private var nextID: Int
    /// Whether any edit changed the card (`touchRevision` only then).
    public private(set) var hasChanges = false

    /// Reads one card strictly (as a PUT would).
    public init(bytes: [UInt8]) throws(PatchError) {
        let cards: [VCard]
        do {
            cards = try VCardParser.parse(bytes)
        } catch {
            throw .unreadable(error.description)
        }
        guard cards.count == 1, let card = cards.first else { throw .notOneCard }
        self.init(card: card, bytes: bytes)
    }

    public init(data: Data) throws(PatchError) {
        try self.init(bytes: [UInt8](data))
    }

    init(card: VCard, bytes: [UInt8]) {
        lineEnd = bytes.contains(0x0D) || !bytes.contains(0x0A) ? [0x0D, 0x0A] : [0x0A]
        if card.version != .v21, let layout = Self.layout(of: card, in: bytes) {
            originalCard = card
            head = layout.head
            tail = layout.tail
            entries = card.properties.enumerated().map { index, property in
                Entry(id: index, property: property, raw: layout.raws[index])
            }
        } else {
            // Every line written anew (2.1 becomes 3.0, as every writer does); the card as
            // read is then the converted one, so that ids match its properties.
            let written = card.version == .v21 ? VCardConverter.convert(card, to: .v30) : card
            originalCard = written
            head = Array("BEGIN:VCARD".utf8) + lineEnd
            tail = Array("END:VCARD".utf8) + lineEnd
            entries = written.properties.enumerated().map { Entry(id: $0, property: $1, raw: nil) }
            if card.version == .v21 { hasChanges = true }
        }
        nextID = entries.count
    }

    // MARK: Reading back

    /// The patched card's bytes.
    public var bytes: [UInt8] {
        var out = head
        for entry in entries where !entry.removed {
            if let raw = entry.raw { out += raw } else { out += line(entry.property) }
        }
        out += tail
        return out
    }

    public var data: Data { Data(bytes) }

    /// The patched card as a parsed card (properties without line numbers where new).
    public var card: VCard {
        VCard(version: version, properties: entries.filter { !$0.removed }.map(\.property))
    }

    /// The current properties with their ids, in card order.
    public var properties: [(id: Int, property: VCardProperty)] {
        entries.filter { !$0.removed }.map { ($0.id, $0.property) }
    }

    public func property(_ id: Int) -> VCardProperty? {
        entries.first { $0.id == id && !$0.removed }?.property
    }

    /// Ids of the current properties named `name` (case-insensitive), in order.
    public func ids(named name: String) -> [Int] {
        let upper = name.uppercased()
        return entries.filter { !$0.removed && $0.property.name == upper }.map(\.id)
    }

    // MARK: Low-level edits

    /// Replaces a property (its line is written anew); a no-op when it is equal.
    public mutating func replace(_ id: Int, with property: VCardProperty) {
        guard let index = position(of: id), entries[index].property.withoutLine != property.withoutLine else { return }
        entries[index].property = property
        entries[index].raw = nil
        hasChanges = true
    }

    public mutating func remove(_ id: Int) {
        guard let index = position(of: id) else { return }
        entries[index].removed = true
        hasChanges = true
    }

    /// Inserts after the entry `id` (nil: before `END:VCARD`) and returns the new id.
    @discardableResult
    public mutating func insert(_ property: VCardProperty, after id: Int?) -> Int {
        let newID = nextID
        nextID += 1
        let entry = Entry(id: newID, property: property, raw: nil)
        if let id, let index = entries.firstIndex(where: { $0.id == id }) {
            entries.insert(entry, at: index + 1)
        } else {
            entries.append(entry)
        }
        hasChanges = true
        return newID
    }

    /// Inserts where a card written in the usual order would have it: after the last
    /// property of the same name, else after the last one that comes before it in
    /// `CardPatch.order` (with that property's item-group companions), else at the end.
    @discardableResult
    public mutating func insert(_ property: VCardProperty) -> Int {
        insert(property, after: insertionPoint(for: property.name))
    }

    /// Property names in the order cards usually list them; new lines go into this order.
    static let order = ["VERSION", "PRODID", "KIND", "X-ADDRESSBOOKSERVER-KIND", "UID", "FN", "N", "NICKNAME",
                        "X-PHONETIC-FIRST-NAME", "X-PHONETIC-MIDDLE-NAME", "X-PHONETIC-LAST-NAME", "ORG", "TITLE",
                        "BDAY", "TEL", "EMAIL", "ADR", "URL", "IMPP", "NOTE", "CATEGORIES", "PHOTO", "MEMBER",
                        "X-ADDRESSBOOKSERVER-MEMBER"]

    func insertionPoint(for name: String) -> Int? {
        let upper = name.uppercased()
        let rank = Self.order.firstIndex(of: upper) ?? Self.order.count
        let eligible = Set(Self.order.prefix(rank + 1)).union([upper])
        guard let last = entries.lastIndex(where: { !$0.removed && eligible.contains($0.property.name) }) else {
            return nil
        }
        var index = last
        if let group = entries[last].property.group?.lowercased() {
            while index + 1 < entries.count, entries[index + 1].property.group?.lowercased() == group { index += 1 }
        }
        return entries[index].id
    }

    private func position(of id: Int) -> Int? {
        entries.firstIndex { $0.id == id && !$0.removed }
    }

    /// An item group (`itemN`) no property of the card uses.
    func unusedGroup() -> String {
        let used = Set(entries.compactMap { $0.property.group?.lowercased() })
        var number = 1
        while used.contains("item\(number)") { number += 1 }
        return "item\(number)"
    }

    /// The first companion (`X-ABLABEL`, `X-ABADR`) in the item group of `id`.
    func companion(_ name: String, of id: Int) -> Int? {
        guard let group = property(id)?.group?.lowercased() else { return nil }
        return entries.first { !$0.removed && $0.property.name == name && $0.property.group?.lowercased() == group }?.id
    }

    /// Removes a property and, when no other property of its item group stays, the group's
    /// Apple companions (its `X-ABLabel`, `X-ABADR`).
    public mutating func removeWithCompanions(_ id: Int) {
        guard let removed = property(id) else { return }
        remove(id)
        guard let group = removed.group?.lowercased() else { return }
        let companions: Set<String> = ["X-ABLABEL", "X-ABADR"]
        let others = entries.filter { !$0.removed && $0.property.group?.lowercased() == group }
        if others.allSatisfy({ companions.contains($0.property.name) }) {
            for other in others { remove(other.id) }
        }
    }

    // MARK: Writing

    private func line(_ property: VCardProperty) -> [UInt8] {
        let written = VCardWriter.write(property)
        guard lineEnd == [0x0A] else { return written }
        var out: [UInt8] = []
        out.reserveCapacity(written.count)
        for byte in written where byte != 0x0D { out.append(byte) }
        return out
    }

    /// Where each property's lines are in `bytes`, or nil when they cannot be told apart
    /// (then the card is written anew).
    private static func layout(of card: VCard, in bytes: [UInt8]) -> (head: [UInt8], raws: [[UInt8]], tail: [UInt8])? {
        var starts = [0]
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0A {
                starts.append(index + 1)
            } else if byte == 0x0D {
                if index + 1 < bytes.count, bytes[index + 1] == 0x0A { index += 1 }
                starts.append(index + 1)
            }
            index += 1
        }
        func offset(ofLine number: Int) -> Int? {
            number >= 1 && number <= starts.count ? starts[number - 1] : nil
        }
        let lines = card.properties.map(\.line)
        guard lines.allSatisfy({ $0 > card.line }), zip(lines, lines.dropFirst()).allSatisfy({ $0 < $1 }) else { return nil }
        // The END line: the first after the last property that says END:VCARD.
        var endLine: Int?
        var number = (lines.last ?? card.line) + 1
        while number <= starts.count {
            guard let start = offset(ofLine: number) else { break }
            let end = number < starts.count ? starts[number] : bytes.count
            let text = String(decoding: bytes[start..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if text.uppercased() == "END:VCARD" {
                endLine = number
                break
            }
            number += 1
        }
        guard let endLine, let tailStart = offset(ofLine: endLine) else { return nil }
        guard let first = lines.first else {
            return (Array(bytes[..<tailStart]), [], Array(bytes[tailStart...]))
        }
        guard let headEnd = offset(ofLine: first) else { return nil }
        var raws: [[UInt8]] = []
        for (position, property) in card.properties.enumerated() {
            guard let start = offset(ofLine: property.line) else { return nil }
            let end = position + 1 < lines.count ? offset(ofLine: lines[position + 1]) : tailStart
            guard let end, end > start else { return nil }
            let raw = Array(bytes[start..<end])
            guard startsWithName(raw, property) else { return nil }
            raws.append(raw)
        }
        return (Array(bytes[..<headEnd]), raws, Array(bytes[tailStart...]))
    }

    /// Whether the raw line begins with the property's group and name (any case): the check
    /// that the line numbers the parser gave are byte lines of this buffer.
    private static func startsWithName(_ raw: [UInt8], _ property: VCardProperty) -> Bool {
        let expected = ((property.group.map { $0 + "." } ?? "") + property.name).uppercased()
        let prefix = String(decoding: raw.prefix(expected.utf8.count), as: UTF8.self).uppercased()
        return prefix == expected
    }
}
