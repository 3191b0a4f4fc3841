import Foundation
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
}
