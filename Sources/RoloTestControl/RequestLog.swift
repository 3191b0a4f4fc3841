/// One request the server answered, as `GET /_rolo/requests` lists it: enough for a
/// harness to assert what a client sent (and in which order) without the server keeping
/// bodies or credentials.
struct RecordedRequest: Sendable, Codable, Equatable {
    /// Arrival order, counted from 1 over the server's life; marks are such numbers.
    var seq: Int
    var method: String
    /// Percent-decoded path, without the query string (what fault patterns match).
    var path: String
    /// The headers named in `RequestLog.recordedHeaders` that the request carried,
    /// names lower-cased.
    var headers: [String: String]
    /// SHA-256 (hex) and length of the body, or nil when the server answered without
    /// reading it (for example 401 before the body arrived).
    var bodySHA256: String?
    var bodyLength: Int?
    var status: Int
    var durationMilliseconds: Double
    /// The Basic user name the server accepted, nil when there was none or it was refused.
    var user: String?
    /// The id of the fault rule applied to this request, if any.
    var fault: Int?
}

/// A bounded ring of recorded requests: the newest `capacity` are kept, and a listing says
/// whether requests after the asked-for mark have already been dropped.
struct RequestLog: Sendable {
    /// Header names worth asserting on; never Authorization or cookies.
    static let recordedHeaders: [String] = [
        "accept", "brief", "content-length", "content-type", "depth", "destination", "expect", "if",
        "if-match", "if-none-match", "lock-token", "overwrite", "prefer", "timeout", "user-agent",
    ]

    let capacity: Int
    private var entries: [RecordedRequest] = []
    /// Index of the oldest entry once the ring is full.
    private var start = 0
    /// Highest `seq` that fell out of the ring (0: nothing dropped).
    private(set) var highestDroppedSeq = 0

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        entries.reserveCapacity(min(capacity, 1024))
    }

    mutating func append(_ entry: RecordedRequest) {
        if entries.count < capacity {
            entries.append(entry)
        } else {
            highestDroppedSeq = max(highestDroppedSeq, entries[start].seq)
            entries[start] = entry
            start = (start + 1) % capacity
        }
    }

    /// Entries with `seq` above `mark`, in arrival order, and whether that list is complete.
    func entries(after mark: Int) -> (entries: [RecordedRequest], complete: Bool) {
        let selected = entries.filter { $0.seq > mark }.sorted { $0.seq < $1.seq }
        return (selected, highestDroppedSeq <= mark)
    }

    /// Forgets every entry (a reset), without counting them as dropped.
    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        start = 0
    }
}
