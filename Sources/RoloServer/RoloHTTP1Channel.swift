import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1 channel with an `InlineGetHandler` in front of the HTTP/1 codec
/// (right before NIO's response encoder and request decoder, so it reads the bytes the client
/// sent and writes its answers as bytes) and its
/// `CodecWatch` right after the codec (`HTTP1ToHTTPServerCodec`), so the watch sees every
/// request and answer that goes through the codec and nothing else.
struct RoloHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    /// Nil turns the inline answers off (the test API numbers and faults every request).
    let inlineGets: InlineGets?
    /// The connection idle timeout, kept by `InlineGetHandler` when there is one (Hummingbird's
    /// own is then off: it would not see the requests answered inline).
    let idleTimeout: TimeAmount?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        http1.setup(channel: channel, logger: logger).flatMapThrowing { [inlineGets, idleTimeout] value in
            if let inlineGets {
                try Self.addInlineGets(inlineGets, idleTimeout: idleTimeout, to: channel.pipeline.syncOperations)
            }
            return value
        }
    }

    /// Puts the inline handler and its watch around the HTTP/1 codec of `pipeline`: the handler
    /// before NIO's response encoder and request decoder (its answers are bytes, which the
    /// encoder must not see), the watch after the conversion to HTTPTypes.
    static func addInlineGets(_ gets: InlineGets, idleTimeout: TimeAmount?,
                              to pipeline: ChannelPipeline.SynchronousOperations) throws {
        // `configureHTTPServerPipeline` adds the encoder and then the decoder, side by side.
        let encoder = try pipeline.handler(type: HTTPResponseEncoder.self)
        _ = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
        let codec = try pipeline.handler(type: HTTP1ToHTTPServerCodec.self)
        let ledger = CodecLedger()
        try pipeline.addHandler(InlineGetHandler(gets, ledger: ledger, idleTimeout: idleTimeout), position: .before(encoder))
        try pipeline.addHandler(CodecWatch(ledger), position: .after(codec))
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}
