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

    /// The commit follows HEAD from one incremental build to the next: a package of one
    /// executable printing `builtCommit`, built with the BuildCommit plugin, then committed
    /// to, edited, reverted and checked out at the first commit, built each time. SwiftPM
    /// skipped the prebuild command this plugin had before while it reused its plan, so a
    /// commit or a `git pull` kept the old commit in the binary.
    @Test func eachIncrementalBuildStampsTheCommitItIsBuiltFrom() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-stamp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = #"""
            set -e
            cd "$0"
            # The pause: the Swift driver takes a file rewritten within the second of its last
            # compile for unchanged, and no one commits that fast after a build.
            build() { sleep 1.1; env -u ROLO_COMMIT swift build -q --product Stamp >build.log 2>&1 || { cat build.log >&2; exit 1; }; }
            stamp() { echo "$1 $(git rev-parse --short=12 HEAD) $(.build/debug/Stamp)"; }
            git init -q . && git config user.email test@rolo.invalid && git config user.name test
            mkdir -p Plugins Sources/Stamp && cp -R "$1/Plugins/BuildCommit" Plugins/
            cat >Package.swift <<'END'
            // swift-tools-version: 6.0
            import PackageDescription
            let package = Package(name: "Stamp", targets: [
                .executableTarget(name: "Stamp", plugins: ["BuildCommit"]),
                .plugin(name: "BuildCommit", capability: .buildTool()),
            ])
            END
            echo 'print(builtCommit)' >Sources/Stamp/main.swift
            printf '.build/\nbuild.log\n' >.gitignore
            git add -A && git commit -qm first
            build && stamp first
            git commit -q --allow-empty -m second
            build && stamp second
            echo '// an edit' >>Sources/Stamp/main.swift
            build && stamp edited
            git checkout -q Sources/Stamp/main.swift
            build && stamp reverted
            git checkout -q HEAD~1
            build && stamp back
            """#
        let outcome = try await RoloBinary.run(executable: "/bin/sh", ["-c", script, folder.path, Self.packageFolder])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let lines = outcome.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(lines.map(\.first) == ["first", "second", "edited", "reverted", "back"], "\(outcome.stdout)")
        guard lines.count == 5, lines.allSatisfy({ $0.count == 3 }) else { return }
        #expect(lines[0][2] == lines[0][1])
        #expect(lines[1][2] == lines[1][1] && lines[1][1] != lines[0][1], "\(outcome.stdout)")
        #expect(lines[2][2] == lines[1][1] + "-modified")
        #expect(lines[3][2] == lines[1][1])
        #expect(lines[4][2] == lines[0][1])
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
