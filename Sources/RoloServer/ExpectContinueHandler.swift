import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` with `100 Continue` so clients (curl, libcurl-based
/// tools, Apple's Contacts) start uploading at once instead of waiting a second.
/// No 100 is sent when the final answer is already known to be a refusal: a request
/// without credentials (the responder answers 401) or whose declared length is over the
/// limit (413). The client then never uploads the body (RFC 9110 §10.1.1).
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
           head.headerFields[.authorization] != nil, declaredLengthFits(head) {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }

    private func declaredLengthFits(_ head: HTTPRequest) -> Bool {
        guard let length = head.headerFields[.contentLength].flatMap(Int.init) else { return true }
        return length <= limits.maxBodySize(forMethod: head.method.rawValue)
    }
}
