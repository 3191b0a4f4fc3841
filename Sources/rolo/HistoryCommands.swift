import ArgumentParser
import CardIndexing
import Foundation
import RoloStore

/// `rolo history USER BOOK CARD` (issue 31): the versions of one card still kept, one a
/// line: time, user, device, what changed in the Contacts model's terms.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "The kept versions of a card: time, user, device, what changed.")
    @Argument(help: "User name (the book's owner).") var user: String
    @Argument(help: "Book name.") var book: String
    @Argument(help: "The card's file name in the book (e.g. 1234.vcf) or its UID.") var card: String
    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        try await options.withStore { store in
            let (collection, history) = try await HistoryCommand.openBook(user: user, book: book, in: store)
            var name = card
            if try await history.cardVersions(collectionID: collection.id, name: card).isEmpty,
               let byUID = try await store.resourceName(collectionID: collection.id, uid: card) {
                name = byUID
            }
            let versions = try await history.cardVersions(collectionID: collection.id, name: name)
            guard !versions.isEmpty else { throw CLIError("No card \(card) in \(user)/\(book), nor any version of it.") }
            let devices = try await HistoryCommand.deviceNames(of: user, in: store)
            for (version, changes) in zip(versions, CardHistory.describe(versions)) {
                print([HistoryCommand.time(version.at), version.user ?? "-",
                       HistoryCommand.device(version.credentialID, devices), changes.joined(separator: ", ")]
                    .joined(separator: "  "))
            }
        }
    }

    /// The user's address book and the store's history, or the error the admin reads.
    static func openBook(user: String, book: String, in store: any RoloStore) async throws
        -> (CollectionInfo, any CardHistoryStore) {
        try await store.requireUser(user)
        guard let collection = try await store.collection(owner: user, path: [book]), collection.kind == .addressBook else {
            throw CLIError("No address book \(user)/\(book).")
        }
        guard let history = store as? any CardHistoryStore else { throw CLIError("This database keeps no card versions.") }
        return (collection, history)
    }

    /// App-password names by id; 0 is the account password.
    static func deviceNames(of user: String, in store: any RoloStore) async throws -> [Int64: String] {
        try await CardHistory.deviceNames(of: user, in: store)
    }

    static func device(_ id: Int64?, _ names: [Int64: String]) -> String {
        guard let id else { return "-" }
        return names[id] ?? "credential \(id)"
    }

    static func time(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
    }
}

/// `rolo restore USER BOOK --to TIME [--device NAME] [--dry-run]` (issue 31): puts the book
/// back as it was at TIME, or takes back what one device did since, as one transaction of
/// ordinary writes that clients sync back. Prints every step and every conflict left alone.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Undo every change to a book after a time, or one device's changes.")
    @Argument(help: "User name (the book's owner).") var user: String
    @Argument(help: "Book name.") var book: String
    @Option(help: "ISO 8601 time, e.g. 2026-11-28T07:10:00Z: changes after it are undone.") var to: String
    @Option(help: "Undo only this app password's changes (`account password` for the password itself).") var device: String?
    @Flag(help: "Print what would be done, change nothing.") var dryRun = false
    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        guard let time = CardHistory.parseTime(to) else {
            throw CLIError("Invalid time \(to): use ISO 8601, e.g. 2026-11-28T07:10:00Z.")
        }
        try await options.withStore { store in
            let (collection, history) = try await HistoryCommand.openBook(user: user, book: book, in: store)
            let devices = try await HistoryCommand.deviceNames(of: user, in: store)
            let plan: UndoPlan
            do {
                plan = try await CardHistory.undoPlan(collectionID: collection.id, since: time, device: device, of: user,
                                                      now: store.clock.now, accounts: store, history: history)
            } catch let refused as CardHistory.RestoreError {
                throw CLIError(refused.description)
            }
            for step in plan.steps {
                switch step {
                case let .revert(name, version, current):
                    print("\(dryRun ? "would restore" : "restored") \(name) to its version of \(HistoryCommand.time(version.at))"
                          + (current == nil ? " (it was deleted)" : ""))
                case let .remove(name, _):
                    print("\(dryRun ? "would remove" : "removed") \(name) (created after \(to); kept in the trash)")
                }
            }
            for conflict in plan.conflicts {
                let others = Set(conflict.others.map { "\($0.user ?? "-") with \(HistoryCommand.device($0.credentialID, devices))" })
                print("conflict: \(conflict.name) was changed since by \(others.sorted().joined(separator: ", ")); left alone")
            }
            if !dryRun, !plan.isEmpty {
                // On stderr, unbuffered: a big restore takes a moment, and a test that kills
                // it half way knows from this line that the transaction is what runs next.
                FileHandle.standardError.write(Data("restoring \(plan.steps.count) cards of \(user)/\(book) in one transaction\n".utf8))
                do {
                    try await CardHistory.apply(plan, collectionID: collection.id, in: store)
                } catch {
                    throw CLIError("Nothing restored: \(error) (a card changed meanwhile? run it again).")
                }
            }
            print("\(dryRun ? "Would restore" : "Restored") \(plan.steps.count) cards of \(user)/\(book); "
                  + "\(plan.conflicts.count) conflicts left alone.")
        }
    }
}
