import Authorization
import Foundation
import RoloStore

/// The console's account actions (shares, app passwords, users, history) are asked of
/// `Access` like every front end's; the console may take them all, since it holds the database.
func authorize(_ action: AccountAction) throws {
    do {
        try Access.require(action, by: .console)
    } catch {
        throw CLIError(error.message)
    }
}

extension CLIError {
    /// A `StoreError` as the one line the admin sees; other errors pass through unchanged.
    /// `notFound` and `noSuchUser` are the whole message for those cases; the store's
    /// reason for `invalid` follows `refused` ("Cannot share alice/family: <reason>.").
    static func from(_ error: any Error, notFound: String, noSuchUser: String = "No such user.",
                     refused: String = "Refused") -> any Error {
        guard let storeError = error as? StoreError else { return error }
        switch storeError {
        case .notFound: return CLIError(notFound)
        case .noSuchUser: return CLIError(noSuchUser)
        case .invalid(let reason): return CLIError("\(refused): \(reason)\(reason.hasSuffix(".") ? "" : ".")")
        case .invalidName(let reason): return CLIError("Invalid name: \(reason)")
        default: return CLIError("\(refused): \(storeError).")
        }
    }
}

/// `AccountRules.checkPassword`, refused in the admin's words: "Password refused: a password
/// needs at least 8 characters."
func checkNewPassword(_ password: String) throws {
    do {
        try AccountRules.checkPassword(password)
    } catch {
        throw CLIError.from(error, notFound: "", refused: "Password refused")
    }
}

extension RoloStore {
    /// Throws "No user NAME." when there is none: checked first so the message names who.
    func requireUser(_ name: String) async throws {
        guard try await account(name: name) != nil else { throw CLIError("No user \(name).") }
    }
}

/// Plain-text columns: a header and rows padded to the widest cell, two spaces apart.
struct TextTable {
    enum Alignment { case left, right }
    var columns: [(title: String, alignment: Alignment)]
    var rows: [[String]] = []

    init(_ columns: [(String, Alignment)]) { self.columns = columns.map { (title: $0.0, alignment: $0.1) } }

    mutating func add(_ row: [String]) { rows.append(row) }

    /// The lines, each prefixed with `indent`, trailing blanks trimmed.
    func lines(indent: String = "") -> [String] {
        let all = [columns.map(\.title)] + rows
        let widths = columns.indices.map { index in all.map { $0[index].count }.max() ?? 0 }
        return all.map { row in
            let cells = columns.indices.map { index -> String in
                let cell = row[index], padding = String(repeating: " ", count: widths[index] - cell.count)
                return columns[index].alignment == .right ? padding + cell : cell + padding
            }
            var line = indent + cells.joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}

/// Times as the admin commands print them: UTC, to the minute.
enum CLIDate {
    static func minute(_ date: Date) -> String {
        date.formatted(Date.VerbatimFormatStyle(
            format: "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits)Z",
            timeZone: .gmt, calendar: Calendar(identifier: .gregorian)))
    }

    static func day(_ date: Date) -> String {
        date.formatted(Date.VerbatimFormatStyle(
            format: "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits)",
            timeZone: .gmt, calendar: Calendar(identifier: .gregorian)))
    }

    /// `YYYY-MM-DD` (midnight UTC) or an ISO 8601 date-time (`2026-11-24T10:00:00Z`,
    /// `…+01:00`, fractional seconds allowed; without a zone it is UTC). Nil otherwise.
    static func parse(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if text.utf8.count == 10 {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withFullDate]
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.date(from: text)
        }
        var candidates = [text]
        // No zone designator after the time: read it as UTC.
        if let timeStart = text.firstIndex(where: { $0 == "T" || $0 == "t" || $0 == " " }) {
            let time = text[text.index(after: timeStart)...]
            if !time.contains(where: { $0 == "Z" || $0 == "z" || $0 == "+" || $0 == "-" }) { candidates.append(text + "Z") }
            if text[timeStart] != "T" {
                candidates += candidates.map { $0.replacingCharacters(in: timeStart...timeStart, with: "T") }
            }
        }
        for candidate in candidates {
            for options: ISO8601DateFormatter.Options in [[.withInternetDateTime],
                                                          [.withInternetDateTime, .withFractionalSeconds]] {
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = options
                if let date = formatter.date(from: candidate.uppercased()) { return date }
            }
        }
        return nil
    }
}
