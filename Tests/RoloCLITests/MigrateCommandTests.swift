import Foundation
import PostgresTestSupport
import Testing

/// `rolo migrate` as an operator runs it: SQLite → PostgreSQL → SQLite with the built binary,
/// and the refusal of a target that holds data.
@Suite struct MigrateCommandTests {
    static let cards = """
        BEGIN:VCARD\r\nVERSION:4.0\r\nUID:m-1\r\nFN:Mia Move\r\nEMAIL:mia@example.com\r\nEND:VCARD\r\n\
        BEGIN:VCARD\r\nVERSION:3.0\r\nUID:m-2\r\nFN:Max Move\r\nTEL:+1 555 0101\r\nEND:VCARD\r\n
        """

    func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-migrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func copiesToPostgreSQLAndBackAndRefusesAFullTarget() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("source.sqlite").path
        let back = folder.appendingPathComponent("back.sqlite").path
        let file = folder.appendingPathComponent("cards.vcf")
        try Data(Self.cards.utf8).write(to: file)
        let add = try await RoloBinary.run(["user", "add", "mia", "--password-stdin", "--create-database", "--database", source], stdin: "mia-pass\n")
        #expect(add.status == 0, "\(add.stderr)")
        let imported = try await RoloBinary.run(["import", "mia", "default", file.path, "--database", source])
        #expect(imported.status == 0, "\(imported.stderr)")
        let exported = try await RoloBinary.run(["export", "mia", "default", "--database", source])
        #expect(exported.status == 0)

        let database = try await TestDatabase.create()
        do {
            let there = try await RoloBinary.run(["migrate", "--from", source, "--to", database.url])
            #expect(there.status == 0, "\(there.stderr)")
            #expect(there.stdout.contains("1 users, 1 collections, 2 cards and files"), "\(there.stdout)")
            #expect(there.stderr.contains("2/2"), "\(there.stderr)")
            let users = try await RoloBinary.run(["user", "list", "--database", database.url])
            #expect(users.stdout == "mia\tlocal\n", "\(users.stderr)")

            // Again into the same database: refused, nothing written.
            let again = try await RoloBinary.run(["migrate", "--from", source, "--to", database.url])
            #expect(again.status != 0)
            #expect(again.stderr.contains("is not empty"), "\(again.stderr)")
            #expect(!again.stderr.contains("secret"))

            let home = try await RoloBinary.run(["migrate", "--from", database.url, "--to", back])
            #expect(home.status == 0, "\(home.stderr)")
            let roundTrip = try await RoloBinary.run(["export", "mia", "default", "--database", back])
            #expect(roundTrip.output == exported.output)
            let check = try await RoloBinary.run(["check", "--database", back])
            #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        } catch {
            await database.drop()
            throw error
        }
        await database.drop()
    }

    @Test func refusesAMissingSourceAndTheSameDatabaseTwice() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = try await RoloBinary.run(["migrate", "--from", folder.appendingPathComponent("nope.sqlite").path,
                                                "--to", folder.appendingPathComponent("to.sqlite").path])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("does not exist"), "\(missing.stderr)")
        let same = try await RoloBinary.run(["migrate", "--from", "a.sqlite", "--to", "a.sqlite"])
        #expect(same.status != 0)
        #expect(same.stderr.contains("same database"), "\(same.stderr)")
    }
}
