import Foundation
import ProcessLaunch
import Testing

/// `rolo --version` and the web UI's admin page say the same version and commit, and the
/// commit is one this repository has (or `unknown` for a build without git).
@Suite struct VersionTests {
    /// The package folder, from this file's path (Tests/RoloCLITests/VersionTests.swift).
    static let packageFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    @Test func versionNamesTheReleaseAndACommitOfThisRepository() async throws {
        let outcome = try await RoloBinary.run(["--version"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let match = try #require(outcome.stdout.wholeMatch(of: /(\d+\.\d+\.\d+[0-9A-Za-z.-]*) \(commit ([0-9a-f]{12})?(-modified)?(unknown)?\)\n/),
                                 "\(outcome.stdout)")
        guard let commit = match.output.2 else {
            #expect(match.output.4 != nil && match.output.3 == nil, "\(outcome.stdout)")
            return
        }
        // Built from git: the commit is in this repository (when git can read it from here;
        // it could not in the build either where it cannot, and then the commit is unknown).
        if let git = try? SpawnedProcess("/usr/bin/git", ["-C", Self.packageFolder, "cat-file", "-t", "\(commit)^{commit}"],
                                         stderr: .null) {
            let fd = git.standardOutput!
            let type = String(decoding: await onPlainThread { readToEnd(fd) }, as: UTF8.self)
            await git.exited()
            #expect(type == "commit\n", "\(commit) is not a commit of \(Self.packageFolder)")
        }
    }

    @Test func theAdminPageShowsTheVersionTheCommandPrints() async throws {
        let version = try await RoloBinary.run(["--version"]).stdout.trimmingCharacters(in: .newlines)
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "root", "--password-stdin", "--create-database"] + db, stdin: "root-secret\n").status == 0)
        #expect(try await RoloBinary.run(["user", "set", "root", "--admin", "true"] + db).status == 0)
        let server = try ServeProcess(database: database)
        defer { if server.process.isRunning { server.process.send(SIGKILL) } }
        let port = try await server.waitUntilListening()
        let base = "http://127.0.0.1:\(port)"
        let jar = folder.appendingPathComponent("cookies").path

        let login = try await curl(["-c", jar, "-b", jar, "\(base)/web/login"])
        let token = try #require(login.firstMatch(of: /name="csrf" value="([^"]*)"/)?.output.1, "\(login)")
        let signIn = try await curlStatus(["-c", jar, "-b", jar, "--data-urlencode", "csrf=\(token)", "--data-urlencode", "user=root",
                                           "--data-urlencode", "password=root-secret", "\(base)/web/login"])
        #expect(signIn == 303)
        let admin = try await curl(["-c", jar, "-b", jar, "\(base)/web/admin"])
        #expect(admin.contains("data-testid=\"health-version\">\(version)</dd>"), "\(admin)")
        #expect(await server.terminate() == 0)
    }
}
