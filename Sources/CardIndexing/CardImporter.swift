import Authorization
import CardIndexing
import Crypto
import Foundation
import RoloStore
import VCard

/// The one bulk path from .vcf bytes to stored cards, shared by `rolo import` and fixture
/// folders: split multi-card streams, read each card leniently (old phones and exporters
/// write cards a PUT refuses: no VERSION, no FN, legacy charsets, unindented continuation
/// lines), convert 2.1 to 3.0, add a missing UID and FN, validate like a PUT, then write
/// in batched transactions through `RoloStore.importCards`. Stored cards are always ones a
/// PUT would accept: byte for byte what the file held when a PUT would have taken it (plus
/// a UID line), else written out from what the lenient reading understood.
/// Works on bytes, so a fold inside a UTF-8 character (legal in a stream) survives.
public enum CardImporter {
    /// Where a card without UID gets one.
    public enum UIDSource: Sendable {
        /// A fresh random UUID (`rolo import`).
        case random
        /// A UUID-shaped SHA-256 digest of the card's bytes: the same file gives the same UID
        /// on every run (fixtures, deterministic servers).
        case contentDigest
    }

    /// A card ready for the store: the bytes to keep, its index metadata and its UID.
    public struct PreparedCard: Sendable {
        public var bytes: [UInt8]
        public var metadata: CardMetadata
        public var uid: String
    }

    /// What a write did: cards new to the book, and cards that replaced one with the same UID.
    public struct Counts: Sendable, Equatable {
        public var created = 0
        public var replaced = 0
        public var total: Int { created + replaced }
        public init() {}
    }

