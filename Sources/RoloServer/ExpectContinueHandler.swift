import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` with `100 Continue` so clients (curl, libcurl-based
/// tools) start uploading at once instead of waiting a second. A request whose declared
/// length is over the limit gets no 100: the responder refuses it with 413 before any
/// body is sent.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private let limits: RequestLimits

    init(limits: RequestLimits) {
        self.limits = limits
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data),
           let expect = head.headerFields[.expect], expect.lowercased() == "100-continue",
           declaredLengthFits(head) {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }

    private func declaredLengthFits(_ head: HTTPRequest) -> Bool {
        guard let length = head.headerFields[.contentLength].flatMap(Int.init) else { return true }
        return length <= limits.maxBodySize(forMethod: head.method.rawValue)
    }
}
