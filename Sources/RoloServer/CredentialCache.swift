import Authorization
import Crypto
import DAV
import Foundation
import Synchronization

/// Remembers recently verified `Authorization` headers so a client syncing hundreds of cards
/// pays for bcrypt once, not once per request. Keyed on a SHA-256 of the header exactly as
/// sent, so a repeat request is recognised without decoding it; only that digest and the
/// credential (user, account password) are kept, never the password. Entries expire after
/// `lifetime`. App passwords are not cached: they are checked on every request (a keyed
/// hash and one row), so that revoking one takes effect on its next request.
final class CredentialCache: Sendable {
    private struct Entry: Sendable {
        var credential: Credential
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

    init(lifetime: Duration) {
        self.lifetime = lifetime
    }

    /// The credential `authorization` carried when it was last verified, if that was less
    /// than `lifetime` ago.
    func credential(authorization: String, now: ContinuousClock.Instant = .now) -> Credential? {
        let key = Self.key(authorization)
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            if entry.expiry <= now {
                entries[key] = nil
                return nil
            }
            return entry.credential
        }
    }

    func insert(authorization: String, credential: Credential, now: ContinuousClock.Instant = .now) {
        guard lifetime > .zero else { return }
        let key = Self.key(authorization)
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value.expiry > now }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = Entry(credential: credential, expiry: now + lifetime)
        }
    }

    /// Forgets every verified header (a test-control reset, after which users may differ).
    func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    private static func key(_ authorization: String) -> Key {
        var header = authorization
        return Key(header.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) })
    }
}
