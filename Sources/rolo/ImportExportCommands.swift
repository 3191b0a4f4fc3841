import ArgumentParser
import DAV
import Foundation
import RoloStore
import VCard

/// `rolo import USER BOOK FILE…`: stores each vCard of the files in the book through the
/// DAV engine, so imported cards are validated and indexed exactly like a client's PUT.
/// A card whose UID is already in the book replaces it; a card without UID gets one.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import .vcf files (one or many cards each) into an address book.")
    @Argument(help: "User name.") var user: String
    @Argument(help: "Book name.") var book: String
    @Argument(help: "vCard files.") var files: [String]
    @OptionGroup var options: DatabaseOptions

    @Option(help: "Cards per transaction.") var batchSize = 500

    func run() async throws {
        let store = try options.openStore()
        defer { try? store.close() }
        guard let collection = try await store.collection(owner: user, path: [book]),
              collection.kind == .addressBook else {
            throw CLIError("No address book \(user)/\(book).")
        }
        var pending: [(file: String, index: Int, bytes: [UInt8])] = [], skipped: [String] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                skipped.append("\(file): cannot be read")
                continue
            }
            let cards = CardSplitter.cards(in: [UInt8](data))
            if cards.isEmpty { skipped.append("\(file): no BEGIN:VCARD ... END:VCARD block") }
            pending += cards.enumerated().map { (file, $0.offset, $0.element) }
        }
        var progress = ImportProgress(total: pending.count)
        var created = 0, replaced = 0, invalid: [String] = [], done = 0
        let maxSize = DAVConfiguration().maxResourceSize
        for start in stride(from: 0, to: pending.count, by: max(batchSize, 1)) {
            var batch: [CardImport] = [], names: Set<String> = []
            for item in pending[start..<min(start + max(batchSize, 1), pending.count)] {
                do {
                    let prepared = try CardSplitter.prepare(item.bytes, maxSize: maxSize)
                    let name = try await store.resourceName(collectionID: collection.id, uid: prepared.uid)
                        ?? CardSplitter.resourceName(forUID: prepared.uid)
                    let stored = try await store.resourceInfo(collectionID: collection.id, name: name) != nil
                    let exists = names.contains(name) || stored
                    if exists { replaced += 1 } else { created += 1 }
                    names.insert(name)
                    batch.append(CardImport(name: name, data: Data(prepared.bytes), card: CardMetadata(card: prepared.card)))
                } catch {
                    let uid = (try? VCardParser.parse(item.bytes).first?.first("UID")?.text).flatMap { $0 }
                    invalid.append("\(item.file) card \(item.index + 1)\(uid.map { " (UID \($0))" } ?? ""): \(error)")
                }
            }
            // One transaction per batch: an interrupted import leaves whole cards only.
            try await store.importCards(collectionID: collection.id, cards: batch, batchSize: batch.count, progress: nil)
            done = min(start + max(batchSize, 1), pending.count)
            progress.update(done: done)
        }
        (skipped.map { "skipped \($0)" } + invalid.map { "invalid \($0)" })
            .forEach { FileHandle.standardError.write(Data("\($0)\n".utf8)) }
        print("Imported \(created + replaced) cards into \(user)/\(book) (\(created) new, \(replaced) replaced); "
              + "skipped \(skipped.count) files; \(invalid.count) invalid cards.")
        if !invalid.isEmpty || !skipped.isEmpty { throw ExitCode.failure }
    }
}

/// `rolo export USER BOOK [FILE]`: every card of the book, byte for byte, one after the
/// other (to stdout without FILE).
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Export an address book as one .vcf stream.")
    @Argument(help: "User name.") var user: String
    @Argument(help: "Book name.") var book: String
    @Argument(help: "Output file (stdout when omitted).") var file: String?
    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        let store = try options.openStore()
        defer { try? store.close() }
        guard let collection = try await store.collection(owner: user, path: [book]) else {
            throw CLIError("No address book \(user)/\(book).")
        }
        var output = Data()
        for resource in try await store.allResources(collectionID: collection.id) {
            output.append(resource.data)
            if resource.data.last != UInt8(ascii: "\n") { output.append(contentsOf: Array("\r\n".utf8)) }
        }
        if let file {
            try output.write(to: URL(fileURLWithPath: file), options: .atomic)
        } else {
            FileHandle.standardOutput.write(output)
        }
    }
}

