import Foundation
import Logging
import RoloServer
import Synchronization

/// A logger whose lines (the server's own JSON format) are kept for a test to read.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    /// Logs at `level` and above into this capture, as `rolo serve --log-format json` would.
    func logger(level: Logger.Level = .notice) -> Logger {
        Logger(label: "rolo") { label in
            JSONLogHandler(label: label, logLevel: level) { [self] line in lines.withLock { $0.append(line) } }
        }
    }

    /// Every record written so far, parsed.
    var records: [[String: Any]] {
        lines.withLock { $0 }.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The messages of the records written so far that start with `prefix`.
    func messages(startingWith prefix: String) -> [String] {
        records.compactMap { $0["message"] as? String }.filter { $0.hasPrefix(prefix) }
    }
}
