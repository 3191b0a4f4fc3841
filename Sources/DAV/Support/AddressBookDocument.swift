import Foundation
import VCard

/// A whole address book as one document, what GET of a book answers and `rolo export`
/// writes: the stored vCards one after the other (`text/vcard`, like sabre/dav's export,
/// and what every contacts app imports), or a JSON array of their jCards. Built a card at a
/// time, so a book of any size is written as it is read.
public struct AddressBookDocument: Sendable {
    public let form: CardMediaType
    private var cards = 0

    public init(_ form: CardMediaType) {
        self.form = form
    }

    /// Appends one stored card. A jCard array leaves out a card that cannot be read (no
    /// stored card is so: each was validated when it was written).
    public mutating func append(card: Data, to out: inout [UInt8]) {
        switch form {
        case .vCard:
            out.append(contentsOf: card)
            if card.last != UInt8(ascii: "\n") { out.append(contentsOf: "\r\n".utf8) }
        case .jCard:
            guard let parsed = try? VCardParser.parse([UInt8](card)), parsed.count == 1 else { return }
            out.append(contentsOf: (cards == 0 ? "[\n" : ",\n").utf8)
            out.append(contentsOf: JCard.encode(parsed[0]).utf8)
        }
        cards += 1
    }

    /// Ends the document (the jCard array's closing bracket).
    public func finish(into out: inout [UInt8]) {
        if form == .jCard { out.append(contentsOf: (cards == 0 ? "[]\n" : "\n]\n").utf8) }
    }
}
