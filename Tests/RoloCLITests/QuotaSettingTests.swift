import Foundation
import Testing

/// The storage quota as an admin sets it (`quota_bytes`, `--quota-bytes`, `ROLO_QUOTA_BYTES`):
/// `serve` applies it to a client's PUT, `rolo import` to what it writes. Cards here are
/// 84 and 64 bytes, so a quota of 100 bytes takes the first and refuses the second.
@Suite struct QuotaSettingTests {
    static let first = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:quota-1\r\nFN:Ada Lovelace\r\nN:Lovelace;Ada;;;\r\nEND:VCARD\r\n"
    static let second = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:quota-2\r\nFN:Alan Turing\r\nEND:VCARD\r\n"

    @Test func importStopsAtTheQuotaKeepingTheBatchesBeforeIt() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        let add = try await RoloBinary.run(["user", "add", "ida", "--password-stdin", "--create-database"] + db, stdin: "ida-password\n")
        #expect(add.status == 0, "\(add.stderr)")
        let file = folder.appendingPathComponent("two.vcf")
        try (Self.first + Self.second).write(to: file, atomically: true, encoding: .utf8)

        let stopped = try await RoloBinary.run(["import", "ida", "default", file.path, "--batch-size", "1",
                                                "--quota-bytes", "100"] + db)
        #expect(stopped.status != 0)
        #expect(stopped.stderr.contains("Import stopped"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("1 cards went in"), "\(stopped.stderr)")
        let exported = try await RoloBinary.run(["export", "ida", "default"] + db)
        #expect(exported.stdout.contains("UID:quota-1"))
        #expect(!exported.stdout.contains("UID:quota-2"))

        // Replacing a card adds no bytes: the same file's first card goes in again under
        // the same quota, from the environment this time.
        try Self.first.write(to: file, atomically: true, encoding: .utf8)
        let replaced = try await RoloBinary.run(["import", "ida", "default", file.path] + db,
                                                environment: ["ROLO_QUOTA_BYTES": "100"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stdout.contains("0 new, 1 replaced"), "\(replaced.stdout)")

        // Without a quota the second card goes in.
        try Self.second.write(to: file, atomically: true, encoding: .utf8)
        #expect(try await RoloBinary.run(["import", "ida", "default", file.path] + db).status == 0)
    }

    @Test func aQuotaOfZeroIsRefusedNamingTheKey() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let outcome = try await RoloBinary.run(["import", "ida", "default", "none.vcf", "--quota-bytes", "0",
                                                "--database", database])
        #expect(outcome.status != 0)
        #expect(outcome.stderr.contains("quota_bytes must be a number of bytes above 0"), "\(outcome.stderr)")
    }

    @Test func serveAppliesTheQuotaFromItsConfigFileToAClientsPut() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let add = try await RoloBinary.run(["user", "add", "una", "--password-stdin", "--create-database", "--database", database],
                                           stdin: "una-password\n")
        #expect(add.status == 0, "\(add.stderr)")
        let config = folder.appendingPathComponent("rolo.toml")
        try "quota_bytes = 100\n".write(to: config, atomically: true, encoding: .utf8)
        let serve = try ServeProcess(database: database, extra: ["--config", config.path])
        let port = try await serve.waitUntilListening()
        let book = "http://127.0.0.1:\(port)/dav/addressbooks/una/default/"
        func put(_ card: String, _ name: String) async throws -> Int {
            try await curlStatus(["-u", "una:una-password", "-X", "PUT", "-H", "Content-Type: text/vcard",
                                  "--data-binary", card, book + name])
        }
        #expect(try await put(Self.first, "quota-1.vcf") == 201)
        #expect(try await put(Self.second, "quota-2.vcf") == 507)
        #expect(await serve.terminate() == 0)
    }
}
