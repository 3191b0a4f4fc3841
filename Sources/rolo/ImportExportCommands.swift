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

    func run() async throws {
        let store = try options.openStore()
        defer { try? store.close() }
        guard let collection = try await store.collection(owner: user, path: [book]),
              collection.kind == .addressBook else {
            throw CLIError("No address book \(user)/\(book).")
        }
        let engine = DAVService(store: store)
        var pending: [(file: String, index: Int, text: String)] = [], skipped: [String] = []
        for file in files {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                skipped.append("\(file): not readable as UTF-8 text")
                continue
            }
            let cards = CardSplitter.cards(in: text)
            if cards.isEmpty { skipped.append("\(file): no BEGIN:VCARD ... END:VCARD block") }
            pending += cards.enumerated().map { (file, $0.offset, $0.element) }
        }
        var progress = ImportProgress(total: pending.count)
        var created = 0, replaced = 0, invalid: [String] = []
        for (done, item) in pending.enumerated() {
            let (card, uid) = CardSplitter.ensuringUID(item.text)
            let name = try await store.resourceName(collectionID: collection.id, uid: uid)
                ?? CardSplitter.resourceName(forUID: uid)
            let response = await engine.handle(DAVRequest(
                method: "PUT", path: "\(engine.configuration.basePath)/addressbooks/\(user)/\(book)/\(name)",
                headers: ["content-type": "text/vcard; charset=utf-8"], body: Data(card.utf8), user: user))
            switch response.status {
            case 201: created += 1
            case 200, 204: replaced += 1
            default:
                let reason = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                invalid.append("\(item.file) card \(item.index + 1) (UID \(uid)): \(response.status) \(reason)")
            }
            progress.update(done: done + 1)
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

/// Splits a multi-card .vcf text into the exact text of each card.
enum CardSplitter {
    static func cards(in text: String) -> [String] {
        var cards: [String] = [], current: [String] = [], depth = 0
        // Split on scalars: "\r\n" is one Character, so a Character split would miss it.
        // Each line keeps its "\r".
        for scalars in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(String.UnicodeScalarView(scalars))
            let keyword = line.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
            if keyword == "BEGIN:VCARD" { depth += 1 }
            if depth > 0 { current.append(line) }
            if keyword == "END:VCARD", depth > 0 {
                depth -= 1
                if depth == 0 {
                    cards.append(current.joined(separator: "\n") + "\n")
                    current = []
                }
            }
        }
        return cards
    }

    /// The card's UID (unfolded value of the first top-level UID line), adding one before
    /// `END:VCARD` when there is none.
    static func ensuringUID(_ card: String) -> (card: String, uid: String) {
        if let parsed = try? VCardParser.parse(card).first, let uid = parsed.first("UID")?.text, !uid.isEmpty {
            return (card, uid)
        }
        let uid = UUID().uuidString.lowercased()
        let lineEnd = card.contains("\r\n") ? "\r\n" : "\n"
        guard let end = card.range(of: "END:VCARD", options: [.caseInsensitive, .backwards]) else { return (card, uid) }
        var withUID = card
        withUID.insert(contentsOf: "UID:\(uid)\(lineEnd)", at: end.lowerBound)
        return (withUID, uid)
    }

    /// `<uid>.vcf` when the UID is URL-safe, otherwise a fresh UUID name.
    static func resourceName(forUID uid: String) -> String {
        let safe = uid.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.@".contains($0)) }
        return (safe && uid.count <= 200 ? uid : UUID().uuidString.lowercased()) + ".vcf"
    }
}
