/// Everything the test-control API changes at run time (fault rules, the request log,
/// named marks), in one actor so concurrent requests claim a rule's countdown exactly once
/// and the log keeps arrival order.
actor TestControlState {
    private var rules: [FaultRule] = []
    private var nextRuleID = 1
    private var log: RequestLog
    /// The `seq` given to the latest arrived request.
    private var lastSeq = 0
    private var marks: [String: Int] = [:]
    /// A reset or fixture load is running (they must not interleave).
    private var changingStore = false

    init(logCapacity: Int) {
        log = RequestLog(capacity: logCapacity)
    }

    // MARK: Requests

    /// Numbers an arriving request and claims the first rule (in creation order) that
    /// matches it, counting that rule down and removing it at zero.
    func arrive(method: String, path: String, carriesSyncToken: Bool) -> (seq: Int, fault: FaultRuleSpec?) {
        lastSeq += 1
        guard let index = rules.firstIndex(where: {
            $0.matches(method: method, path: path, carriesSyncToken: carriesSyncToken)
        }) else { return (lastSeq, nil) }
        rules[index].remaining -= 1
        let claimed = rules[index].listing
        if rules[index].remaining == 0 { rules.remove(at: index) }
        return (lastSeq, claimed)
    }

    /// Whether an `expire-sync-token` rule could apply to a REPORT on `path`: only then is
    /// the body read early to see whether it carries a token.
    func expectsSyncToken(path: String) -> Bool {
        rules.contains { $0.spec.fault == .expireSyncToken && $0.matches(method: "REPORT", path: path, carriesSyncToken: true) }
    }

    func record(_ entry: RecordedRequest) {
        log.append(entry)
    }

    // MARK: Fault rules

    func addRule(_ spec: FaultRuleSpec) throws(TestAPIError) -> FaultRuleSpec {
        let rule = try FaultRule(id: nextRuleID, spec: spec)
        nextRuleID += 1
        rules.append(rule)
        return rule.listing
    }

    func listRules() -> [FaultRuleSpec] {
        rules.map(\.listing)
    }

    /// Removes the rule `id`, or every rule when nil; returns how many went.
    func removeRules(id: Int?) -> Int {
        let before = rules.count
        rules.removeAll { id == nil || $0.id == id }
        return before - rules.count
    }

    // MARK: Resets and fixture loads

    /// Claims the right to reset or load fixtures; false while another one runs.
    func beginStoreChange() -> Bool {
        guard !changingStore else { return false }
        changingStore = true
        return true
    }

    func endStoreChange() {
        changingStore = false
    }

    // MARK: Marks and the log

    /// The current position in the request sequence, remembered under `name` when given.
    func mark(name: String?) -> Int {
        if let name { marks[name] = lastSeq }
        return lastSeq
    }

    /// The position a mark names: a number, or a name given to `mark(name:)`.
    func position(of mark: String) throws(TestAPIError) -> Int {
        if let number = Int(mark), number >= 0 { return number }
        guard let position = marks[mark] else { throw .notFound("no mark named \(mark)") }
        return position
    }

    func requests(after position: Int) -> (entries: [RecordedRequest], complete: Bool) {
        log.entries(after: position)
    }

    /// Back to the start state: no rules, no marks, an empty log (the sequence continues,
    /// so marks taken before stay meaningful).
    func clear() {
        rules.removeAll()
        marks.removeAll()
        log.removeAll()
    }
}
