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
/// (in 0700 folders it creates). An SQLite database is copied page by page; a PostgreSQL
/// database is copied into a new SQLite file, which `rolo migrate --from FILE --to URL`
/// brings back (issue 34): one file an admin can keep without PostgreSQL's tools.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup", abstract: "Copy the database to FILE (consistent, safe while serving).",
        discussion: """
            From PostgreSQL the copy is an SQLite file, read in one transaction; \
            rolo migrate --from FILE --to postgresql://... restores it into an empty database.
            """)
    @Argument(help: "Destination file; must not exist.") var file: String
    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        guard !FileManager.default.fileExists(atPath: file) else {
            throw CLIError("\(file) already exists.")
        }
        let opened = try await options.openStore()
        guard case .sqlite(let store) = opened else {
            return try await copyIntoNewFile(from: opened)
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

    /// The whole database copied as `rolo migrate` copies it (one read transaction, so never
    /// torn), into a file beside FILE that takes FILE's name only once it is complete: a
    /// failed copy leaves nothing that could be mistaken for a backup.
    private func copyIntoNewFile(from source: OpenedStore) async throws {
        let partial = file + ".partial"
        let leftovers = [partial, partial + "-wal", partial + "-shm"]
        guard !leftovers.contains(where: FileManager.default.fileExists(atPath:)) else {
            try? await source.close()
            throw CLIError("\(partial) already exists: remove what an earlier backup left, then try again.")
        }
        let summary: MigrationSummary
        do {
            let target = try await options.openStore(partial, creating: true)
            do {
                guard let reader = source.store as? any StoreSnapshotting,
                      let writer = target.store as? any StoreSnapshotting else { throw CLIError("This store cannot be copied.") }
                let progress = ProgressBox()
                summary = try await StoreMigration.run(from: reader, to: writer, batchSize: 500, metadata: MigrateCommand.metadata(of:),
                                                       progress: { done, total in progress.update(done: done, total: total) })
                try await target.close()
            } catch {
                try? await target.close()
                throw error
            }
            try await source.close()
            try FileManager.default.moveItem(atPath: partial, toPath: file)
        } catch {
            try? await source.close()
            for leftover in leftovers { try? FileManager.default.removeItem(atPath: leftover) }
            throw error
        }
        let copied = summary.copied
        print("Backed up \(options.displayedLocation) to \(file): \(copied[.users] ?? 0) users, "
              + "\(copied[.collections] ?? 0) collections, \(copied[.resources] ?? 0) cards and files.")
        print("Restore it into an empty database with: rolo migrate --from \(file) --to postgresql://...")
    }
}
