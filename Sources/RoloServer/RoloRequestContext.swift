import Hummingbird

/// Per-request context: Hummingbird's core storage plus the peer address, which the login
/// throttle keys on.
struct RoloRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The client's IP address, or "unknown".
    let remoteAddress: String

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}