    /// A card that cannot be stored, with the reason.
    public struct InvalidCard: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The bytes of each BEGIN:VCARD … END:VCARD block, line ends kept (see `split(_:)`;
    /// a card the file leaves unterminated is not among them).
    public static func cards(in bytes: [UInt8]) -> [[UInt8]] {
        split(bytes).cards.map(\.bytes)
    }

    /// A file's cards: each block with the line it begins on, and the card the file ends
    /// inside, if any (its BEGIN:VCARD with no END:VCARD after it), which is not imported
    /// and must be reported, not dropped in silence.
    public struct Split: Sendable {
        public struct Block: Sendable {
            /// The 1-based line of its BEGIN:VCARD in the file.
            public var line: Int
            public var bytes: [UInt8]
        }
        public var cards: [Block] = []
        /// The line of the BEGIN:VCARD the file ends inside.
        public var unterminatedLine: Int?

        /// Why the unterminated card was left out, in `rolo vcard inspect`'s words.
        public var unterminatedError: VCardError? {
            unterminatedLine.map {
                VCardError("missing END:VCARD: the vCard that begins on line \($0) is not closed before the end of the input",
                           line: $0)
            }
        }
    }

    /// Splits a file into its BEGIN:VCARD … END:VCARD blocks, line ends kept. A file whose
    /// lines are not ASCII-compatible (UTF-16, as Outlook's "Unicode" export writes) has no
    /// such block in its bytes: it is read whole and each card comes back written as UTF-8.
    public static func split(_ bytes: [UInt8]) -> Split {
        let split = asciiBlocks(in: bytes)
        if split.cards.isEmpty, split.unterminatedLine == nil, bytes.contains(0),
           let cards = try? VCardParser.parse(bytes, mode: .lenient) {
            return Split(cards: cards.map { Split.Block(line: max($0.line, 1), bytes: Array(VCardWriter.write($0).utf8)) })
        }
        return split
    }

    private static func asciiBlocks(in bytes: [UInt8]) -> Split {
        var split = Split(), lineStart = 0, cardStart: (offset: Int, line: Int)?
        var index = 0, line = 1
        while index <= bytes.count {
            guard index == bytes.count || bytes[index] == UInt8(ascii: "\n") else { index += 1; continue }
            let lineEnd = min(index + 1, bytes.count)
            let keyword = trimmedUppercase(bytes[lineStart..<index])
            if keyword == "BEGIN:VCARD", cardStart == nil { cardStart = (lineStart, line) }
            if keyword == "END:VCARD", let begin = cardStart {
                split.cards.append(Split.Block(line: begin.line, bytes: Array(bytes[begin.offset..<lineEnd])))
                cardStart = nil
            }
            lineStart = lineEnd
            index += 1
            line += 1
        }
        split.unterminatedLine = cardStart?.line
        return split
    }

    private static func trimmedUppercase(_ line: ArraySlice<UInt8>) -> String {
        guard line.count < 32 else { return "" }
        return String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
    }

    /// Reads one card's bytes leniently, converts 2.1 to 3.0, adds a UID and an FN (derived
    /// as Apple and Google clients show a card without one) where missing, and validates it
    /// like a PUT. A card a PUT would take as it is (strict reading, UTF-8, 3.0/4.0, FN)
    /// keeps its bytes, plus the added UID line; any other is written out from its reading.
    public static func prepare(_ bytes: [UInt8], maxSize: Int, uids: UIDSource = .random) throws -> PreparedCard {
        guard bytes.count <= maxSize else { throw InvalidCard(description: "larger than the \(maxSize)-byte limit") }
        // Bytes kept must be UTF-8, as a PUT requires (a 3.0 card may declare a CHARSET).
        let isUTF8 = !bytes.contains { $0 >= 0x80 } || String(validating: bytes, as: UTF8.self) != nil
        let strict = isUTF8 ? try? VCardParser.parse(bytes) : nil
        let cards = try strict ?? VCardParser.parse(bytes, mode: .lenient)
        guard cards.count == 1, var card = cards.first else { throw InvalidCard(description: "not exactly one vCard") }
        // An empty UID line is replaced, so the bytes cannot be kept then.
        let hadUIDLine = card.first("UID") != nil
        var keepsBytes = strict != nil && card.version != .v21 && card.first("FN") != nil
        var uid = card.first("UID")?.text ?? ""
        let addsUID = uid.isEmpty
        if addsUID {
            uid = switch uids {
            case .random: UUID().uuidString.lowercased()
            case .contentDigest: digestUUID(bytes)
            }
            card.properties.removeAll { $0.name == "UID" }
            card.properties.append(VCardProperty(name: "UID", rawValue: uid))
            if hadUIDLine { keepsBytes = false }
        }
        card = card.version == .v21 ? VCardConverter.convert(card, to: .v30) : VCardConverter.addingFormattedName(card)
        try VCardValidator.validate(card, requireUID: true)
        guard !keepsBytes else {
            return PreparedCard(bytes: addsUID ? insertingUID(uid, into: bytes) : bytes, metadata: CardMetadata(card: card), uid: uid)
        }
        let written = Array(VCardWriter.write(card).utf8)
        // What is written out must read back strictly, like every card a PUT stores.
        guard let reread = try? VCardParser.parse(written), reread.count == 1 else {
            throw InvalidCard(description: "cannot be written as a valid vCard \(card.version.rawValue)")
        }
        return PreparedCard(bytes: written, metadata: CardMetadata(card: reread[0]), uid: uid)
    }

    /// Adds `UID:<uid>` right before the last END:VCARD line, with the card's line end.
    static func insertingUID(_ uid: String, into bytes: [UInt8]) -> [UInt8] {
        let lineEnd: [UInt8] = bytes.contains(UInt8(ascii: "\r")) ? [13, 10] : [10]
        // Find the start of the END:VCARD line: the last line that is not empty.
        var end = bytes.count
        while end > 0, bytes[end - 1] == 10 || bytes[end - 1] == 13 { end -= 1 }
        var lineStart = end
        while lineStart > 0, bytes[lineStart - 1] != 10 { lineStart -= 1 }
        return Array(bytes[..<lineStart]) + Array("UID:\(uid)".utf8) + lineEnd + Array(bytes[lineStart...])
    }

    /// `<uid>.vcf` when the UID is URL-safe, otherwise a name digested from the UID (stable
    /// across runs, and one UID always maps to one name).
    public static func resourceName(forUID uid: String) -> String {
        let safe = uid.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.@".contains($0)) }
        return (safe && uid.count <= 200 ? uid : digestUUID(Array(uid.utf8))) + ".vcf"
    }

    /// The first 16 bytes of SHA-256 as a version-8 (custom) UUID, lower case.
    static func digestUUID(_ bytes: [UInt8]) -> String {
        var digest = Array(SHA256.hash(data: bytes).prefix(16))
        digest[6] = (digest[6] & 0x0F) | 0x80
        digest[8] = (digest[8] & 0x3F) | 0x80
        let hex = digest.map { String(format: "%02x", $0) }.joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex[hex.index(hex.startIndex, offsetBy: range.lowerBound)..<hex.index(hex.startIndex, offsetBy: range.upperBound)])
        }
        return parts.joined(separator: "-")
    }

    /// Writes `cards` into the book, `batchSize` per transaction (an interruption leaves
    /// whole cards only). A card whose UID is already in the book replaces that resource.
    /// `progress` gets the number of cards written after each batch.
    ///
    /// Each batch is checked against the book owner's `quota` before it is written, as every
    /// write path is: the batch that would pass it throws `QuotaExceeded`, and the batches
    /// before it stay (`Counts` of those is in the error's `imported`).
    @discardableResult
    public static func store(_ cards: [PreparedCard], collectionID: Int64, in store: any CardStore,
                             batchSize: Int = 500, quota: Quota = .unlimited,
                             progress: ((Int) -> Void)? = nil) async throws -> Counts {
        let book = try await store.collection(id: collectionID)
        // A book that never changed holds nothing: skip the per-card lookups.
        let fresh = book?.syncSeq == 0
        let batchSize = max(batchSize, 1)
        var counts = Counts(), done = 0, names: Set<String> = []
        for start in stride(from: 0, to: cards.count, by: batchSize) {
            var batch: [CardImport] = []
            var batchCounts = Counts(), added = 0
            for card in cards[start..<min(start + batchSize, cards.count)] {
                var name = CardImporter.resourceName(forUID: card.uid)
                var replacedSize: Int?
                if !fresh {
                    if let owner = try await store.resourceName(collectionID: collectionID, uid: card.uid) { name = owner }
                    replacedSize = try await store.resourceInfo(collectionID: collectionID, name: name)?.size
                }
                if replacedSize != nil || names.contains(name) { batchCounts.replaced += 1 } else { batchCounts.created += 1 }
                // A card the file repeats replaces its earlier copy in this import: counted
                // at full size, which can only make the check stricter.
                added += card.bytes.count - (replacedSize ?? 0)
                names.insert(name)
                batch.append(CardImport(name: name, data: Data(card.bytes), card: card.metadata))
            }
            if let owner = book?.owner {
                do {
                    try await quota.check(owner: owner, adding: added, in: store)
                } catch let exceeded as QuotaExceeded {
                    throw ImportStopped(quota: exceeded, imported: counts)
                }
            }
            counts.created += batchCounts.created
            counts.replaced += batchCounts.replaced
            try await store.importCards(collectionID: collectionID, cards: batch, batchSize: batch.count, progress: nil)
            done += batch.count
            progress?(done)
        }
        await store.importFinished(collectionID: collectionID, cards: done)
        return counts
    }

    /// An import the owner's quota stopped: the cards of `imported` went in, the rest did not.
    public struct ImportStopped: Error, Sendable {
        public var quota: QuotaExceeded
        public var imported: Counts
    }
}