/// Splits a multi-card .vcf stream into the exact bytes of each card and makes each one
/// storable: 2.1 converted to 3.0, a UID added when missing, validated as a PUT would be.
/// Works on bytes, so a fold inside a UTF-8 character (legal in a stream) survives.
enum CardSplitter {
    /// A card ready for the store: bytes to keep, the parsed card and its UID.
    struct Prepared {
        var bytes: [UInt8]
        var card: VCard
        var uid: String
    }

    /// The bytes of each BEGIN:VCARD … END:VCARD block, line ends kept.
    static func cards(in bytes: [UInt8]) -> [[UInt8]] {
        var cards: [[UInt8]] = [], lineStart = 0, cardStart: Int?
        var index = 0
        while index <= bytes.count {
            guard index == bytes.count || bytes[index] == UInt8(ascii: "\n") else { index += 1; continue }
            let lineEnd = min(index + 1, bytes.count)
            let keyword = trimmedUppercase(bytes[lineStart..<index])
            if keyword == "BEGIN:VCARD", cardStart == nil { cardStart = lineStart }
            if keyword == "END:VCARD", let begin = cardStart {
                cards.append(Array(bytes[begin..<lineEnd]))
                cardStart = nil
            }
            lineStart = lineEnd
            index += 1
        }
        return cards
    }

    private static func trimmedUppercase(_ line: ArraySlice<UInt8>) -> String {
        guard line.count < 32 else { return "" }
        return String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
    }

    /// Parses one card's bytes; converts 2.1 to 3.0, adds a UID when there is none, and
    /// validates it like a PUT. 3.0/4.0 cards keep their bytes (plus the added UID line).
    static func prepare(_ bytes: [UInt8], maxSize: Int) throws -> Prepared {
        guard bytes.count <= maxSize else { throw CLIError("larger than the \(maxSize)-byte limit") }
        let cards = try VCardParser.parse(bytes)
        guard cards.count == 1, var card = cards.first else { throw CLIError("not exactly one vCard") }
        var out = bytes
        var uid = card.first("UID")?.text ?? ""
        if card.version == .v21 {
            if uid.isEmpty { uid = UUID().uuidString.lowercased(); card.properties.append(VCardProperty(name: "UID", rawValue: uid)) }
            card = VCardConverter.convert(card, to: .v30)
            out = Array(VCardWriter.write(card).utf8)
        } else if uid.isEmpty {
            uid = UUID().uuidString.lowercased()
            card.properties.append(VCardProperty(name: "UID", rawValue: uid))
            out = insertingUID(uid, into: bytes)
        }
        try VCardValidator.validate(card, requireUID: true)
        return Prepared(bytes: out, card: card, uid: uid)
    }

    /// Adds `UID:<uid>` right before the last END:VCARD line, with the card's line end.
    static func insertingUID(_ uid: String, into bytes: [UInt8]) -> [UInt8] {
        let lineEnd: [UInt8] = bytes.contains(UInt8(ascii: "\r")) ? [13, 10] : [10]
        var lineStart = bytes.count
        // Find the start of the END:VCARD line: the last line that is not empty.
        var end = bytes.count
        while end > 0, bytes[end - 1] == 10 || bytes[end - 1] == 13 { end -= 1 }
        lineStart = end
        while lineStart > 0, bytes[lineStart - 1] != 10 { lineStart -= 1 }
        return Array(bytes[..<lineStart]) + Array("UID:\(uid)".utf8) + lineEnd + Array(bytes[lineStart...])
    }

    /// `<uid>.vcf` when the UID is URL-safe, otherwise a fresh UUID name.
    static func resourceName(forUID uid: String) -> String {
        let safe = uid.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.@".contains($0)) }
        return (safe && uid.count <= 200 ? uid : UUID().uuidString.lowercased()) + ".vcf"
    }
}
