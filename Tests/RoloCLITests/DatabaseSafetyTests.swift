import Foundation
import ProcessLaunch
import Testing

/// The database as an admin meets it through the built binary: a wrong path is refused, not
/// replaced by a new empty database; a first set-up says so; files holding contacts are
/// private whatever the umask; a folder that cannot be written is named with what to do.
@Suite struct DatabaseSafetyTests {
    @Test func everyCommandButServeRefusesAMissingDatabaseNamingThePath() async throws {
        let folder = try temporaryDatabase().folder
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("no/such/rolo.sqlite").path
        let vcf = folder.appendingPathComponent("one.vcf")
        try "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:A\r\nEND:VCARD\r\n".write(to: vcf, atomically: true, encoding: .utf8)
        let backup = folder.appendingPathComponent("backup.sqlite").path
        let commands: [[String]] = [
            ["backup", backup], ["check"], ["user", "add", "zoe", "--password-stdin"], ["user", "passwd", "zoe", "--password-stdin"], ["user", "list"],
            ["user", "delete", "zoe"], ["book", "list", "zoe"], ["import", "zoe", "default", vcf.path],
            ["export", "zoe", "default"], ["migrate", "--from", missing, "--to", folder.appendingPathComponent("to.sqlite").path],
        ]
        for command in commands {
            let arguments = command.first == "migrate" ? command : command + ["--database", missing]
            let result = try await RoloBinary.run(arguments, stdin: "pw-zoe-123\n")
            #expect(result.status == 1, "\(command): \(result.stderr)")
            #expect(result.stderr.contains(missing), "\(command): \(result.stderr)")
            #expect(!result.stdout.contains("ok:") && !result.stdout.contains("Backed up"), "\(command)")
        }
        // Nothing was created on the way: no folder, no empty database, no backup.
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("no").path))
        #expect(!FileManager.default.fileExists(atPath: backup))
        let check = try await RoloBinary.run(["check", "--database", missing])
        #expect(check.stderr.contains("No database at \(missing)"))
        #expect(check.stderr.contains("--create-database"))
    }

    @Test func theDefaultPathIsNamedWhereItIs() async throws {
        let folder = try temporaryDatabase().folder
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await Self.runInFolder(folder, ["user", "list"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("No database at ./rolo-data/rolo.sqlite (\(folder.path)/rolo-data/rolo.sqlite)"),
                "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("rolo-data").path))
    }

    @Test func userAddCreateDatabaseIsTheFirstSetUp() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let add = try await RoloBinary.run(["user", "add", "una", "--password-stdin", "--create-database", "--database", database],
                                           stdin: "una-pass-1\n")
        #expect(add.status == 0, "\(add.stderr)")
        #expect(try await RoloBinary.run(["user", "list", "--database", database]).stdout == "una\tlocal\n")
        #expect(try await RoloBinary.run(["check", "--database", database]).stdout == "ok: \(database)\n")
    }

    @Test func filesHoldingContactsArePrivateUnderUmask022() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let add = try await Self.runWithUmask022(["user", "add", "max", "--password-stdin", "--create-database",
                                                  "--database", database], stdin: "max-pass-1\n")
        #expect(add.status == 0, "\(add.stderr)")
        let vcf = folder.appendingPathComponent("cards.vcf")
        try "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:m1\r\nFN:Max\r\nEND:VCARD\r\n".write(to: vcf, atomically: true, encoding: .utf8)
        #expect(try await Self.runWithUmask022(["import", "max", "default", vcf.path, "--database", database]).status == 0)
        // A short command leaves the log files in place (a running server would keep them); the
        // bulk ones below close the store and, as the last connection out, remove them.
        #expect(try await Self.runWithUmask022(["user", "list", "--database", database]).status == 0)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: database + suffix) {
            #expect(try Self.mode(database + suffix) == 0o600, "\(suffix)")
        }
        #expect(FileManager.default.fileExists(atPath: database + "-wal"), "no log file was left to check")
        let backup = folder.appendingPathComponent("backups/nested/copy.sqlite").path
        let export = folder.appendingPathComponent("exports/max.vcf").path
        #expect(try await Self.runWithUmask022(["backup", backup, "--database", database]).status == 0)
        #expect(try await Self.runWithUmask022(["export", "max", "default", export, "--database", database]).status == 0)

        #expect(try Self.mode(folder.appendingPathComponent("data").path) == 0o700)
        #expect(try Self.mode(database) == 0o600)
        #expect(try Self.mode(backup) == 0o600)
        #expect(try Self.mode(folder.appendingPathComponent("backups").path) == 0o700)
        #expect(try Self.mode(folder.appendingPathComponent("backups/nested").path) == 0o700)
        #expect(try Self.mode(export) == 0o600)
        #expect(try Self.mode(folder.appendingPathComponent("exports").path) == 0o700)

        // A new server database, with its log and shared memory while it serves.
        let served = folder.appendingPathComponent("served/rolo.sqlite").path
        let serve = try ServeProcess(arguments: ["-c", "umask 022 && exec \"$0\" \"$@\"", RoloBinary.url.path,
                                                "serve", "--port", "0", "--database", served, "--log-level", "warning"],
                                     executable: "/bin/sh")
        _ = try await serve.waitUntilListening()
        #expect(try Self.mode(served) == 0o600)
        #expect(try Self.mode(served + "-wal") == 0o600)
        #expect(try Self.mode(served + "-shm") == 0o600)
        #expect(try Self.mode(folder.appendingPathComponent("served").path) == 0o700)
        #expect(await serve.terminate() == 0)
    }

    @Test func serveWarnsWhenTheDatabaseIsReadableByOthers() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try await RoloBinary.run(["user", "add", "ola", "--password-stdin", "--create-database", "--database", database],
                                         stdin: "ola-pass-1\n").status == 0)
        let quiet = try ServeProcess(database: database)
        _ = try await quiet.waitUntilListening()
        #expect(await quiet.terminate() == 0)
        #expect(!quiet.stderr.current.contains("readable by other accounts"))

        #expect(chmod(database, 0o644) == 0)
        let serve = try ServeProcess(database: database)
        _ = try await serve.waitUntilListening()
        #expect(await serve.terminate() == 0)
        #expect(serve.stderr.current.contains("\(database) is readable by other accounts"), "\(serve.stderr.current)")
        #expect(serve.stderr.current.contains("chmod 600"))
    }

    /// Root writes through file permissions, so the folder is made read-only by mounting it
    /// so, in a mount namespace of the command's own (`unshare -m`, which a root CI machine
    /// allows; a container without CAP_SYS_ADMIN does not, and the test then says so).
    @Test func aReadOnlyFolderIsNamedWithWhatToDo() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try await RoloBinary.run(["user", "add", "pia", "--password-stdin", "--create-database", "--database", database],
                                         stdin: "pia-pass-1\n").status == 0)
        let probe = try await Self.runReadOnly(folder: folder.path, ["check", "--database", database])
        try #require(probe.status != 125, "unshare -m and mount are not allowed here: \(probe.stderr)")
        let data = folder.appendingPathComponent("data").path

        // An existing database in a read-only folder: a write names the file and the cause.
        let add = try await Self.runReadOnly(folder: data, ["user", "add", "quinn", "--password-stdin", "--database", database],
                                             stdin: "quinn-pass-1\n")
        #expect(add.status == 1)
        #expect(add.stderr.contains("cannot write \(database): the folder \(data) is read-only"), "\(add.stderr)")
        #expect(!add.stderr.contains("SQLite error"), "\(add.stderr)")
        #expect(!add.stderr.contains("NSCocoaErrorDomain"), "\(add.stderr)")

        // A new database in a read-only folder: the folder it could not create is named.
        let fresh = folder.appendingPathComponent("data/new/rolo.sqlite").path
        let create = try await Self.runReadOnly(folder: data, ["user", "add", "quinn", "--password-stdin", "--create-database",
                                                               "--database", fresh], stdin: "quinn-pass-1\n")
        #expect(create.status == 1)
        #expect(create.stderr.contains("cannot create the folder \(data)/new: the folder \(data) is read-only"), "\(create.stderr)")
        #expect(!create.stderr.contains("NSCocoaErrorDomain"), "\(create.stderr)")
        // Nothing changed: quinn is not in the database.
        #expect(try await RoloBinary.run(["user", "list", "--database", database]).stdout == "pia\tlocal\n")
    }

    // MARK: - Running rolo in a changed environment

    /// `rolo arguments…` with umask 022, as a shell outside systemd leaves it.
    static func runWithUmask022(_ arguments: [String], stdin: String = "") async throws -> RoloBinary.Outcome {
        try await run("/bin/sh", ["-c", "umask 022 && exec \"$0\" \"$@\"", RoloBinary.url.path] + arguments, stdin: stdin)
    }

    /// `rolo arguments…` with `folder` mounted read-only in a mount namespace of its own;
    /// status 125 when the namespace or the mount is refused.
    static func runReadOnly(folder: String, _ arguments: [String], stdin: String = "") async throws -> RoloBinary.Outcome {
        try await run("/usr/bin/unshare", ["-m", "/bin/sh", "-c", """
            mount --make-rprivate / 2>/dev/null; mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" || exit 125
            exec "$@"
            """, folder, RoloBinary.url.path] + arguments, stdin: stdin)
    }

    /// `rolo arguments…` run from `folder`, so its default database path is there.
    static func runInFolder(_ folder: URL, _ arguments: [String]) async throws -> RoloBinary.Outcome {
        try await run("/bin/sh", ["-c", "cd \"$0\" && shift && exec \"$@\"", folder.path, "x", RoloBinary.url.path] + arguments,
                      stdin: "")
    }

    static func run(_ executable: String, _ arguments: [String], stdin: String) async throws -> RoloBinary.Outcome {
        try await RoloBinary.run(executable: executable, arguments, stdin: Data(stdin.utf8))
    }

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
