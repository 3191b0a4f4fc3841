import Foundation
import Testing

/// `rolo import --format csv` and `rolo export --format google-csv|outlook-csv`: contacts from
/// Google and Outlook files in, all or nothing, and out again.
@Suite struct CSVImportExportTests {
    static let outlook = "First Name,Last Name,Company,Mobile Phone,E-mail Address,Birthday,Notes\r\n"
        + "Ada,Lovelace,Engines Ltd,+44 1,ada@example.org,12/10/1815,\"Line one,\r\nline two\"\r\n"
        + "Alan,Turing,,+44 2,alan@example.org,6/23/1912,\r\n"

    func newUser(_ name: String) async throws -> (folder: URL, db: [String]) {
        let (folder, database) = try temporaryDatabase()
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", name, "--password-stdin", "--create-database"] + db, stdin: "pw-12345678\n").status == 0)
        return (folder, db)
    }

    @Test func anOutlookFileImportsAndExportsAsGoogleAndOutlook() async throws {
        let (folder, db) = try await newUser("ida")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("contacts.csv")
        try Data(Self.outlook.utf8).write(to: file)

        let imported = try await RoloBinary.run(["import", "ida", "default", file.path, "--format", "csv"] + db)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("Outlook CSV, English headers, UTF-8, 2 rows read, 0 cannot be read"), "\(imported.stdout)")
        #expect(imported.stdout.contains("Imported 2 contacts into ida/default (2 new, 0 replaced)."), "\(imported.stdout)")
        let again = try await RoloBinary.run(["import", "ida", "default", file.path, "--format", "csv"] + db)
        #expect(again.stdout.contains("(0 new, 2 replaced)"), "the same rows are the same cards: \(again.stdout)")

        let vcards = try await RoloBinary.run(["export", "ida", "default"] + db)
        #expect(vcards.stdout.components(separatedBy: "BEGIN:VCARD").count - 1 == 2)
        #expect(vcards.stdout.contains("BDAY:1815-12-10") && vcards.stdout.contains("ORG:Engines Ltd"), "\(vcards.stdout)")

        let google = try await RoloBinary.run(["export", "ida", "default", "--format", "google-csv"] + db)
        #expect(google.status == 0, "\(google.stderr)")
        #expect(google.stdout.hasPrefix("First Name,Middle Name,Last Name,"))
        #expect(google.stdout.contains("Ada,,Lovelace,") && google.stdout.contains("\"Line one,\nline two\""), "\(google.stdout)")
        #expect(google.stdout.contains("Mobile,+44 1"))

        let out = folder.appendingPathComponent("outlook.csv")
        let outlook = try await RoloBinary.run(["export", "ida", "default", out.path, "--format", "outlook-csv"] + db)
        #expect(outlook.status == 0, "\(outlook.stderr)")
        let written = try Data(contentsOf: out)
        #expect(written.starts(with: [0xEF, 0xBB, 0xBF]), "Outlook's file carries a BOM")
        #expect(String(decoding: written.dropFirst(3), as: UTF8.self).hasPrefix("Title,First Name,Middle Name,Last Name,"))

        // What was exported imports into another book as the same contacts.
        #expect(try await RoloBinary.run(["book", "create", "ida", "copy"] + db).status == 0)
        let reimported = try await RoloBinary.run(["import", "ida", "copy", out.path, "--format", "csv"] + db)
        #expect(reimported.stdout.contains("Imported 2 contacts into ida/copy"), "\(reimported.stdout) \(reimported.stderr)")
    }

    @Test func badRowsAreNamedByLineAndNothingIsWritten() async throws {
        let (folder, db) = try await newUser("jo")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("bad.csv")
        // Lines 2-3 hold Ada (a quoted note), line 4 one field too many, line 5 no date.
        let text = Self.outlook.replacingOccurrences(of: "Alan,Turing,,+44 2,alan@example.org,6/23/1912,\r\n", with: "")
            + "Bob,Baker,,+1,b@example.org,1/1/1990,x,extra\r\n"
            + "Cy,Cole,,+2,c@example.org,13/13/1990,\r\n"
        try Data(text.utf8).write(to: file)
        let imported = try await RoloBinary.run(["import", "jo", "default", file.path, "--format", "csv"] + db)
        #expect(imported.status == 1)
        #expect(imported.stderr.contains("\(file.path) line 4: 8 fields where the header has 7"), "\(imported.stderr)")
        #expect(imported.stderr.contains("\(file.path) line 5: Birthday \"13/13/1990\" is not a date"), "\(imported.stderr)")
        #expect(imported.stderr.contains("Nothing imported: 2 problems"), "\(imported.stderr)")
        let exported = try await RoloBinary.run(["export", "jo", "default"] + db)
        #expect(exported.status == 0 && !exported.stdout.contains("BEGIN:VCARD"), "Ada's good row is not written either")
    }

    @Test func aFileThatIsNotAContactsCSVIsRefusedWithItsReason() async throws {
        let (folder, db) = try await newUser("kim")
        defer { try? FileManager.default.removeItem(at: folder) }
        let vcf = folder.appendingPathComponent("card.vcf"), noName = folder.appendingPathComponent("noname.csv")
        try Data("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:A\r\nEND:VCARD\r\n".utf8).write(to: vcf)
        try Data("E-mail Address,Mobile Phone\r\na@example.org,+1\r\n".utf8).write(to: noName)
        let refused = try await RoloBinary.run(["import", "kim", "default", vcf.path, noName.path, "--format", "csv"] + db)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\(vcf.path): not a Google or Outlook contacts CSV"), "\(refused.stderr)")
        #expect(refused.stderr.contains("\(noName.path): the header has no name column"), "\(refused.stderr)")
        let exported = try await RoloBinary.run(["export", "kim", "default"] + db)
        #expect(!exported.stdout.contains("BEGIN:VCARD"))
    }

    @Test func aDryRunShowsTheMappingAndWritesNothing() async throws {
        let (folder, db) = try await newUser("lee")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("contacts.csv")
        try Data(Self.outlook.utf8).write(to: file)
        let dry = try await RoloBinary.run(["import", "lee", "default", file.path, "--format", "csv", "--dry-run"] + db)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("  Mobile Phone -> phone (mobile)") && dry.stdout.contains("  line 4: Alan Turing"), "\(dry.stdout)")
        #expect(dry.stdout.contains("Dry run: 2 contacts would go into lee/default; nothing written."))
        let exported = try await RoloBinary.run(["export", "lee", "default"] + db)
        #expect(!exported.stdout.contains("BEGIN:VCARD"))
    }
}
