import Foundation
import Testing
@testable import rolo

/// `rolo import` and `rolo export`: cards in, the same bytes out.
@Suite struct ImportExportCommandTests {
    static let twoCards = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:imp-1\r\nFN:Ada Lovelace\r\nN:Lovelace;Ada;;;\r\nEND:VCARD\r\n"
        + "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:imp-2\r\nFN:Alan Turing\r\nEND:VCARD\r\n"
    static let cardWithoutUID = "BEGIN:VCARD\nVERSION:3.0\nFN:Grace Hopper\nN:Hopper;Grace;;;\nEND:VCARD\n"

    @Test func importedCardsExportByteForByteAndReimportReplaces() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "ida", "--password-stdin", "--create-database"] + db, stdin: "pw-12345678\n").status == 0)
        let first = folder.appendingPathComponent("two.vcf"), second = folder.appendingPathComponent("one.vcf")
        try Self.twoCards.write(to: first, atomically: true, encoding: .utf8)
        try Self.cardWithoutUID.write(to: second, atomically: true, encoding: .utf8)

        let imported = try await RoloBinary.run(["import", "ida", "default", first.path, second.path] + db)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("(3 new, 0 replaced); skipped 0 files; 0 invalid cards."))

        let again = try await RoloBinary.run(["import", "ida", "default", first.path] + db)
        #expect(again.stdout.contains("0 new, 2 replaced"))

        let exported = try await RoloBinary.run(["export", "ida", "default"] + db)
        #expect(exported.status == 0)
        #expect(exported.stdout.contains("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:imp-1\r\nFN:Ada Lovelace\r\n"))
        #expect(exported.stdout.contains("FN:Alan Turing"))
        #expect(exported.stdout.contains("FN:Grace Hopper"))
        #expect(exported.stdout.components(separatedBy: "BEGIN:VCARD").count - 1 == 3)
    }

    @Test func importIntoAMissingBookFailsAndStoresNothing() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "jo", "--password-stdin", "--create-database"] + db, stdin: "pw-12345678\n").status == 0)
        let file = folder.appendingPathComponent("two.vcf")
        try Self.twoCards.write(to: file, atomically: true, encoding: .utf8)
        #expect(try await RoloBinary.run(["import", "jo", "nope", file.path] + db).status != 0)
    }

    @Test func aCardTheFileEndsInsideIsNamedWithItsLineAndFailsTheImport() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "tess", "--password-stdin", "--create-database"] + db, stdin: "pw-12345678\n").status == 0)
        let file = folder.appendingPathComponent("truncated.vcf")
        // Lines 1-11 are the two whole cards; the third begins on line 12 and has no END:VCARD.
        try (Self.twoCards + "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:imp-3\r\nFN:Cut Off\r\n").write(to: file, atomically: true, encoding: .utf8)

        let imported = try await RoloBinary.run(["import", "tess", "default", file.path] + db)
        #expect(imported.status == 1)
        #expect(imported.stdout.contains("Imported 2 cards into tess/default (2 new, 0 replaced); skipped 0 files; 1 invalid cards."),
                "\(imported.stdout)")
        let reason = "missing END:VCARD: the vCard that begins on line 12 is not closed before the end of the input"
        #expect(imported.stderr.contains("invalid \(file.path) line 12 (card 3): \(reason)"), "\(imported.stderr)")
        // `rolo vcard inspect` says the same of the same file.
        let inspected = try await RoloBinary.run(["vcard", "inspect", file.path])
        #expect(inspected.status == 1)
        #expect(inspected.stderr.contains(reason), "\(inspected.stderr)")
        // The two whole cards went in.
        let exported = try await RoloBinary.run(["export", "tess", "default"] + db)
        #expect(exported.stdout.components(separatedBy: "BEGIN:VCARD").count - 1 == 2)
        #expect(!exported.stdout.contains("Cut Off"))
    }

    @Test func anExportThatCannotBeWrittenNamesTheFileAndWhy() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "uma", "--password-stdin", "--create-database"] + db, stdin: "pw-12345678\n").status == 0)
        let blocker = folder.appendingPathComponent("a-file")
        try Data().write(to: blocker)
        let refused = try await RoloBinary.run(["export", "uma", "default", blocker.path + "/out.vcf"] + db)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("cannot write \(blocker.path)/out.vcf: a part of the path is a file, not a folder"),
                "\(refused.stderr)")
    }
}
