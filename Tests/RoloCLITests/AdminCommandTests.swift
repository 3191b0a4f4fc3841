import Foundation
import Testing

/// `rolo user` and `rolo book` administration on a database.
@Suite struct AdminCommandTests {
    @Test func usersCanBeAddedListedGivenNewPasswordsAndDeleted() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "dave", "--password-stdin", "--create-database"] + db, stdin: "one-12345678\n").status == 0)
        #expect(try await RoloBinary.run(["user", "add", "erin", "--password-stdin"] + db, stdin: "two-12345678\n").status == 0)
        let duplicate = try await RoloBinary.run(["user", "add", "dave", "--password-stdin"] + db, stdin: "x-12345678\n")
        #expect(duplicate.status != 0)
        #expect(duplicate.stderr.contains("already exists"))

        let list = try await RoloBinary.run(["user", "list"] + db)
        #expect(list.stdout.split(separator: "\n").map(String.init).sorted() == ["dave\tlocal", "erin\tlocal"])

        #expect(try await RoloBinary.run(["user", "passwd", "dave", "--password-stdin"] + db, stdin: "three-12345678\n").status == 0)
        #expect(try await RoloBinary.run(["user", "delete", "erin"] + db).status == 0)
        #expect(try await RoloBinary.run(["user", "list"] + db).stdout == "dave\tlocal\n")
        #expect(try await RoloBinary.run(["user", "delete", "nobody"] + db).status != 0)
    }

    @Test func emptyPasswordFromStdinIsRefusedAndCreatesNoUser() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let add = try await RoloBinary.run(["user", "add", "frank", "--password-stdin", "--create-database", "--database", database], stdin: "\n")
        #expect(add.status != 0)
        #expect(try await RoloBinary.run(["user", "list", "--database", database]).stdout.isEmpty)
    }

    @Test func passwordIsNeverAcceptedAsAnArgument() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let add = try await RoloBinary.run(["user", "add", "gina", "--password", "secret", "--database", database])
        #expect(add.status != 0)
    }

    @Test func booksCanBeCreatedListedAndDeleted() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "hana", "--password-stdin", "--create-database"] + db, stdin: "pw-12345678\n").status == 0)
        let create = try await RoloBinary.run(["book", "create", "hana", "work", "--display-name", "Work"] + db)
        #expect(create.status == 0, "\(create.stderr)")
        let list = try await RoloBinary.run(["book", "list", "hana"] + db)
        #expect(list.stdout.contains("default"))
        #expect(list.stdout.contains("work\tWork\t0 cards"))
        #expect(try await RoloBinary.run(["book", "create", "hana", "work"] + db).status != 0)
        #expect(try await RoloBinary.run(["book", "delete", "hana", "work"] + db).status == 0)
        #expect(!(try await RoloBinary.run(["book", "list", "hana"] + db)).stdout.contains("work"))
        #expect(try await RoloBinary.run(["book", "list", "nobody"] + db).status != 0)
    }

    @Test func backupCopiesUsersAndCheckFindsBothDatabasesSound() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try await RoloBinary.run(["user", "add", "kim", "--password-stdin", "--create-database", "--database", database],
                                         stdin: "pw-12345678\n").status == 0)
        let copy = folder.appendingPathComponent("backup.sqlite").path
        let backup = try await RoloBinary.run(["backup", copy, "--database", database])
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(try await RoloBinary.run(["user", "list", "--database", copy]).stdout == "kim\tlocal\n")
        #expect(try await RoloBinary.run(["check", "--database", database]).stdout.hasPrefix("ok"))
        #expect(try await RoloBinary.run(["check", "--database", copy]).status == 0)
        #expect(try await RoloBinary.run(["backup", copy, "--database", database]).status != 0)
    }

    @Test func anEmptyPasswordOnStdinSaysToUsePasswordStdin() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database, "--create-database"]
        let piped = try await RoloBinary.run(["user", "add", "lena"] + db, stdin: "")
        #expect(piped.status == 1)
        #expect(piped.stderr.contains("use --password-stdin"), "\(piped.stderr)")
        #expect(!piped.stderr.contains("USAGE"))
        let empty = try await RoloBinary.run(["user", "add", "lena", "--password-stdin"] + db, stdin: "\n")
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("No password on stdin: --password-stdin reads the password from the first line"),
                "\(empty.stderr)")
        #expect(!FileManager.default.fileExists(atPath: database))
    }
}
