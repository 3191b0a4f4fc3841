import Foundation
import Testing

/// `rolo import` as an operator sees it: progress, a summary with reasons, and a SIGTERM
/// halfway through a large file that leaves only whole cards behind.
@Suite struct ImportInterruptionTests {
    static func card(_ number: Int) -> String {
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:bulk-\(number)\r\nFN:Person \(number)\r\nN:\(number);Person;;;\r\n"
            + "EMAIL;TYPE=INTERNET:person\(number)@example.org\r\nTEL;TYPE=CELL:+1555\(number)\r\nEND:VCARD\r\n"
    }

    static func addUser(_ name: String, database: String) async throws {
        let added = try await RoloBinary.run(["user", "add", name, "--password-stdin", "--create-database", "--database", database], stdin: "pw-12345678\n")
        #expect(added.status == 0, "\(added.stderr)")
    }

    /// Waits (blocking this thread) for the first progress line, i.e. 1000 cards stored, and
    /// at least 300 ms, then sends SIGTERM. False when the import exited first.
    static func terminateAfterFirstProgressLine(_ importing: ServeProcess) -> Bool {
        let started = ContinuousClock.now
        while importing.process.isRunning {
            if importing.stderr.current.contains("progress: "), ContinuousClock.now - started >= .milliseconds(300) {
                importing.process.send(SIGTERM)
                return true
            }
            usleep(2_000)
        }
        return false
    }

    @Test func sigtermDuringALargeImportLeavesACheckedDatabaseOfWholeCards() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Self.addUser("bulk", database: database)
        let count = 20_000
        let file = folder.appendingPathComponent("bulk.vcf")
        try (1...count).map(Self.card).joined().write(to: file, atomically: true, encoding: .utf8)

        let importing = try ServeProcess(arguments: ["import", "bulk", "default", file.path, "--database", database])
        // The signal is sent from a plain thread, not a test task: under a loaded test run the
        // cooperative pool can be busy for seconds, long enough for the import to finish.
        let signalled = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread.detachNewThread {
                continuation.resume(returning: Self.terminateAfterFirstProgressLine(importing))
            }
        }
        #expect(signalled, "the import ended before it could be interrupted: \(importing.stderr.current)")
        _ = await importing.terminate()
        #expect(importing.process.terminationReason == .uncaughtSignal)

        let check = try await RoloBinary.run(["check", "--database", database])
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")

        let exported = try await RoloBinary.run(["export", "bulk", "default", "--database", database])
        #expect(exported.status == 0)
        let cards = exported.stdout.components(separatedBy: "BEGIN:VCARD").dropFirst().map { "BEGIN:VCARD" + $0 }
        #expect(cards.count >= 1000 && cards.count < count, "\(cards.count) cards after the interruption")
        for card in cards {
            let number = try #require(card.firstMatch(of: /UID:bulk-([0-9]+)\r\n/).flatMap { Int($0.1) })
            #expect(card == Self.card(number), "card \(number) is not whole")
        }
    }

    @Test func importPrintsPlainProgressAndASummaryWithReasons() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Self.addUser("sum", database: database)
        let good = folder.appendingPathComponent("good.vcf"), empty = folder.appendingPathComponent("empty.vcf")
        // Import reads leniently (a card without FN or VERSION is taken), but not this.
        let broken = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:two-versions\r\nVERSION:4.0\r\nFN:Twice\r\nEND:VCARD\r\n"
        try (Self.card(1) + broken + Self.card(2)).write(to: good, atomically: true, encoding: .utf8)
        try "not a vcard\n".write(to: empty, atomically: true, encoding: .utf8)

        let result = try await RoloBinary.run(["import", "sum", "default", good.path, empty.path, "--database", database])
        #expect(result.status != 0)
        #expect(result.stderr.contains("progress: 3/3 cards"))
        #expect(!result.stderr.contains("\r"))
        #expect(result.stdout.contains("Imported 2 cards into sum/default (2 new, 0 replaced); skipped 1 files; 1 invalid cards."))
        #expect(result.stderr.contains("skipped \(empty.path): no BEGIN:VCARD"))
        // Line 12 of the file: the broken card begins on line 9, its fault is on its line 4.
        #expect(result.stderr.contains("invalid \(good.path) line 12 (card 2): VERSION appears twice"), "\(result.stderr)")
    }
}
