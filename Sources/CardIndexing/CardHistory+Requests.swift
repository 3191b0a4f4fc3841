import Foundation
import RoloStore

/// What the CLI, the web UI and the JSON API ask of a card's history (issue 31), checked the
/// same way for all three: the same plan, the same refusals, before anything is written.
extension CardHistory {
    /// An ISO 8601 time (`2026-11-28T07:10:00Z`, fractional seconds allowed).
    public static func parseTime(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return (try? Date.ISO8601FormatStyle().parse(trimmed))
            ?? (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(trimmed))
    }

    public static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
    }

    /// The name of the account password among a user's devices (`rolo restore --device`).
    public static let accountPasswordDevice = "account password"

    /// App-password names by id; 0 is the account password.
    public static func deviceNames(of user: String, in store: any AccountStore) async throws -> [Int64: String] {
        var names: [Int64: String] = [0: accountPasswordDevice]
        for password in try await store.appPasswords(user: user) { names[password.id] = password.name }
        return names
    }

    /// Who made a version, as a person reads it: the device by name when it is one of
    /// `names`' user's, else only that it was another user's.
    public static func device(of version: CardVersion, names: [Int64: String], namesOf user: String) -> String {
        guard let id = version.credentialID else { return "-" }
        guard version.user == nil || version.user == user else { return id == 0 ? accountPasswordDevice : "a device of theirs" }
        return names[id] ?? "credential \(id)"
    }

    /// The undo of a book after `time` (by one of `user`'s devices when `device` names one),
    /// or the refusal a person reads: a time in the future, an unknown device, a time before
    /// the kept history. Nothing is written. `includeConflicts`: cards another device changed
    /// since go back too (asked for explicitly; left alone otherwise).
    public static func undoPlan(collectionID: Int64, since time: Date, device: String?, of user: String, now: Date,
                                includeConflicts: Bool = false,
                                accounts: any AccountStore, history: any CardHistoryStore) async throws -> UndoPlan {
        guard time <= now else { throw RestoreError("The time \(format(time)) is in the future. Nothing changed.") }
        var author: UndoPlan.Author?
        if let device {
            let names = try await deviceNames(of: user, in: accounts)
            guard let id = names.first(where: { $0.value == device })?.key else {
                throw RestoreError("No device \(device) of \(user): name one of its app passwords, or `\(accountPasswordDevice)`. Nothing changed.")
            }
            author = UndoPlan.Author(user: user, credentialID: id)
        }
        if let complete = try await history.historyCompleteSince(), !UndoPlan.isComplete(since: time, completeSince: complete) {
            throw RestoreError("Versions from before \(format(complete)) are no longer kept (history_days): "
                               + "choose a later time. Nothing changed.")
        }
        let versions = try await history.bookVersions(collectionID: collectionID, since: time)
        return UndoPlan(versions: versions, since: time, author: author, includeConflicts: includeConflicts)
    }

    /// The kept version `seq` of the card `name` and the card's ETag now (nil: deleted), or
    /// the refusal: a version pruned meanwhile, a card changed since a page showed it with
    /// `shownETag`, a deletion, the version the card already is.
    public static func versionToRestore(collectionID: Int64, name: String, seq: Int64, shownETag: String? = nil,
                                        history: any CardHistoryStore) async throws -> (version: CardVersion, current: String?) {
        let versions = try await history.cardVersions(collectionID: collectionID, name: name)
        guard let version = versions.first(where: { $0.seq == seq }) else {
            throw RestoreError("This version of \(name) is no longer kept (it was pruned meanwhile). Nothing changed.")
        }
        guard !version.isDeletion else { throw RestoreError("This version is the card's deletion: there is nothing to restore.") }
        let current = versions.last?.etag
        if let shownETag, shownETag != current {
            throw RestoreError("This contact was changed on another device since you opened it; nothing was restored. "
                               + "Open it again to see the change.")
        }
        guard version.seq != versions.last?.seq, version.etag != current else {
            throw RestoreError("This version is the card as it is now: there is nothing to restore.")
        }
        return (version, current)
    }
}
