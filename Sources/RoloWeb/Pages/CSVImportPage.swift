import Authorization
import CardIndexing
import Contacts
import ContactsCSV
import Foundation
import RoloStore
import VCard

/// Google and Outlook contacts CSV in the web UI (issue 33): an upload is read and shown
/// (`CSVContactFile`: its dialect, encoding, what each column becomes, the first contacts,
/// every row that cannot be read) before anything is written; the preview carries the file
/// (base64 in a hidden field, so the server keeps no upload between the two requests) and
/// its confirm writes every row in one `writeCards` batch, one transaction: all or nothing.
extension WebApp {
    /// The largest CSV taken: its base64 in the confirm form stays under the import body limit.
    static let maxCSVSize = 10 * 1024 * 1024

    /// `GET …/import-csv`.
    func csvImportPage(_ context: PageContext, extra: [String: Any] = [:], status: Int = 200) async throws -> WebResponse {
        let book = try context.currentBook
        var model = try await pageModel(context, title: "Import CSV")
        var page: [String: Any] = [
            "bookName": book.displayName, "action": URLs.bookPage(base, book.slug, "import-csv"),
            "bookURL": URLs.book(base, book.slug), "error": false, "preview": false, "result": false,
        ]
        page.merge(extra) { $1 }
        model["csvImport"] = page
        return .html(renderer.render("page", model), status: status)
    }

    /// `POST …/import-csv`: an upload (`file`) gets the preview; a confirm (`confirm`, `data`)
    /// reads the same bytes again and writes them, or writes nothing and says why.
    func csvImport(_ context: PageContext) async throws -> WebResponse {
        let form = context.form
        let bytes: [UInt8], fileName: String
        if form["confirm"] == "1" {
            guard let data = form["data"].flatMap({ Data(base64Encoded: $0) }) else {
                return try await csvImportPage(context, extra: ["error": "The confirmed file did not arrive whole: upload it again."], status: 400)
            }
            bytes = [UInt8](data)
            fileName = form["fileName"] ?? "file"
        } else {
            guard let file = form.file("file") else {
                return try await csvImportPage(context, extra: ["error": "Choose a .csv file."], status: 400)
            }
            bytes = [UInt8](file.data)
            fileName = file.filename.isEmpty ? "file" : file.filename
        }
        guard bytes.count <= Self.maxCSVSize else {
            return try await csvImportPage(context, extra: ["error": "The file is larger than 10 MB."], status: 413)
        }
        let csv: CSVContactFile
        do {
            csv = try CSVContactFile(bytes: bytes)
        } catch {
            return try await csvImportPage(context, extra: ["error": "\(fileName) cannot be imported: \(error.reason)."], status: 400)
        }
        var failures = csv.failures.map { (line: $0.line, reason: $0.reason) }
        var prepared: [CardImporter.PreparedCard] = []
        for row in csv.rows {
            do {
                prepared.append(try CardImporter.prepare(Array(row.contact.vCardText(version: .v30).utf8),
                                                         maxSize: configuration.maxCardSize, uids: .contentDigest))
            } catch {
                failures.append((row.line, "\(error)"))
            }
        }
        failures.sort { $0.line < $1.line }
        let preview = previewModel(csv, bytes: bytes, fileName: fileName, failures: failures)
        guard form["confirm"] == "1", failures.isEmpty else {
            let error: Any = form["confirm"] == "1" ? "Nothing was imported: some rows cannot be read." : false
            return try await csvImportPage(context, extra: ["preview": preview, "error": error], status: failures.isEmpty ? 200 : 400)
        }
        let book = try context.currentBook
        var writes: [String: (write: CardBatchWrite, replaces: Bool)] = [:], order: [String] = []
        for card in prepared {
            let existing = try await store.resourceName(collectionID: book.id, uid: card.uid)
            let name = existing ?? CardImporter.resourceName(forUID: card.uid)
            if writes[name] == nil { order.append(name) }
            // A row the file repeats is the same card: written once.
            writes[name] = (.put(name: name, data: Data(card.bytes), contentType: Self.vCardType, card: card.metadata,
                                 precondition: existing == nil ? .ifNoneMatchAny : .none, keepPrevious: false), existing != nil)
        }
        do {
            _ = try await writeCards(context, book, order.map { writes[$0]!.write })
        } catch let exceeded as QuotaExceeded {
            return try await csvImportPage(context, extra: ["preview": preview, "error": "Nothing was imported: " + exceeded.message],
                                           status: 507)
        } catch {
            return try await csvImportPage(context, extra: ["preview": preview, "error": "Nothing was imported: the book changed "
                                                            + "while importing (\(error)). Try again."], status: 409)
        }
        let replaced = order.filter { writes[$0]!.replaces }.count
        return try await csvImportPage(context, extra: ["result": [
            "created": Formatting.grouped(order.count - replaced), "replaced": Formatting.grouped(replaced),
            "bookURL": URLs.book(base, book.slug),
        ] as [String: Any]])
    }

    private func previewModel(_ csv: CSVContactFile, bytes: [UInt8], fileName: String,
                              failures: [(line: Int, reason: String)]) -> [String: Any] {
        let described = "\(csv.format == .google ? "Google" : "Outlook") CSV, \(csv.language == .german ? "German" : "English") "
            + "headers, \(csv.encoding.rawValue)"
        return [
            "fileName": fileName, "described": described, "rowCount": Formatting.grouped(csv.rows.count),
            "failureCount": Formatting.grouped(failures.count), "hasFailures": !failures.isEmpty,
            "failures": failures.prefix(200).map { ["line": String($0.line), "reason": $0.reason] },
            "columns": csv.columns.map { ["header": $0.header, "meaning": $0.meaning ?? "not imported"] },
            "rows": csv.rows.prefix(10).map { row -> [String: String] in
                let contact = row.contact
                return ["line": String(row.line), "name": contact.formattedName ?? contact.displayName,
                        "organization": contact.organizationName, "email": contact.emailAddresses.first?.value ?? "",
                        "phone": contact.phoneNumbers.first?.value ?? ""]
            },
            "data": Data(bytes).base64EncodedString(),
        ]
    }

    /// `GET …/export-csv?format=google|outlook`: the whole book as that CSV, a download.
    func exportCSV(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        guard let format = context.request.queryValues("format").first.flatMap(CSVContactFormat.init(rawValue:)) else {
            throw WebError.badRequest("Choose format=google or format=outlook.")
        }
        context.tally.fullDownload()
        let contacts = try await store.allResources(collectionID: book.id)
            .compactMap { try? VCardParser.parse([UInt8]($0.data), mode: .lenient).first }
            .map(Contact.init(vCard:))
        let safeName = String(book.slug.map { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.~".contains($0)) ? $0 : "_" }.prefix(80))
        return WebResponse(status: 200, headers: [
            ("Content-Type", "text/csv; charset=utf-8"),
            ("Content-Disposition", "attachment; filename=\"\(safeName)-\(format.rawValue).csv\""),
            ("Cache-Control", "no-store"),
        ], body: .bytes(Data(CSVContactWriter.bytes(contacts, as: format))))
    }
}
