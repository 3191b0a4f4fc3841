import DAV
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Serves HTTP/1.1 through a responder the way Hummingbird's `Application` does, minus the
/// per-request work Rolo has no use for: `Application` copies its logger for every request
/// to tag it with a fresh request id, binds that copy as a task local around the responder
/// and builds the request context from it. Rolo's responder logs through a logger of its
/// own and never reads the request id, and on a cached GET those steps were a measurable
/// share of the server's CPU (see Docs/performance.md, "GET per request").
struct HTTPService<Responder: HTTPResponder>: Service where Responder.Context == RoloRequestContext {
    let responder: Responder
    let channelConfiguration: HTTP1Channel.Configuration
    /// GETs of cards answered in the channel pipeline (`InlineGetHandler`); nil for none.
    let inlineGets: InlineGets?
    let address: BindAddress
    let serverName: String
    let date: HTTPDateCache
    let logger: Logger
    let onRunning: @Sendable (Int) async -> Void

    func run() async throws {
        var channelConfiguration = channelConfiguration
        let idleTimeout = channelConfiguration.idleTimeout
        // Requests answered inline never reach Hummingbird's connection-state handler: the
        // inline handler keeps the idle timeout instead.
        if inlineGets != nil { channelConfiguration.idleTimeout = nil }
        let http1 = HTTP1Channel(
            responder: { [responder, logger, serverName, date] request, writer, channel in
                let context = RoloRequestContext(source: .init(channel: channel, logger: logger))
                var response: Response
                do {
                    response = try await responder.respond(to: request, context: context)
                } catch {
                    logger.error("Responder failed: \(error)")
                    response = Response(status: .internalServerError)
                }
                response.headers[.date] = date.current
                response.headers[.server] = serverName
                // One write of head, body and end for a whole body (Hummingbird's fast path).
                try await writer.write(response: response.head, body: response.body)
            },
            configuration: channelConfiguration)
        let server = RoloHTTP1Channel(http1: http1, inlineGets: inlineGets, idleTimeout: idleTimeout).server(
            configuration: .init(address: address, serverName: serverName),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: logger)
        // Graceful shutdown reaches it through the enclosing group, as with `Application`.
        try await server.run()
    }
}

/// The `Date` header's value (RFC 9110 §6.6.1), formatted once a second rather than per
/// response. Renewed by the first answer of each new second, not by a timer: a timer's
/// task waits for a thread like any other, and on a busy host (a loaded test run) dates
/// came out 17 s old.
final class HTTPDateCache: Sendable {
    private let cached = Mutex<(second: Int, text: String)>((0, ""))

    var current: String {
        let now = Date()
        let second = Int(now.timeIntervalSince1970)
        return cached.withLock { cached in
            if cached.second != second { cached = (second, HTTPDate.rfc1123(now)) }
            return cached.text
        }
    }
}
