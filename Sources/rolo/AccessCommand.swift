import ArgumentParser
import Authorization
import Foundation
import RoloStore

/// `rolo access USER`: what the user's credentials did, and what other users did on the
/// user's books, per hour (per day once older than the hourly retention). Counts only,
/// never which cards.
struct AccessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "access", abstract: "Show a user's access history: requests and cards per device and book.",
        discussion: """
            Rows are per hour (per UTC day once older than 30 days), newest first. CREDENTIAL is \
            the app password's name, "account password", or blank for another user on USER's \
            books (their devices are theirs to see). FULL DOWNLOAD marks an answer that carried a \
            whole book: an initial sync or an export. The server writes the history about once a \
            minute, so the last minute may be missing.
            """)
    @Argument(help: "User name.") var user: String
    @Option(help: "Start: YYYY-MM-DD (UTC) or an ISO 8601 date-time such as 2026-11-24T10:00:00Z (default: 30 days ago).")
    var since: String?
    @Flag(help: "Print a JSON array instead of tables.") var json = false
    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        try authorize(.seeAccessHistory(of: user))
        let start: Date
        if let since {
            guard let parsed = CLIDate.parse(since) else {
                throw CLIError("Invalid --since \(since): use YYYY-MM-DD or an ISO 8601 date-time such as 2026-11-24T10:00:00Z.")
            }
            start = parsed
        } else {
            start = Date(timeIntervalSinceNow: -30 * 86_400)
        }
        try await options.withStore { store in
            try await store.requireUser(user)
            var records: [AccessRecord]
            do {
                records = try await store.accessHistory(user: user, since: start)
            } catch {
                throw CLIError.from(error, notFound: "No user \(user).", noSuchUser: "No user \(user).")
            }
            // Newest period first; within one, the user's own rows, then other users', by name.
            records.sort { a, b in
                let keyA = (a.user == user ? 0 : 1, a.user, AccessJSON.credentialText(a) ?? "", AccessJSON.bookText(a))
                let keyB = (b.user == user ? 0 : 1, b.user, AccessJSON.credentialText(b) ?? "", AccessJSON.bookText(b))
                if a.start != b.start { return a.start > b.start }
                if a.period != b.period { return a.period == .hour }
                return keyA < keyB
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                // An empty array as `[]`, not the pretty printer's "[\n\n]".
                print(records.isEmpty ? "[]" : String(decoding: try encoder.encode(records.map(AccessJSON.init)), as: UTF8.self))
            } else {
                printTables(records, since: start)
            }
        }
    }

    private func printTables(_ records: [AccessRecord], since start: Date) {
        guard !records.isEmpty else {
            print("No access recorded for \(user) since \(CLIDate.minute(start)).")
            return
        }
        // Sorted newest first: group consecutive rows of one period.
        var groups: [(period: AccessRecord.Period, start: Date, rows: [AccessRecord])] = []
        for record in records {
            if let last = groups.last, last.period == record.period, last.start == record.start {
                groups[groups.count - 1].rows.append(record)
            } else {
                groups.append((record.period, record.start, [record]))
            }
        }
        for (index, group) in groups.enumerated() {
            if index > 0 { print("") }
            switch group.period {
            case .hour:
                print("\(CLIDate.minute(group.start)) (hour)")
            case .day:
                print("\(CLIDate.day(group.start)) (day)")
            }
            var table = TextTable([("USER", .left), ("CREDENTIAL", .left), ("BOOK", .left), ("REQUESTS", .right),
                                   ("READ", .right), ("WRITTEN", .right), ("DELETED", .right), ("", .left)])
            for row in group.rows {
                table.add([row.user, AccessJSON.credentialText(row) ?? "", AccessJSON.bookText(row),
                           "\(row.requests)", "\(row.cardsRead)", "\(row.cardsWritten)", "\(row.cardsDeleted)",
                           row.fullDownload ? "FULL DOWNLOAD" : ""])
            }
            table.lines(indent: "  ").forEach { print($0) }
        }
    }
}

/// One row of `rolo access --json`; the keys are a stable interface.
struct AccessJSON: Encodable {
    var record: AccessRecord

    init(_ record: AccessRecord) { self.record = record }

    enum CodingKeys: String, CodingKey {
        case period, start, user, credential, bookOwner = "book_owner", book, requests, cardsRead = "cards_read"
        case cardsWritten = "cards_written", cardsDeleted = "cards_deleted", fullDownload = "full_download"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(record.period.rawValue, forKey: .period)
        try container.encode(record.start.formatted(.iso8601), forKey: .start)
        try container.encode(record.user, forKey: .user)
        // Explicit nulls: every key is always present.
        try container.encode(Self.credentialText(record), forKey: .credential)
        try container.encode(record.bookOwner, forKey: .bookOwner)
        try container.encode(record.book, forKey: .book)
        try container.encode(record.requests, forKey: .requests)
        try container.encode(record.cardsRead, forKey: .cardsRead)
        try container.encode(record.cardsWritten, forKey: .cardsWritten)
        try container.encode(record.cardsDeleted, forKey: .cardsDeleted)
        try container.encode(record.fullDownload, forKey: .fullDownload)
    }

    /// The app password's name, "account password", or nil for another user's requests
    /// on the user's books (whose devices the owner does not see).
    static func credentialText(_ record: AccessRecord) -> String? {
        guard let id = record.credentialID else { return nil }
        if id == 0 { return "account password" }
        return record.credential ?? "app password #\(id)"
    }

    /// "alice/family", or "(home)" for requests that touched no book (discovery).
    static func bookText(_ record: AccessRecord) -> String {
        guard let book = record.book else { return "(home)" }
        return "\(record.bookOwner ?? "?")/\(book)"
    }
}
