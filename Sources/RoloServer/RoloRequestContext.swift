import Hummingbird
import NIOCore

/// Per-request context: Hummingbird's core storage plus the connection, whose peer address
/// the login throttle and the access log key on.
public struct RoloRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    private let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }

    /// The client's IP address, or "unknown". Worked out when asked: formatting it for every
    /// request costs more than a cached GET needs.
    public var remoteAddress: String { channel.remoteAddress?.ipAddress ?? "unknown" }
}
