import Authorization
import Crypto
import DAV
import Foundation
import Synchronization

/// Remembers recently verified `Authorization` headers so a client syncing hundreds of cards
/// pays for bcrypt once, not once per request. Keyed on a SHA-256 of the header exactly as
/// sent, so a repeat request is recognised without decoding it; only that digest and the
/// credential (user, account password) are kept, never the password. Entries expire after
/// `lifetime`. An entry also keeps the account's password stamp
/// (`AccountStore.accountPasswordStamp`) as it was before the password was checked, and a hit
/// counts only while the store still gives the same one: a read of one row instead of
/// bcrypt, so that deleting or disabling the user, a new password or "app passwords only",
/// made by any process on the database, ends the login on its next request (on PostgreSQL,
/// a GET answered from the card cache has the stamp from there: current once the change's
/// notice arrived, `CardCache`). App passwords
/// are not cached: they are checked on every request (a keyed hash and one row), so that
/// revoking one takes effect on its next request.
final class CredentialCache: Sendable {
    private struct Entry: Sendable {
        var credential: Credential
        var stamp: String
        var expiry: ContinuousClock.Instant
    }

    /// The 32 bytes of a SHA-256 digest (the digest type itself is not Sendable).
    private struct Key: Hashable, Sendable {
        var words: (UInt64, UInt64, UInt64, UInt64)

        init(_ digest: SHA256Digest) {
            words = digest.withUnsafeBytes { bytes in
                (bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                 bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                 bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
                 bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
            }
        }

        static func == (lhs: Key, rhs: Key) -> Bool { lhs.words == rhs.words }

        func hash(into hasher: inout Hasher) {
            hasher.combine(words.0); hasher.combine(words.1); hasher.combine(words.2); hasher.combine(words.3)
        }
    }

    private let lifetime: Duration
    private let entries = Mutex<[Key: Entry]>([:])
    private let capacity = 10_000
    /// Whether a directory still vouches for a user an app password names (`stillInSource`),
    /// with when that answer expires: the same `lifetime` bounds how long a user removed from
    /// the directory keeps signing in.
    private let presence = Mutex<[String: (present: Bool, expiry: ContinuousClock.Instant)]>([:])

    init(lifetime: Duration) {
        self.lifetime = lifetime
    }

    /// The credential `authorization` carried when it was last verified, if that was less
    /// than `lifetime` ago, with the account's password stamp then. The caller compares the
    /// stamp with the store's before it trusts the credential (`remove` when they differ).
    func entry(authorization: String, now: ContinuousClock.Instant = .now) -> (credential: Credential, stamp: String)? {
        let key = Self.key(authorization)
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            if entry.expiry <= now {
                entries[key] = nil
                return nil
            }
            return (entry.credential, entry.stamp)
        }
    }

    /// The credential of a cached `authorization` whose stamp `currentStamp` (the store's,
    /// read now) still matches; nil, and the entry forgotten, when it does not.
    func credential(authorization: String, currentStamp: (String) throws -> String?,
                    now: ContinuousClock.Instant = .now) rethrows -> Credential? {
        guard let (credential, stamp) = entry(authorization: authorization, now: now) else { return nil }
        guard try currentStamp(credential.user) == stamp else {
            remove(authorization: authorization)
            return nil
        }
        return credential
    }

    func remove(authorization: String) {
        let key = Self.key(authorization)
        entries.withLock { $0[key] = nil }
    }

    func insert(authorization: String, credential: Credential, stamp: String, now: ContinuousClock.Instant = .now) {
        guard lifetime > .zero else { return }
        let key = Self.key(authorization)
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value.expiry > now }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = Entry(credential: credential, stamp: stamp, expiry: now + lifetime)
        }
    }

    /// Forgets every verified header (a test-control reset, after which users may differ).
    func removeAll() {
        entries.withLock { $0.removeAll() }
        presence.withLock { $0.removeAll() }
    }

    /// The remembered answer to "does the user's source still vouch for them", if fresh.
    func presence(of user: String, now: ContinuousClock.Instant = .now) -> Bool? {
        presence.withLock { known in
            guard let entry = known[user] else { return nil }
            if entry.expiry <= now {
                known[user] = nil
                return nil
            }
            return entry.present
        }
    }

    func notePresence(_ present: Bool, of user: String, now: ContinuousClock.Instant = .now) {
        guard lifetime > .zero else { return }
        presence.withLock { known in
            if known.count >= capacity { known = known.filter { $0.value.expiry > now } }
            if known.count >= capacity { known.removeAll(keepingCapacity: true) }
            known[user] = (present, now + lifetime)
        }
    }

    private static func key(_ authorization: String) -> Key {
        var header = authorization
        return Key(header.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) })
    }
}
