import ArgumentParser
import CardIndexing
import Foundation
import RoloPostgres
import RoloStore
import VCard

/// `rolo migrate --from SRC --to DST`: copies a whole database between SQLite and
/// PostgreSQL (either way, issue 20) into an empty target, keeping ids, sync positions, the
/// change log, ETags and card bytes as they were, so clients carry on without a resync.
/// Index and list rows are rebuilt from the cards. The source is read in one read
/// transaction: a copy is never torn, but what a server writes meanwhile is not in it.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy a whole database (SQLite file or postgresql:// URL) into an empty one.",
        discussion: """
            Keeps users, passwords, books, cards with their ETags, sync tokens and change log, \
            dead properties, shares, app passwords, access history, push registrations, trash, feeds \
            and every card's kept versions (rolo history, rolo restore). \
            Web sessions are not copied (browsers sign in again). Stop rolo serve first: \
            what it writes during the copy would be missing from the copy.
            """)

    @Option(name: .long, help: ArgumentHelp("The database to copy: an SQLite file or a postgresql:// URL.", valueName: "path-or-url"))
    var from: String

    @Option(name: .long, help: ArgumentHelp("The empty database to copy into: an SQLite file or a postgresql:// URL.",
                                            valueName: "path-or-url"))
    var to: String

    @Option(name: .customLong("batch-size"), help: "Records per read and per write transaction.")
    var batchSize = 500

    func validate() throws {
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1.") }
        guard from != to else { throw ValidationError("--from and --to name the same database.") }
    }

    func run() async throws {
        if !PostgresStore.Configuration.isDatabaseURL(from), !FileManager.default.fileExists(atPath: from) {
            throw CLIError("\(from) does not exist.")
        }
        let options = try DatabaseOptions.parse([])
        let source = try await options.openStore(from)
        let target: OpenedStore
        do {
            target = try await options.openStore(to, creating: true)
        } catch {
            try? await source.close()
            throw error
        }
        let started = ContinuousClock.now
        let summary: MigrationSummary
        do {
            guard let reader = source.store as? any StoreSnapshotting, let writer = target.store as? any StoreSnapshotting else {
                throw CLIError("This store cannot be migrated.")
            }
            let progress = ProgressBox()
            summary = try await StoreMigration.run(from: reader, to: writer, batchSize: batchSize, metadata: Self.metadata(of:),
                                                   progress: { done, total in progress.update(done: done, total: total) })
        } catch MigrationError.targetNotEmpty {
            try? await source.close()
            try? await target.close()
            throw CLIError("\(DatabaseOptions.displayed(to)) is not empty: it already holds users, books or cards. "
                           + "migrate copies into an empty database only; nothing was written.")
        } catch {
            try? await source.close()
            try? await target.close()
            throw error
        }
        try await source.close()
        try await target.close()
        let elapsed = (ContinuousClock.now - started).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        let copied = summary.copied
        print("Migrated \(DatabaseOptions.displayed(from)) to \(DatabaseOptions.displayed(to)) in \(String(format: "%.1f", seconds)) s:")
        print("  \(copied[.users] ?? 0) users, \(copied[.collections] ?? 0) collections, \(copied[.resources] ?? 0) cards and files, "
              + "\(copied[.changes] ?? 0) change-log rows, \(copied[.deadProperties] ?? 0) dead properties")
        print("  \(copied[.shares] ?? 0) shares, \(copied[.appPasswords] ?? 0) app passwords, "
              + "\((copied[.accessHourly] ?? 0) + (copied[.accessDaily] ?? 0)) access-history rows, "
              + "\(copied[.pushRegistrations] ?? 0) push registrations, \(copied[.trash] ?? 0) trash entries, "
              + "\(copied[.feeds] ?? 0) feeds, \(copied[.settings] ?? 0) settings")
        print("  \(copied[.cardVersions] ?? 0) card versions (\(copied[.cardVersionBodies] ?? 0) bodies, "
              + "\(copied[.cardVersionParts] ?? 0) shared photos and other large properties)")
        if summary.unindexed > 0 {
            print("  \(summary.unindexed) cards could not be parsed: copied as they were, but not searchable or listed.")
        }
        print("  Web sessions were not copied: web UI users sign in again.")
    }

    /// What the target indexes of a card, read leniently as `StoreUpkeep` reads cards for
    /// their list rows: a card a client once stored is indexed even if it breaks a rule the
    /// strict parser enforces today.
    @Sendable static func metadata(of data: Data) -> CardMetadata? {
        guard let card = try? VCardParser.parse(Array(data), mode: .lenient).first else { return nil }
        return CardMetadata(card: card)
    }
}

/// `ImportProgress` behind a lock, for the migration's progress callback (`migrate`, `backup`).
final class ProgressBox: @unchecked Sendable {
    private let lock = NSLock()
    private var progress: ImportProgress?

    func update(done: Int, total: Int) {
        lock.withLock {
            if progress == nil { progress = ImportProgress(total: total) }
            progress?.update(done: done)
        }
    }
}
