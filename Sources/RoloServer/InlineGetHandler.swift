import DAV
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The engine's answer to a GET or HEAD given on the calling thread, or nil when it cannot
/// be given without waiting (`DAVService.immediateResponse(to:)`).
public typealias ImmediateDAVHandler = @Sendable (DAVRequest) -> DAVResponse?

/// What every connection's `InlineGetHandler` shares.
struct InlineGets: Sendable {
    /// Logins already verified; a GET whose `Authorization` is not in it goes the full way.
    let credentials: CredentialCache
    let answer: ImmediateDAVHandler
    let accessLog: AccessLog
    let trustedProxies: Set<String>
    let date: HTTPDateCache
    let serverName: String
}

/// Answers a GET or HEAD of a card inside the channel pipeline, on the event loop that read
/// it, when all it needs is at hand without waiting: the login is in the credential cache
/// and the store reads the card on the calling thread. On that path a request costs no
/// task, no trip through the async channel's inbound stream and outbound writer, and no
/// Hummingbird `Request` (Docs/performance.md, "GET in the pipeline"): most of what a cached
/// GET cost. Anything else (other methods, a login to check, a path that is no stored card,
/// a body, a query string, `Connection` options) goes on to Hummingbird untouched, and the
/// answers are the ones the responder would give, logged and counted the same.
///
/// Answers keep the order of the requests: while a request passed on is unanswered
/// (HTTP/1.1 pipelining), every later one is passed on too. Sits after Hummingbird's
/// `HTTPConnectionStateHandler`, so the idle timeout and graceful shutdown see every request
/// and every answer. Event-loop bound, like every channel handler.
final class InlineGetHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum State {
        /// Between requests, or inside one passed on.
        case reading
        /// A GET this handler may answer: its head waits for the end of the request.
        case holding(HTTPRequest, user: String, started: ContinuousClock.Instant)
    }

    private let gets: InlineGets
    private var state = State.reading
    /// Requests passed on whose answer has not ended yet.
    private var unanswered = 0
    private var needsFlush = false

    init(_ gets: InlineGets) {
        self.gets = gets
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if case .head(let head) = part {
            if unanswered == 0, let user = answerableUser(head) {
                state = .holding(head, user: user, started: .now)
                return
            }
            unanswered += 1
            context.fireChannelRead(data)
            return
        }
        guard case .holding(let head, let user, let started) = state else {
            context.fireChannelRead(data)
            return
        }
        state = .reading
        if case .end = part, answer(head, user: user, started: started, context: context) { return }
        // A body after all, or no immediate answer: the whole request goes the full way.
        unanswered += 1
        context.fireChannelRead(wrapInboundOut(.head(head)))
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    /// Answers written by Hummingbird pass here; the end of one releases the next request.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), unanswered > 0 { unanswered -= 1 }
        context.write(data, promise: promise)
    }

    /// The user of a GET or HEAD this handler may try to answer, from a cached login.
    private func answerableUser(_ head: HTTPRequest) -> String? {
        guard head.method == .get || head.method == .head,
              let path = head.path, !path.utf8.contains(UInt8(ascii: "?")),
              head.headerFields[values: .connection].allSatisfy(Self.isKeepAlive),
              !head.headerFields.contains(.transferEncoding),
              let authorization = head.headerFields[.authorization] else { return nil }
        return gets.credentials.user(authorization: authorization)
    }

    /// `Connection: keep-alive` asks for what HTTP/1.1 does anyway; any other option (`close`,
    /// `upgrade`) is for Hummingbird to act on.
    private static func isKeepAlive(_ value: String) -> Bool {
        value.utf8.count == 10 && value.lowercased() == "keep-alive"
    }

    /// Writes the engine's answer to `head`; false (nothing written) when it has none at once.
    private func answer(_ head: HTTPRequest, user: String, started: ContinuousClock.Instant,
                        context: ChannelHandlerContext) -> Bool {
        let rawPath = head.path ?? "/"
        let request = DAVRequest(method: head.method.rawValue, path: RoloResponder.decodedPath(rawPath),
                                 headers: RoloResponder.lowercasedHeaders(head.headerFields), body: Data(), user: user)
        guard let dav = gets.answer(request) else { return false }
        var response = RoloResponder.responseHead(from: dav)
        response.headerFields[.date] = gets.date.current
        response.headerFields[.server] = gets.serverName
        context.write(wrapOutboundOut(.head(response)), promise: nil)
        if !dav.body.isEmpty {
            var buffer = context.channel.allocator.buffer(capacity: dav.body.count)
            buffer.writeBytes(dav.body)
            context.write(wrapOutboundOut(.body(buffer)), promise: nil)
        }
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        needsFlush = true
        gets.accessLog.record(method: request.method, path: rawPath, status: dav.status, since: started, user: user) {
            ClientAddress.resolve(peer: context.channel.remoteAddress?.ipAddress ?? "unknown",
                                  forwardedFor: head.headerFields[.xForwardedFor], trustedProxies: gets.trustedProxies)
        }
        return true
    }
}
