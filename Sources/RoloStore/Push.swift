import Foundation

// WebDAV-Push (draft-bitfire-webdav-push): what the store keeps for it. A registration is a
// client's request to be told when a book changes; the store also hands out, after each
// committed change, which books changed (`BookChangeFeed`), so that delivery never runs on
// a request's path and never announces a change a reader cannot see yet.

/// A push subscription as the store keeps it. `id` is random and is the last segment of
/// the registration URL the client DELETEs.
public struct PushRegistration: Sendable, Hashable {
    public var id: String
    public var user: String
    public var collectionID: Int64
    /// The app password that registered it (0: the account password). Revoking it drops
    /// the registration.
    public var credentialID: Int64
    /// The push service's URL for this device (chosen by the client; checked before use).
    public var pushResource: String
    /// The device's P-256 key (65 bytes, uncompressed) and auth secret (16 bytes), RFC 8291.
    public var publicKey: Data
    public var authSecret: Data
    public var expires: Date
    public var created: Date
    public var lastSuccess: Date?
    /// Failed deliveries since the last success, and when the first of them happened:
    /// the notifier drops a registration whose push service fails for days.
    public var failures: Int
    public var firstFailure: Date?
    /// Not before this time (429 and 5xx back-off).
    public var retryAfter: Date?

    public init(id: String, user: String, collectionID: Int64, credentialID: Int64, pushResource: String,
                publicKey: Data, authSecret: Data, expires: Date, created: Date, lastSuccess: Date? = nil,
                failures: Int = 0, firstFailure: Date? = nil, retryAfter: Date? = nil) {
        self.id = id; self.user = user; self.collectionID = collectionID; self.credentialID = credentialID
        self.pushResource = pushResource; self.publicKey = publicKey; self.authSecret = authSecret
        self.expires = expires; self.created = created; self.lastSuccess = lastSuccess
        self.failures = failures; self.firstFailure = firstFailure; self.retryAfter = retryAfter
    }
}

/// What a client asks for in `push-register`, already validated by the DAV layer.
public struct PushRegistrationRequest: Sendable, Hashable {
    public var user: String
    public var collectionID: Int64
    public var credentialID: Int64
    public var pushResource: String
    public var publicKey: Data
    public var authSecret: Data
    public var expires: Date
    public init(user: String, collectionID: Int64, credentialID: Int64, pushResource: String,
                publicKey: Data, authSecret: Data, expires: Date) {
        self.user = user; self.collectionID = collectionID; self.credentialID = credentialID
        self.pushResource = pushResource; self.publicKey = publicKey; self.authSecret = authSecret; self.expires = expires
    }
}

/// How one delivery attempt went, as the store records it.
public enum PushOutcome: Sendable, Hashable {
    case delivered
    /// Counted as a failure; no attempt before `retryAfter` (nil: at the next change).
    case failed(retryAfter: Date?)
    /// The push service said the subscription is gone (404/410), or failures lasted too
    /// long: the registration is deleted.
    case gone
}

/// The registrations a change should not notify: `Push-Dont-Notify` of the request that
/// made it. A client lists its own registration so that it is not woken for its own
/// write; only registrations of the writing user can be named.
public enum PushExclusion: Sendable, Hashable {
    case registrations(user: String, ids: Set<String>)
    /// `Push-Dont-Notify: *`: nobody is notified of this change.
    case everyone

    public static let nobody = PushExclusion.registrations(user: "", ids: [])

    /// Whether `registration` is left out.
    public func excludes(_ registration: PushRegistration) -> Bool {
        switch self {
        case .everyone: true
        case .registrations(let user, let ids): registration.user == user && ids.contains(registration.id)
        }
    }

    /// Two changes to one book told in one message: a registration is left out only when
    /// both changes leave it out.
    public func merged(with other: PushExclusion) -> PushExclusion {
        switch (self, other) {
        case (.everyone, _): return other
        case (_, .everyone): return self
        case (.registrations(let user, let ids), .registrations(let otherUser, let otherIDs)):
            return user == otherUser ? .registrations(user: user, ids: ids.intersection(otherIDs)) : .nobody
        }
    }

    /// Set by the DAV layer for the duration of a request that carries `Push-Dont-Notify`;
    /// the store reads it when it publishes the request's committed writes. A task local
    /// for the same reason as `ChangeAuthor`: it belongs to the request, not to each call.
    @TaskLocal public static var current: PushExclusion?
}

/// A book whose content changed, with the sync position after the change.
public struct BookChange: Sendable, Hashable {
    public var collectionID: Int64
    public var seq: Int64
    public var exclusion: PushExclusion
    public init(collectionID: Int64, seq: Int64, exclusion: PushExclusion = .nobody) {
        self.collectionID = collectionID; self.seq = seq; self.exclusion = exclusion
    }
}

/// Committed book changes for the push notifier. The store publishes after each commit;
/// the feed keeps only the latest change per book (merging exclusions), so a burst of a
/// thousand writes is one pending entry and memory stays bounded by the number of books.
/// Closed (the default) it drops everything: a server without push pays one branch.
public final class BookChangeFeed: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var pending: [Int64: BookChange] = [:]
    private var waiter: CheckedContinuation<Void, Never>?

    public init() {}

    /// Starts keeping changes (the notifier calls this before it starts taking them).
    public func open() { lock.withLock { isOpen = true } }

    /// Stops keeping changes and wakes a waiting `take()`.
    public func close() {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            isOpen = false
            pending = [:]
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume()
    }

    public func publish(_ change: BookChange) {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard isOpen else { return nil }
            if let earlier = pending[change.collectionID] {
                pending[change.collectionID] = BookChange(collectionID: change.collectionID,
                                                          seq: max(earlier.seq, change.seq),
                                                          exclusion: earlier.exclusion.merged(with: change.exclusion))
            } else {
                pending[change.collectionID] = change
            }
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume()
    }

    /// Publishes a committed write of the current task, with the task's `PushExclusion`.
    public func publish(collectionID: Int64, seq: Int64) {
        publish(BookChange(collectionID: collectionID, seq: seq, exclusion: PushExclusion.current ?? .nobody))
    }

    /// Everything pending, waiting until something is (or the task is cancelled, or the
    /// feed is closed: then possibly empty). One consumer at a time.
    public func take() async -> [BookChange] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock { () -> Bool in
                    if !pending.isEmpty || !isOpen || Task.isCancelled { return true }
                    waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            return lock.withLock {
                defer { pending = [:] }
                return Array(pending.values)
            }
        } onCancel: {
            let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                defer { waiter = nil }
                return waiter
            }
            waiting?.resume()
        }
    }
}
