import ArgumentParser
import Foundation
import RoloStore

/// `rolo check`: SQLite's integrity checks plus Rolo's own invariants; exit 1 on problems.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Check the database for corruption and broken invariants.")
    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        let store = try options.openStore()
        let problems = try await store.integrityCheck()
        try store.close()
        guard problems.isEmpty else {
            problems.forEach { print($0) }
            throw CLIError("\(problems.count) problem(s) found in \(options.resolvedPath).")
        }
        print("ok: \(options.resolvedPath)")
    }
}

/// `rolo backup FILE`: a consistent online copy, safe while the server runs.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup", abstract: "Copy the database to FILE (consistent, safe while serving).")
    @Argument(help: "Destination file; must not exist.") var file: String
    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        guard !FileManager.default.fileExists(atPath: file) else {
            throw CLIError("\(file) already exists.")
        }
        let store = try options.openStore()
        try store.backup(to: file)
        try store.close()
        print("Backed up \(options.resolvedPath) to \(file).")
    }
}
