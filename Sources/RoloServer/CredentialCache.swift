import Crypto
import Foundation
import Synchronization

/// Remembers recently verified user/password pairs so a client syncing hundreds of cards
/// pays for bcrypt once, not once per request. Only a SHA-256 of the pair is kept, never
/// the password; entries expire after `lifetime`.
final class CredentialCache: Sendable {
    private let lifetime: Duration
    private let entries = Mutex<[Data: ContinuousClock.Instant]>([:])
    private let capacity = 10_000

    init(lifetime: Duration) {
        self.lifetime = lifetime
    }

    func contains(user: String, password: String, now: ContinuousClock.Instant = .now) -> Bool {
        let key = Self.key(user: user, password: password)
        return entries.withLock { entries in
            guard let expiry = entries[key] else { return false }
            if expiry <= now {
                entries[key] = nil
                return false
            }
            return true
        }
    }

    func insert(user: String, password: String, now: ContinuousClock.Instant = .now) {
        guard lifetime > .zero else { return }
        let key = Self.key(user: user, password: password)
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value > now }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = now + lifetime
        }
    }

    /// Forgets every verified pair (a test-control reset, after which users may differ).
    func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    private static func key(user: String, password: String) -> Data {
        var hasher = SHA256()
        hasher.update(data: Data(user.utf8))
        hasher.update(data: [0])
        hasher.update(data: Data(password.utf8))
        return Data(hasher.finalize())
    }
}
