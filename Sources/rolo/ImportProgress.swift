import Foundation

/// Progress of `rolo import` on stderr: a bar redrawn in place on a terminal, plain
/// "n/total" lines every `lineInterval` cards otherwise (logs and pipes get no `\r` noise).
struct ImportProgress {
    let total: Int
    let isTerminal: Bool
    let lineInterval: Int
    private var lastDrawnPercent = -1

    init(total: Int, isTerminal: Bool = isatty(STDERR_FILENO) == 1, lineInterval: Int = 1000) {
        self.total = total
        self.isTerminal = isTerminal
        self.lineInterval = lineInterval
    }

    mutating func update(done: Int) {
        guard total > 0 else { return }
        if isTerminal {
            let percent = done * 100 / total
            guard percent != lastDrawnPercent || done == total else { return }
            lastDrawnPercent = percent
            let width = 30, filled = done * width / total
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            Self.write("\r[\(bar)] \(percent)% \(done)/\(total)" + (done == total ? "\n" : ""))
        } else if done % lineInterval == 0 || done == total {
            Self.write("progress: \(done)/\(total) cards\n")
        }
    }

    private static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
