import Foundation
import Prometheus
import RoloPush
import RoloStore
import Synchronization

/// What `GET /metrics` exposes, in the Prometheus text format through swift-prometheus's
/// registry: requests by method and status, a latency histogram, and gauges of what the
/// store holds (read at scrape time: three COUNTs and a file size, so nothing runs between
/// scrapes).
final class ServerMetrics: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let latency: DurationHistogram
    private let users: Gauge
    private let addressBooks: Gauge
    private let cards: Gauge
    private let databaseBytes: Gauge
    /// Push messages by outcome: sent (2xx), failed (kept for a retry), dropped (registration deleted).
    private let pushCounters: [PushEvent: Counter]
    private let store: any RoloStore
    /// The request counters already made, by method label and status: the registry's own
    /// lookup validates names and labels and builds strings on every call, which cost more
    /// than a cached GET.
    private let requestCounters = Mutex<[RequestKey: Counter]>([:])

    private struct RequestKey: Hashable {
        var method: String
        var status: Int
    }

    /// Methods counted under their own name; anything else is "other", so a client
    /// inventing method names cannot grow the label set without bound.
    static let countedMethods: Set<String> = [
        "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "PROPFIND", "PROPPATCH", "MKCOL", "REPORT",
        "COPY", "MOVE", "LOCK", "UNLOCK", "POST",
    ]

    /// Upper bounds of the latency buckets.
    static let latencyBuckets: [Duration] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
        .map { Duration.milliseconds(Int64($0 * 1000)) }

    /// Computed: the descriptor type is not Sendable, so it cannot be a stored static.
    static var requestsDescriptor: MetricNameDescriptor {
        MetricNameDescriptor(namespace: "rolo", subsystem: "http", metricName: "requests", unitName: "total",
                             helpText: "HTTP requests answered, by method and status.")
    }

    init(store: any RoloStore) {
        self.store = store
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        latency = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(namespace: "rolo", subsystem: "http", metricName: "request_duration",
                                             unitName: "seconds", helpText: "Time from request head to response."),
            buckets: Self.latencyBuckets)
        func gauge(_ name: String, unit: String = "", _ help: String) -> Gauge {
            registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "rolo", metricName: name, unitName: unit,
                                                                helpText: help))
        }
        users = gauge("users", "User accounts.")
        addressBooks = gauge("address_books", "Address books of all users.")
        cards = gauge("cards", "Cards stored in address books.")
        databaseBytes = gauge("database_size", unit: "bytes", "The database's size in bytes: the SQLite file plus its write-ahead log, or PostgreSQL's pg_database_size.")
        let pushDescriptor = MetricNameDescriptor(namespace: "rolo", subsystem: "push", metricName: "messages",
                                                  unitName: "total", helpText: "WebDAV-Push deliveries, by outcome.")
        pushCounters = Dictionary(uniqueKeysWithValues: [PushEvent.sent, .failed, .dropped].map { event in
            (event, registry.makeCounter(descriptor: pushDescriptor, labels: [("outcome", event.rawValue)]))
        })
    }

    func record(push event: PushEvent) { pushCounters[event]?.increment() }

    func record(method: String, status: Int, duration: Duration) {
        let key = RequestKey(method: Self.countedMethods.contains(method) ? method : "other", status: status)
        let counter = requestCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = registry.makeCounter(descriptor: Self.requestsDescriptor,
                                               labels: [("method", key.method), ("status", String(status))])
            counters[key] = counter
            return counter
        }
        counter.increment()
        latency.record(duration)
    }

    /// The text exposition, with the store gauges refreshed first.
    func exposition() async -> String {
        if let statistics = try? await store.statistics() {
            users.set(Double(statistics.users))
            addressBooks.set(Double(statistics.addressBooks))
            cards.set(Double(statistics.cards))
            databaseBytes.set(Double(statistics.databaseBytes ?? 0))
        }
        return registry.emitToString()
    }

}
