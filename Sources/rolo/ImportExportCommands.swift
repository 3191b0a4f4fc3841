import ArgumentParser
import Authorization
import CardIndexing
import Contacts
import ContactsCSV
import DAV
import Foundation
import RoloServer
import RoloSQLite
import RoloStore
import VCard

/// `rolo import USER BOOK FILE…`: stores each vCard of the files in the book through
/// `CardImporter`, so imported cards are validated and indexed exactly like a client's PUT.
/// Cards are read leniently (old phones' exports: no VERSION, no FN, legacy charsets); a
/// card whose UID is already in the book replaces it; a card without UID gets one. Every
/// card left out (invalid, too large, or unterminated at the end of a file) is named with
/// its file and line on stderr, and the exit status is 1. `--format csv` reads Google and
/// Outlook contacts CSV instead, all or nothing (`ImportCommand+CSV.swift`).
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import .vcf files (one or many cards each), or Google/Outlook CSV files, into an address book.")
    @Argument(help: "User name.") var user: String
    @Argument(help: "Book name.") var book: String
    @Argument(help: "vCard files (CSV files with --format csv).") var files: [String]
    @Option(help: "vcard, or csv (Google or Outlook contacts CSV, told apart by the header).") var format: InputFormat = .vcard
    @Flag(help: "With --format csv: show how the columns map and the first rows, and write nothing.") var dryRun = false
    @OptionGroup var options: DatabaseOptions

    enum InputFormat: String, ExpressibleByArgument, CaseIterable {
        case vcard, csv
    }

    @Option(help: "Cards per transaction.") var batchSize = 500
    @Option(help: "The owner's storage quota in bytes, as `serve` applies it (env ROLO_QUOTA_BYTES, default none).")
    var quotaBytes: Int64?

    func run() async throws {
        let quota = Quota(limit: try QuotaSetting.bytes(flag: quotaBytes, settings: LayeredSettings(file: ConfigFile())))
        guard !dryRun || format == .csv else { throw CLIError("--dry-run is for --format csv.") }
        try await options.withStore(closingSQLite: true) { store in
            guard let collection = try await store.collection(owner: user, path: [book]),
                  collection.kind == .addressBook else {
                throw CLIError("No address book \(user)/\(book).")
            }
            if format == .csv { return try await importCSV(into: collection, of: store, quota: quota) }
            var prepared: [CardImporter.PreparedCard] = [], skipped: [String] = [], invalid: [String] = []
            let maxSize = DAVConfiguration().maxResourceSize
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    skipped.append("\(file): cannot be read")
                    continue
                }
                let split = CardImporter.split([UInt8](data))
                if split.cards.isEmpty, split.unterminatedLine == nil {
                    skipped.append("\(file): no BEGIN:VCARD ... END:VCARD block")
                }
                for (index, card) in split.cards.enumerated() {
                    do {
                        prepared.append(try CardImporter.prepare(card.bytes, maxSize: maxSize))
                    } catch {
                        let uid = (try? VCardParser.parse(card.bytes, mode: .lenient).first?.first("UID")?.text).flatMap { $0 }
                        invalid.append(Self.invalid(file, card: index + 1, beginning: card.line, uid: uid, error))
                    }
                }
                if let error = split.unterminatedError {
                    invalid.append(Self.invalid(file, card: split.cards.count + 1, beginning: error.line ?? 1, uid: nil, error))
                }
            }
            var progress = ImportProgress(total: prepared.count + invalid.count)
            let counts: CardImporter.Counts
            do {
                counts = try await CardImporter.store(prepared, collectionID: collection.id, in: store,
                                                      batchSize: batchSize, quota: quota) { done in
                    progress.update(done: done == prepared.count ? done + invalid.count : done)
                }
            } catch let stopped as CardImporter.ImportStopped {
                throw CLIError("Import stopped: \(stopped.quota.message) \(stopped.imported.total) cards went in "
                               + "(\(stopped.imported.created) new, \(stopped.imported.replaced) replaced), in whole batches of \(batchSize).")
            }
            if prepared.isEmpty { progress.update(done: invalid.count) }
            (skipped.map { "skipped \($0)" } + invalid.map { "invalid \($0)" })
                .forEach { FileHandle.standardError.write(Data("\($0)\n".utf8)) }
            print("Imported \(counts.total) cards into \(user)/\(book) (\(counts.created) new, \(counts.replaced) replaced); "
                  + "skipped \(skipped.count) files; \(invalid.count) invalid cards.")
            if !invalid.isEmpty || !skipped.isEmpty { throw ExitCode.failure }
        }
    }

    /// "FILE line N (card K, UID U): why": N is the line in the file, of the fault when the
    /// reading names one (rebased from the card's own lines), else of the card's BEGIN:VCARD.
    static func invalid(_ file: String, card: Int, beginning: Int, uid: String?, _ error: any Error) -> String {
        var line = beginning, reason = "\(error)"
        if let error = error as? VCardError {
            reason = error.message
            if let within = error.line { line = error.message.hasPrefix("missing END:VCARD") ? within : beginning + within - 1 }
        }
        return "\(file) line \(line) (card \(card)\(uid.map { ", UID \($0)" } ?? "")): \(reason)"
    }
}

/// `rolo export USER BOOK [FILE]`: the whole book as one document (to stdout without FILE):
/// by default every card byte for byte, one after the other; `--format jcard` a JSON array
/// of their jCards (RFC 7095), the same document GET of the book answers; `google-csv` and
/// `outlook-csv` the contacts as those CSV files (`CSVContactWriter`). FILE is created 0600.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Export an address book as one .vcf stream, a JSON array of jCards, or Google/Outlook CSV.")
    @Argument(help: "User name.") var user: String
    @Argument(help: "Book name.") var book: String
    @Argument(help: "Output file (stdout when omitted).") var file: String?
    @Option(help: "vcard (the stored cards), jcard (a JSON array of jCards), google-csv or outlook-csv.") var format: Format = .vcard
    @OptionGroup var options: DatabaseOptions

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case vcard, jcard
        case googleCSV = "google-csv", outlookCSV = "outlook-csv"
    }

    func run() async throws {
        try await options.withStore(closingSQLite: true) { store in
            guard let collection = try await store.collection(owner: user, path: [book]) else {
                throw CLIError("No address book \(user)/\(book).")
            }
            var output: [UInt8] = []
            let resources = try await store.allResources(collectionID: collection.id)
            switch format {
            case .vcard, .jcard:
                var document = AddressBookDocument(format == .jcard ? .jCard : .vCard)
                for resource in resources { document.append(card: resource.data, to: &output) }
                document.finish(into: &output)
            case .googleCSV, .outlookCSV:
                let contacts = resources.compactMap { try? VCardParser.parse([UInt8]($0.data), mode: .lenient).first }
                    .map(Contact.init(vCard:))
                output = CSVContactWriter.bytes(contacts, as: format == .googleCSV ? .google : .outlook)
            }
            if let file {
                // Everyone's contacts: readable by the owner alone (0600), whatever the umask.
                do {
                    try PrivateFiles.write(Data(output), to: file)
                } catch let error as FileCreationError {
                    throw CLIError(error.description)
                }
            } else {
                FileHandle.standardOutput.write(Data(output))
            }
        }
    }
}
