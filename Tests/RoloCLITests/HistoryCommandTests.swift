import Foundation
import PostgresTestSupport
import Testing

/// `rolo history USER BOOK CARD` and `rolo restore USER BOOK --to TIME [--device NAME]
/// [--dry-run]` (issue 31) on a database: what each version changed, a dry run that changes
/// nothing, a restore that brings the cards back byte for byte, and bad input refused.
@Suite struct HistoryCommandTests {
    static func card(_ uid: String, tel: String?) -> String {
        "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(uid)\r\nFN:\(uid) Person\r\n\(tel.map { "TEL;TYPE=cell:\($0)\r\n" } ?? "")END:VCARD\r\n"
    }

    @Test func historyDescribesEachVersionAndRestorePutsTheBookBack() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "alice", "--password-stdin", "--create-database"] + db,
                                         stdin: "alice-secret\n").status == 0)
        let good = folder.appendingPathComponent("good.vcf"), bad = folder.appendingPathComponent("bad.vcf")
        try (Self.card("anna", tel: "+49 170 1") + Self.card("bert", tel: "+49 170 2")).write(to: good, atomically: true, encoding: .utf8)
        try (Self.card("anna", tel: nil) + Self.card("carl", tel: nil)).write(to: bad, atomically: true, encoding: .utf8)
        #expect(try await RoloBinary.run(["import", "alice", "default", good.path] + db).status == 0)
        let before = try await RoloBinary.run(["export", "alice", "default"] + db).stdout
        try await Task.sleep(for: .milliseconds(1200))
        let time = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let stamp = time.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
        try await Task.sleep(for: .milliseconds(1200))
        #expect(try await RoloBinary.run(["import", "alice", "default", bad.path] + db).status == 0)

        let history = try await RoloBinary.run(["history", "alice", "default", "anna"] + db)
        #expect(history.status == 0, "\(history.stderr)")
        let lines = history.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(history.stdout)")
        #expect(lines.first?.hasSuffix("created") == true, "\(history.stdout)")
        #expect(lines.last?.hasSuffix("mobile phone +49 170 1 removed") == true, "\(history.stdout)")

        let dry = try await RoloBinary.run(["restore", "alice", "default", "--to", stamp, "--dry-run"] + db)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("would restore anna") && dry.stdout.contains("would remove carl"), "\(dry.stdout)")
        #expect(dry.stdout.contains("Would restore 2 cards"), "\(dry.stdout)")
        let afterDry = try await RoloBinary.run(["export", "alice", "default"] + db).stdout
        #expect(afterDry != before && afterDry.contains("carl"))

        let restore = try await RoloBinary.run(["restore", "alice", "default", "--to", stamp] + db)
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(restore.stdout.contains("Restored 2 cards of alice/default; 0 conflicts left alone."), "\(restore.stdout)")
        #expect(try await RoloBinary.run(["export", "alice", "default"] + db).stdout == before)

        // Bad input: a clear error, exit 1, nothing changed.
        for (arguments, message) in [
            (["restore", "alice", "default", "--to", "2999-01-01T00:00:00Z"], "is in the future"),
            (["restore", "alice", "default", "--to", "yesterday"], "Invalid time yesterday"),
            (["restore", "alice", "default", "--to", stamp, "--device", "toaster"], "No device toaster of alice"),
            (["restore", "alice", "nosuch", "--to", stamp], "No address book alice/nosuch."),
            (["history", "alice", "default", "nobody"], "No card nobody in alice/default"),
        ] {
            let outcome = try await RoloBinary.run(arguments + db)
            #expect(outcome.status == 1, "\(arguments): \(outcome.stdout)")
            #expect(outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
        }
        #expect(try await RoloBinary.run(["export", "alice", "default"] + db).stdout == before)
    }

    /// The book of the test above, before and after a client's bad import: the time between
    /// them, and the book's export at that time.
    static func bookWithABadImport(_ database: String, in folder: URL) async throws -> (stamp: String, before: String) {
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "alice", "--password-stdin", "--create-database"] + db,
                                         stdin: "alice-secret\n").status == 0)
        let good = folder.appendingPathComponent("good.vcf"), bad = folder.appendingPathComponent("bad.vcf")
        try (card("anna", tel: "+49 170 1") + card("bert", tel: "+49 170 2")).write(to: good, atomically: true, encoding: .utf8)
        try (card("anna", tel: nil) + card("carl", tel: nil)).write(to: bad, atomically: true, encoding: .utf8)
        #expect(try await RoloBinary.run(["import", "alice", "default", good.path] + db).status == 0)
        let before = try await RoloBinary.run(["export", "alice", "default"] + db).stdout
        try await Task.sleep(for: .milliseconds(1200))
        let stamp = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)).formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
        try await Task.sleep(for: .milliseconds(1200))
        #expect(try await RoloBinary.run(["import", "alice", "default", bad.path] + db).status == 0)
        return (stamp, before)
    }

    /// Every version (time, ETag, user, device, shared bodies) is copied by `rolo backup`
    /// (an SQLite page copy, and PostgreSQL into an SQLite file) and by `rolo migrate`
    /// SQLite → PostgreSQL: `rolo history` prints the same lines on every copy, and `rolo
    /// restore` puts each copy's book back as it was.
    @Test func historyAndRestoreSurviveMigrateAndBackup() async throws {
        let (folder, source) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (stamp, before) = try await Self.bookWithABadImport(source, in: folder)
        func history(_ card: String, _ database: String) async throws -> String {
            let outcome = try await RoloBinary.run(["history", "alice", "default", card, "--database", database])
            #expect(outcome.status == 0, "\(database): \(outcome.stderr)")
            return outcome.stdout
        }
        let lines = [try await history("anna", source), try await history("carl", source), try await history("bert", source)]
        #expect(lines[0].split(separator: "\n").count == 2 && lines[1].split(separator: "\n").count == 1, "\(lines)")

        let sqliteBackup = folder.appendingPathComponent("backup.sqlite").path
        let backedUp = try await RoloBinary.run(["backup", sqliteBackup, "--database", source])
        #expect(backedUp.status == 0, "\(backedUp.stderr)")
        let database = try await TestDatabase.create()
        do {
            let migrated = try await RoloBinary.run(["migrate", "--from", source, "--to", database.url])
            #expect(migrated.status == 0, "\(migrated.stderr)")
            // anna 2, bert 1, carl 1; the body anna had before (the cards carry the current ones).
            #expect(migrated.stdout.contains("4 card versions (1 bodies, 0 shared photos"), "\(migrated.stdout)")
            let postgresBackup = folder.appendingPathComponent("from-postgres.sqlite").path
            let copied = try await RoloBinary.run(["backup", postgresBackup, "--database", database.url])
            #expect(copied.status == 0, "\(copied.stderr)")
            for copy in [sqliteBackup, database.url, postgresBackup] {
                #expect(try await [history("anna", copy), history("carl", copy), history("bert", copy)] == lines, "\(copy)")
                let restore = try await RoloBinary.run(["restore", "alice", "default", "--to", stamp, "--database", copy])
                #expect(restore.status == 0, "\(copy): \(restore.stderr)")
                #expect(restore.stdout.contains("Restored 2 cards of alice/default; 0 conflicts left alone."), "\(restore.stdout)")
                #expect(try await RoloBinary.run(["export", "alice", "default", "--database", copy]).stdout == before, "\(copy)")
            }
        } catch {
            await database.drop()
            throw error
        }
        await database.drop()
    }
}
