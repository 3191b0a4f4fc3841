import Foundation
import RoloStore
import WebPush

/// WebDAV-Push as the protocol engine offers it (`DAVConfiguration.push`; nil: push is
/// off and nothing about it is advertised). The server fills it in when it knows its
/// public URL, which registration URLs are built from.
public struct DAVPushConfiguration: Sendable {
    /// The server's VAPID public key, base64url (87 characters): `transports` advertises
    /// it, and DAVx5 registers only with a server that does.
    public var vapidPublicKey: String
    /// `scheme://host[:port]` of the public URL: registration URLs (`Location`) are
    /// absolute, because DAVx5 DELETEs exactly the string it was given.
    public var publicOrigin: String
    /// Which push resources may be registered (the server will POST to them).
    public var targets: PushTarget.Policy
    /// Live registrations one user may hold on one book: a client cannot make the server
    /// fan out without bound.
    public var registrationsPerBook: Int
    /// Granted lifetime: the requested one within `[minimumExpiry, maximumExpiry]`, and
    /// `defaultExpiry` when none (or an unparsable or past one) was asked for. DAVx5 asks
    /// for 3 days and renews when less than 2 are left, so less than about 1.5 days would
    /// make it renew on every daily run.
    public var defaultExpiry: TimeInterval
    public var minimumExpiry: TimeInterval
    public var maximumExpiry: TimeInterval
    /// The store's clock, so that granted expiries and the store's "expired" agree (a
    /// test server may live in another year).
    public var clock: StoreClock

    public init(vapidPublicKey: String, publicOrigin: String, targets: PushTarget.Policy = PushTarget.Policy(),
                registrationsPerBook: Int = 20, defaultExpiry: TimeInterval = 3 * 86_400,
                minimumExpiry: TimeInterval = 36 * 3600, maximumExpiry: TimeInterval = 7 * 86_400,
                clock: StoreClock = .system) {
        self.vapidPublicKey = vapidPublicKey; self.publicOrigin = publicOrigin; self.targets = targets
        self.clock = clock
        self.registrationsPerBook = max(registrationsPerBook, 1)
        self.defaultExpiry = defaultExpiry; self.minimumExpiry = minimumExpiry; self.maximumExpiry = maximumExpiry
    }

    /// The expiry granted for a requested one, at `now`.
    func grantedExpiry(requested: Date?, now: Date) -> Date {
        guard let requested, requested > now else { return now.addingTimeInterval(defaultExpiry) }
        let lifetime = min(max(requested.timeIntervalSince(now), minimumExpiry), maximumExpiry)
        return now.addingTimeInterval(lifetime)
    }
}
