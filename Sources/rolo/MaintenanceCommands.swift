import ArgumentParser
import Foundation
import RoloSQLite
import RoloStore

/// `rolo check`: SQLite's integrity checks (on PostgreSQL the applied migrations) plus Rolo's
/// own invariants; exit 1 on problems.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Check the database for corruption and broken invariants.")
    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        let store = try await options.openStore()
        let problems: [String]
        do {
            problems = try await store.integrityCheck()
        } catch {
            try? await store.close()
            throw store.describingFileErrors(error)
        }
        try await store.close()
        guard problems.isEmpty else {
            problems.forEach { print($0) }
            throw CLIError("\(problems.count) problem(s) found in \(options.displayedLocation).")
        }
        print("ok: \(options.displayedLocation)")
    }
}

/// `rolo backup FILE`: a consistent online copy, safe while the server runs, created 0600
/// (in 0700 folders it creates).
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup", abstract: "Copy the database to FILE (consistent, safe while serving).")
    @Argument(help: "Destination file; must not exist.") var file: String
    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        guard !FileManager.default.fileExists(atPath: file) else {
            throw CLIError("\(file) already exists.")
        }
        guard case .sqlite(let store) = try await options.openStore() else {
            throw CLIError("rolo backup copies an SQLite file; back a PostgreSQL database up with pg_dump.")
        }
        do {
            try store.backup(to: file)
        } catch let error as DatabaseFileError {
            try? store.close()
            throw CLIError(error.description)
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
        print("Backed up \(options.resolvedPath) to \(file).")
    }
}
