import Foundation
import RoloStore

/// Locks in a dictionary, decided by the same `WriteLock.refusal` the real stores use (the
/// actor makes each grant atomic); one process, so nothing to hear from and every lease.
extension InMemoryStore {
    func writeLocks(covering key: String, descendants: Bool, now: Date) async throws -> [WriteLock] {
        heldLocks.values.filter { $0.expires >= now && $0.applies(to: key, descendants: descendants) }.sorted { $0.token < $1.token }
    }

    func grantWriteLock(_ lock: WriteLock, maxPerUser: Int, now: Date) async throws -> WriteLockRefusal? {
        heldLocks = heldLocks.filter { $0.value.expires >= now }
        let home = WriteLock.home(of: lock.root)
        if let refusal = WriteLock.refusal(for: lock, among: heldLocks.values.filter { WriteLock.home(of: $0.root) == home },
                                           held: heldLocks.values.count { $0.user == lock.user }, maxPerUser: maxPerUser) {
            return refusal
        }
        heldLocks[lock.token] = lock
        return nil
    }

    func refreshWriteLock(token: String, key: String, timeout: Int, now: Date) async throws -> WriteLock? {
        guard var lock = heldLocks[token], lock.expires >= now, lock.covers(key) else { return nil }
        lock.timeout = timeout
        lock.expires = now.addingTimeInterval(TimeInterval(timeout))
        heldLocks[token] = lock
        return lock
    }

    func removeWriteLock(token: String, key: String, now: Date) async throws -> Bool {
        guard let lock = heldLocks[token], lock.expires >= now, lock.covers(key) else { return false }
        heldLocks[token] = nil
        return true
    }

    func removeWriteLocks(under key: String) async throws {
        heldLocks = heldLocks.filter { !($0.value.root == key || $0.value.root.hasPrefix(key + "/")) }
    }

    func removeAllWriteLocks() async throws { heldLocks = [:] }

    func recordLoginFailure(subnet: String, account: String, window: TimeInterval, now: Date) async throws -> LoginFailureCounts {
        loginFailures = loginFailures.filter { $0.value.last >= now.addingTimeInterval(-window) }
        for key in ["subnet:" + subnet, "account:" + account] {
            loginFailures[key] = (count: (loginFailures[key]?.count ?? 0) + 1, last: now)
        }
        return LoginFailureCounts(subnet: loginFailures["subnet:" + subnet]!.count, account: loginFailures["account:" + account]!.count)
    }

    func forgetLoginFailures(subnet: String) async throws { loginFailures["subnet:" + subnet] = nil }

    func claimPushDelivery(registrationID: String, seq: Int64) async throws -> Bool { true }

    nonisolated func followBookChanges() async {}

    func withMaintenanceLease(_ name: String, _ body: @escaping @Sendable () async throws -> Void) async throws -> Bool {
        try await body()
        return true
    }
}
