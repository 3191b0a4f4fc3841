import ArgumentParser
import Authorization
import CardIndexing
import Contacts
import ContactsCSV
import DAV
import Foundation
import RoloStore

/// `rolo import USER BOOK FILE… --format csv`: Google or Outlook contacts CSV, each file's
/// dialect, language and encoding told from its bytes (`CSVContactFile`). All or nothing:
/// a file that is no contacts CSV, or any row that cannot be read or stored, is named on
/// stderr with its file and line, and nothing is written (exit 1); otherwise every row goes
/// in through `CardImporter` in one transaction. A row's UID is a digest of its card, so
/// importing the same file again replaces its cards rather than adding copies.
extension ImportCommand {
    func importCSV(into collection: CollectionInfo, of store: any RoloStore, quota: Quota) async throws {
        var prepared: [CardImporter.PreparedCard] = [], problems: [String] = []
        let maxSize = DAVConfiguration().maxResourceSize
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                problems.append("\(file): cannot be read")
                continue
            }
            let csv: CSVContactFile
            do {
                csv = try CSVContactFile(bytes: [UInt8](data))
            } catch {
                problems.append("\(file): \(error.reason)")
                continue
            }
            print("\(file): \(Self.describe(csv)), \(csv.rows.count) rows read, \(csv.failures.count) cannot be read")
            if dryRun { Self.preview(csv) }
            problems += csv.failures.map { "\(file) line \($0.line): \($0.reason)" }
            for row in csv.rows {
                do {
                    prepared.append(try CardImporter.prepare(Array(row.contact.vCardText(version: .v30).utf8),
                                                             maxSize: maxSize, uids: .contentDigest))
                } catch {
                    problems.append("\(file) line \(row.line): \(error)")
                }
            }
        }
        guard problems.isEmpty else {
            problems.forEach { FileHandle.standardError.write(Data("\($0)\n".utf8)) }
            throw CLIError("Nothing imported: \(problems.count) \(problems.count == 1 ? "problem" : "problems") (listed above).")
        }
        if dryRun {
            print("Dry run: \(prepared.count) contacts would go into \(user)/\(book); nothing written.")
            return
        }
        let counts: CardImporter.Counts
        do {
            counts = try await CardImporter.store(prepared, collectionID: collection.id, in: store,
                                                  batchSize: max(prepared.count, 1), quota: quota)
        } catch let stopped as CardImporter.ImportStopped {
            throw CLIError("Nothing imported: \(stopped.quota.message)")
        }
        print("Imported \(counts.total) contacts into \(user)/\(book) (\(counts.created) new, \(counts.replaced) replaced).")
    }

    /// "Google CSV, German headers, Windows-1252".
    static func describe(_ csv: CSVContactFile) -> String {
        "\(csv.format == .google ? "Google" : "Outlook") CSV, \(csv.language == .german ? "German" : "English") headers, "
            + csv.encoding.rawValue
    }

    /// The mapping of every column and the first five rows' names.
    static func preview(_ csv: CSVContactFile) {
        for column in csv.columns {
            print("  \(column.header) -> \(column.meaning ?? "(not imported)")")
        }
        for row in csv.rows.prefix(5) {
            let contact = row.contact
            let name = contact.formattedName ?? contact.displayName
            print("  line \(row.line): \(name.isEmpty ? contact.emailAddresses.first?.value ?? "" : name)")
        }
    }
}
