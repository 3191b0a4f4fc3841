import Logging

/// What every answered request leaves behind: its metrics (a count by method and status,
/// the latency) and, at `info`, one access-log line. `RoloResponder` and `InlineGetHandler`
/// both record through it, so a request is counted and logged the same whichever answered it.
struct AccessLog: Sendable {
    let metrics: ServerMetrics
    let logger: Logger

    /// `path` as the client sent it; `remote` is worked out only when a line is written.
    func record(method: String, path: String, status: Int, since started: ContinuousClock.Instant,
                user: String, remote: () -> String) {
        let elapsed = ContinuousClock.now - started
        metrics.record(method: method, status: status, duration: elapsed)
        // Formatting costs more than a cached GET: only when the line is written.
        guard logger.logLevel <= .info else { return }
        let milliseconds = Self.millisecondsText(elapsed)
        logger.info("\(method) \(path) \(status) \(milliseconds)ms",
                    metadata: ["method": .string(method), "path": .string(path),
                               "status": .stringConvertible(status), "duration_ms": .string(milliseconds),
                               "user": .string(user), "remote": .string(remote())])
    }

    /// "12.3": the duration in milliseconds with one decimal, without Foundation's formatter.
    static func millisecondsText(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = seconds * 10_000 + (attoseconds + 50_000_000_000_000) / 100_000_000_000_000
        return "\(tenths / 10).\(tenths % 10)"
    }
}
