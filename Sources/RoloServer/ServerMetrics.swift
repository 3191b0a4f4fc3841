import Synchronization

/// Request counters and a latency histogram, exposed at `GET /metrics` in the Prometheus
/// text format (written by hand: a dozen lines do not need a metrics library).
final class ServerMetrics: Sendable {
    private struct State {
        var requests: [Key: Int] = [:]
        var bucketCounts: [Int]
        var latencyCount = 0
        var latencySum = 0.0
    }

    private struct Key: Hashable, Comparable {
        var method: String
        var status: Int
        static func < (a: Key, b: Key) -> Bool { (a.method, a.status) < (b.method, b.status) }
    }

    /// Upper bounds of the latency buckets, in seconds.
    static let bucketBounds: [Double] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    private let state = Mutex(State(bucketCounts: Array(repeating: 0, count: ServerMetrics.bucketBounds.count)))

    func record(method: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests[Key(method: method, status: status), default: 0] += 1
            state.latencyCount += 1
            state.latencySum += seconds
            for (index, bound) in Self.bucketBounds.enumerated() where seconds <= bound {
                state.bucketCounts[index] += 1
            }
        }
    }

    /// The Prometheus text exposition (version 0.0.4).
    func exposition() -> String {
        let snapshot = state.withLock { $0 }
        var lines = [
            "# HELP rolo_http_requests_total HTTP requests answered, by method and status.",
            "# TYPE rolo_http_requests_total counter",
        ]
        for (key, count) in snapshot.requests.sorted(by: { $0.key < $1.key }) {
            lines.append(#"rolo_http_requests_total{method="\#(key.method)",status="\#(key.status)"} \#(count)"#)
        }
        lines += [
            "# HELP rolo_http_request_duration_seconds Time from request head to response.",
            "# TYPE rolo_http_request_duration_seconds histogram",
        ]
        for (bound, count) in zip(Self.bucketBounds, snapshot.bucketCounts) {
            lines.append(#"rolo_http_request_duration_seconds_bucket{le="\#(bound)"} \#(count)"#)
        }
        lines.append(#"rolo_http_request_duration_seconds_bucket{le="+Inf"} \#(snapshot.latencyCount)"#)
        lines.append("rolo_http_request_duration_seconds_sum \(snapshot.latencySum)")
        lines.append("rolo_http_request_duration_seconds_count \(snapshot.latencyCount)")
        return lines.joined(separator: "\n") + "\n"
    }
}
