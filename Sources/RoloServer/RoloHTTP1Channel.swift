import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 channel with an `InlineGetHandler` right after its connection-state
/// handler, so the state handler still sees every request and answer (idle timeout,
/// graceful shutdown) and the async channel sees only what the handler passes on.
struct RoloHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    /// Nil turns the inline answers off (the test API numbers and faults every request).
    let inlineGets: InlineGets?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        http1.setup(channel: channel, logger: logger).flatMapThrowing { [inlineGets] value in
            if let inlineGets {
                let pipeline = channel.pipeline.syncOperations
                let stateHandler = try pipeline.handler(type: HTTPConnectionStateHandler.self)
                try pipeline.addHandler(InlineGetHandler(inlineGets), position: .after(stateHandler))
            }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}
