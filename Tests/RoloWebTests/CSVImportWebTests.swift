import Foundation
import RoloStore
import Testing
@testable import RoloWeb

/// The web UI's CSV import: a preview of the mapping and the first rows before anything is
/// written, a confirm that writes every row or none, and the two CSV exports.
@Suite struct CSVImportWebTests {
    static let outlook = "Vorname,Nachname,Firma,Mobiltelefon,E-Mail-Adresse,Geburtstag\r\n"
        + "Bärbel,Müller,Öko GmbH,+49 171 1,b@example.de,24.12.1965\r\n"
        + "Jörg,Schmidt,,+49 171 2,j@example.de,\r\n"

    func upload(_ web: WebHarness, _ text: String) async -> WebResponse {
        await web.postMultipart("/web/b/default/import-csv", [],
                                files: [(name: "file", filename: "kontakte.csv", type: "text/csv", data: Data(text.utf8))])
    }

    func count(_ web: WebHarness) async throws -> Int {
        let book = try #require(try await web.store.collection(owner: "alice", path: ["default"]))
        return try await web.store.cardCount(collectionID: book.id, filter: .contacts, search: [], cap: 100)
    }

    @Test func thePreviewShowsTheMappingAndRowsAndWritesNothing() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        #expect(await web.get("/web/b/default/import-csv").status == 200)
        let preview = await upload(web, Self.outlook)
        #expect(preview.status == 200)
        #expect(preview.text.contains("kontakte.csv: Outlook CSV, German headers, UTF-8; 2 contacts, 0 rows that cannot be read."),
                "\(preview.text)")
        #expect(preview.text.contains("<th scope=\"row\">Mobiltelefon</th><td>phone (mobile)</td>"))
        #expect(preview.text.contains("<td>Bärbel Müller</td><td>Öko GmbH</td><td>b@example.de</td><td>+49 171 1</td>"))
        #expect(try await count(web) == 0, "a preview writes nothing")

        let confirm = try web.form(preview.text, id: "csv-confirm-form")
        let done = await web.postMultipart(confirm.action, confirm.fields.filter { $0.0 != "csrf" })
        #expect(done.status == 200)
        #expect(done.text.contains("data-testid=\"csv-created\">2<"), "\(done.text)")
        #expect(try await count(web) == 2)
        let again = await web.postMultipart(confirm.action, confirm.fields.filter { $0.0 != "csrf" })
        let afterAgain = try await count(web)
        #expect(again.text.contains("data-testid=\"csv-replaced\">2<") && afterAgain == 2, "the same rows replace their cards")
    }

    @Test func aFileWithABadRowIsShownWithItsLineAndCannotBeConfirmed() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        let bad = Self.outlook + "Kai,Klein,,+49 171 3,k@example.de,31.31.1990\r\n"
        let preview = await upload(web, bad)
        #expect(preview.status == 400)
        #expect(preview.text.contains("<th scope=\"row\">4</th><td>Birthday &quot;31.31.1990&quot; is not a date"), "\(preview.text)")
        #expect(!preview.text.contains("csv-confirm-form"))
        // A confirm of those bytes (forged past the page) writes nothing either.
        let forged = await web.postMultipart("/web/b/default/import-csv", [
            ("confirm", "1"), ("fileName", "k.csv"), ("data", Data(bad.utf8).base64EncodedString()),
        ])
        #expect(forged.status == 400 && forged.text.contains("Nothing was imported"))
        #expect(try await count(web) == 0)
    }

    @Test func aFileThatIsNotACSVIsRefusedWithItsReason() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        let refused = await upload(web, "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:A\r\nEND:VCARD\r\n")
        #expect(refused.status == 400)
        #expect(refused.text.contains("kontakte.csv cannot be imported: not a Google or Outlook contacts CSV"))
        #expect(try await count(web) == 0)
    }

    @Test func theBookOffersBothCSVExports() async throws {
        let web = try await WebHarness()
        try await web.put("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:x1\r\nFN:Ada Lovelace\r\nN:Lovelace;Ada;;;\r\nTEL;TYPE=CELL:+44 1\r\nEND:VCARD\r\n",
                          name: "x1.vcf")
        try await web.signIn()
        let page = await web.get("/web/b/default/").text
        #expect(page.contains("export-csv?format=google") && page.contains("export-csv?format=outlook"))
        let google = await web.get("/web/b/default/export-csv?format=google")
        #expect(google.status == 200 && google.text.hasPrefix("First Name,") && google.text.contains("Ada,,Lovelace,"))
        #expect(google.headers.contains { $0.name == "Content-Disposition" && $0.value.contains("default-google.csv") })
        let outlook = await web.get("/web/b/default/export-csv?format=outlook")
        #expect(outlook.status == 200 && outlook.text.contains("Mobile Phone") && outlook.text.contains("+44 1"))
        #expect(await web.get("/web/b/default/export-csv?format=excel").status == 400)
    }
}
