/// What a fault rule does to a request it matches.
enum FaultKind: String, Sendable, Codable, CaseIterable {
    /// Answer `status` (with the optional body and headers) instead of handling the request.
    case status
    /// Wait `delayMilliseconds`, then handle the request normally.
    case delay
    /// Handle the request, send the response head, then close the connection halfway
    /// through the body (a client sees a truncated response).
    case dropConnection = "drop-connection"
    /// Answer a PUT with 412 as if another client had changed the card in between.
    case preconditionFailed = "precondition-failed"
    /// Answer a `sync-collection` REPORT that carries a non-empty sync token with 403
    /// `DAV:valid-sync-token`, so the client must sync again from scratch.
    case expireSyncToken = "expire-sync-token"

    /// The only method a kind makes sense for, if any.
    var requiredMethod: String? {
        switch self {
        case .preconditionFailed: "PUT"
        case .expireSyncToken: "REPORT"
        case .status, .delay, .dropConnection: nil
        }
    }
}

/// A fault rule as a harness posts it to `/_rolo/faults` (JSON), and as the API lists it
/// with its `id` and the number of matching requests it still applies to.
struct FaultRuleSpec: Sendable, Codable, Equatable {
    var id: Int?
    /// HTTP method to match (case-insensitive); absent or `*`: any method.
    var method: String?
    /// `PathPattern` to match; absent: any path.
    var path: String?
    /// How many matching requests the rule applies to before it disappears (default 1).
    var count: Int?
    /// Matching requests the rule still applies to (answers only).
    var remaining: Int?
    var fault: FaultKind
    /// `status`: the status code to answer (200-599).
    var status: Int?
    /// `status`: the response body (UTF-8 text), empty when absent.
    var body: String?
    /// `status`: the body's Content-Type (default `text/plain; charset=utf-8`).
    var contentType: String?
    /// `status`: extra response headers, e.g. `Retry-After`.
    var headers: [String: String]?
    /// `delay`: how long to wait before answering (0-120000).
    var delayMilliseconds: Int?
}

/// A validated rule: what `TestControl` matches requests against.
struct FaultRule: Sendable {
    let id: Int
    /// Upper-cased method, nil for any.
    let method: String?
    let path: PathPattern?
    var remaining: Int
    let spec: FaultRuleSpec

    static let maxCount = 1_000_000
    static let maxDelayMilliseconds = 120_000

    /// Checks `spec` and fills in defaults; throws a message for the harness on bad input.
    init(id: Int, spec: FaultRuleSpec) throws(TestAPIError) {
        var spec = spec
        var method = spec.method?.uppercased()
        if method == "*" || method == "" { method = nil }
        if let required = spec.fault.requiredMethod {
            guard method == nil || method == required else {
                throw .badRequest("fault \(spec.fault.rawValue) applies to \(required) requests only")
            }
            method = required
        }
        var pattern: PathPattern?
        if let path = spec.path {
            guard let parsed = PathPattern(path) else { throw .badRequest("path must start with /") }
            pattern = parsed
        }
        let count = spec.count ?? 1
        guard (1...Self.maxCount).contains(count) else {
            throw .badRequest("count must be between 1 and \(Self.maxCount)")
        }
        switch spec.fault {
        case .status:
            guard let status = spec.status, (200...599).contains(status) else {
                throw .badRequest("fault status needs a status between 200 and 599")
            }
            for (name, value) in spec.headers ?? [:] where !FaultResponses.isValidHeader(name: name, value: value) {
                throw .badRequest("invalid header \(name)")
            }
        case .delay:
            guard let delay = spec.delayMilliseconds, (0...Self.maxDelayMilliseconds).contains(delay) else {
                throw .badRequest("fault delay needs delayMilliseconds between 0 and \(Self.maxDelayMilliseconds)")
            }
        case .dropConnection, .preconditionFailed, .expireSyncToken:
            break
        }
        spec.id = id
        spec.method = method
        spec.count = count
        spec.remaining = count
        self.id = id
        self.method = method
        self.path = pattern
        self.remaining = count
        self.spec = spec
    }

    /// The rule as the API shows it, with the current `remaining`.
    var listing: FaultRuleSpec {
        var shown = spec
        shown.remaining = remaining
        return shown
    }

    /// Whether a request is one this rule applies to. An `expire-sync-token` rule applies
    /// only to sync-collection REPORTs that carry a token (`carriesSyncToken`).
    func matches(method requestMethod: String, path requestPath: String, carriesSyncToken: Bool) -> Bool {
        if let method, method != requestMethod { return false }
        if let path, !path.matches(requestPath) { return false }
        return spec.fault != .expireSyncToken || carriesSyncToken
    }
}
