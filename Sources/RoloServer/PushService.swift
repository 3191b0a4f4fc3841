import DAV
import Foundation
import Logging
import RoloPush
import RoloStore
import ServiceLifecycle
import WebPush

/// Push as an operator sets it up (`rolo serve --push…`). On by default: it takes effect
/// once the server knows its public URL, which registration URLs are built from.
public struct PushSettings: Sendable {
    public var enabled: Bool
    /// Tests only: lets `http://127.0.0.1` push services through the address check.
    public var allowLoopback: Bool
    /// When set, only push services at these origins (`https://host[:port]`) may be registered.
    public var allowedOrigins: [String]?
    /// The VAPID `sub` contact (`mailto:` or `https:`); the public URL when nil.
    public var subject: String?
    public var registrationsPerBook: Int
    public var notifier: PushNotifierSettings

    public init(enabled: Bool = true, allowLoopback: Bool = false, allowedOrigins: [String]? = nil,
                subject: String? = nil, registrationsPerBook: Int = 20, notifier: PushNotifierSettings = PushNotifierSettings()) {
        self.enabled = enabled; self.allowLoopback = allowLoopback; self.allowedOrigins = allowedOrigins
        self.subject = subject; self.registrationsPerBook = registrationsPerBook; self.notifier = notifier
    }
}

/// The push half of a running server: the engine's discovery and registration settings,
/// and the notifier with its sender, run as a service beside the HTTP one.
struct PushRuntime: Sendable {
    let engine: DAVPushConfiguration
    let notifier: PushNotifier
    let sender: PushSender

    /// Nil when push is off or the public URL is unknown. Makes the VAPID key on first use.
    static func make(settings: PushSettings, publicURL: URL?, store: any RoloStore, logger: Logger,
                     onEvent: @escaping @Sendable (PushEvent) -> Void = { _ in }) async throws -> PushRuntime? {
        guard settings.enabled, let publicURL, let origin = VAPIDKey.origin(of: publicURL) else {
            if settings.enabled { logger.info("push: off until the public URL is set (--public-url)") }
            return nil
        }
        if settings.allowLoopback {
            logger.warning("push: loopback push services ALLOWED (--push-allow-loopback): for tests only, never in production")
        }
        let key = try VAPIDKey(rawRepresentation: try await store.pushKey { VAPIDKey().rawRepresentation })
        let policy = PushTarget.Policy(allowLoopback: settings.allowLoopback, allowedOrigins: settings.allowedOrigins)
        let sender = PushSender(vapidKey: key, subject: settings.subject ?? publicURL.absoluteString, policy: policy,
                                logger: logger)
        let notifier = PushNotifier(store: store, clock: store.clock, settings: settings.notifier, logger: logger,
                                    syncToken: { SyncToken(collectionID: $0, seq: $1).description },
                                    onEvent: onEvent, deliver: { await sender.send($0) })
        let engine = DAVPushConfiguration(vapidPublicKey: key.publicKeyBase64URL, publicOrigin: origin, targets: policy,
                                          registrationsPerBook: settings.registrationsPerBook, clock: store.clock)
        return PushRuntime(engine: engine, notifier: notifier, sender: sender)
    }
}

/// Runs the notifier until shutdown, then closes the sender's connections.
struct PushNotifierService: Service {
    let runtime: PushRuntime

    func run() async throws {
        await cancelWhenGracefulShutdown { await runtime.notifier.run() }
        try? await runtime.sender.shutdown()
    }
}
