import DAV
import Foundation
import HTTPHead
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import RoloStore
import Synchronization

/// The engine's inline GET (`DAVService.inlineResponse(to:done:)`): false when it cannot
/// answer the request; else it calls `done` once with its answer and the login's password
/// stamp read with it, or nil for the full path.
public typealias ImmediateDAVHandler = @Sendable (DAVRequest, _ done: @escaping @Sendable (DAVService.InlineAnswer?) -> Void) -> Bool

/// What every connection's `InlineGetHandler` shares.
struct InlineGets: Sendable {
    /// Logins already verified; a GET whose `Authorization` is not in it goes the full way,
    /// and a cached login counts only while its password stamp is still the one the engine's
    /// read gives with the card.
    let credentials: CredentialCache
    /// A GET from a subnet it blocks goes the full way, to be answered 429 there.
    let throttle: LoginThrottle
    let answer: ImmediateDAVHandler
    let accessLog: AccessLog
    let recorder: AccessRecorder?
    let trustedProxies: Set<String>
    let date: HTTPDateCache
    let serverName: String
}

/// Answers a GET or HEAD of a card from the bytes the client sent, in front of NIO's HTTP/1
/// codec, on the event loop that read it, when the login is in the credential cache: the
/// engine reads the card and the login's password stamp in one store read
/// (`InlineResourceReads`), which SQLite answers on the calling thread and PostgreSQL with
/// one round trip. Such a request costs no HTTP/1 parse into NIO's and then HTTPTypes' head,
/// no `Request`, no trip through the async channel's streams, and no response encoder: the
/// answer is written as one buffer, status line, fields and body, so one `write` system call
/// (Docs/performance.md, "GET before the HTTP codec"). Everything else goes on to the codec
/// and Hummingbird as the bytes the client sent, and the answers are the ones the responder
/// would give (`RoloResponder.writeWholeAnswer`), logged and counted the same (`AccessLog`).
///
/// **Waiting for the store.** While a read over the network is out, every byte read after
/// the request waits behind it (`held`), and so do the channel's reads (no `read()` goes
/// on: the client's bytes stay in the socket, not in memory); the answer, or the request
/// passed on to the codec when the engine has none, comes first, then the held bytes are
/// read as if they had just arrived. So nothing overtakes the request, as with pipelining.
///
/// **What it answers.** Only a plainly simple request (`RawRequestHead.isPlainGet`): GET or
/// HEAD, an origin-form path without query, HTTP/1.1, well-formed field lines, no body, no
/// `Transfer-Encoding`, no `Expect` or `Upgrade`, `Connection` at most `keep-alive`, one
/// `Authorization` that the credential cache knows, and an answer the engine gives at once.
/// Anything else is passed on, never answered from a guess.
///
/// **Where requests end.** The handler answers a request itself only while the codec has
/// nothing pending: every byte passed on so far ended exactly at a request boundary this
/// handler read itself (a head, plus the body its plain `Content-Length` gives), and every
/// request passed on has been answered. A `CodecWatch` right after the codec counts the
/// request heads and ends that came out of it and the answer ends Hummingbird wrote
/// (`CodecLedger`); after each request passed on whole, the codec must have read exactly as
/// many requests as were passed on, or the two readings disagree and the handler gives up on
/// the connection. Giving up means passing every later byte on unread: always correct, only
/// slower. It happens on bytes the strict reading cannot delimit (`unreadable`: bare CR or
/// LF, obs-fold, a head of 8 KiB or more), on a request whose end another parser might
/// place elsewhere or after which NIO's parser stops (`isDelimited` false:
/// `Transfer-Encoding`, odd or repeated `Content-Length`, `Upgrade`, `Connection: close` or
/// other options, HTTP/1.0, CONNECT), and on any error the codec reports. So no request can be hidden from one parser inside
/// another's body (request smuggling), and pipelined answers keep their order: nothing
/// overtakes a request still unanswered; while one is, later plain GETs are passed on too.
/// A head split over several reads is held (at most 8 KiB) until it is complete.
///
/// **Idle timeout.** Hummingbird's `HTTPConnectionStateHandler` sees only what passes the
/// codec, so an active connection answered here would look idle to it and be closed. With
/// this handler in the pipeline Hummingbird's idle timeout is off (`HTTPService`), and this
/// handler keeps it with the same rule: close when nothing was read or answered for
/// `idleTimeout`, unless Hummingbird is answering a request it has read whole.
///
/// **Back-pressure.** While the channel is not writable (a client that pipelines and does
/// not read), requests are passed on rather than answered, so Hummingbird's writer, which
/// waits for the socket, holds the reading back instead of answers piling up in memory.
///
/// Event-loop bound, like every channel handler; the ledger is shared with the connection's
/// `CodecWatch` only.
final class InlineGetHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let gets: InlineGets
    private let ledger: CodecLedger
    private let idleTimeout: TimeAmount?
    /// The start of a head whose end has not been read yet.
    private var pending: ByteBuffer?
    /// Body bytes of the request being passed on that are still to come.
    private var bodyRemaining = 0
    /// Requests passed on whole (head and body).
    private var passedOn = 0
    /// Set for good once the codec gets every byte unread.
    private var gaveUp = false
    private var needsFlush = false
    private var idleCheck: Scheduled<Void>?
    /// The request whose answer the store's read still owes, with its bytes and every byte
    /// read since (`held`); nil when none.
    private var waiting: Waiting?
    /// A `read()` held back while waiting.
    private var readHeld = false

    private struct Waiting {
        var head: RawRequestHead
        var held: ByteBuffer
        var started: ContinuousClock.Instant
        var method: String
        var target: String
        var headers: [String: String]
        var authorization: String
        var request: DAVRequest
        var stamp: String
    }

    private enum Outcome { case answered, waiting, declined }

    init(_ gets: InlineGets, ledger: CodecLedger, idleTimeout: TimeAmount?) {
        self.gets = gets
        self.ledger = ledger
        self.idleTimeout = idleTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if gaveUp {
            context.fireChannelRead(data)
            return
        }
        var input = unwrapInboundIn(data)
        if waiting != nil {
            waiting!.held.writeBuffer(&input)
            return
        }
        var checked = 0
        if var held = pending {
            pending = nil
            checked = held.readableBytes
            held.writeBuffer(&input)
            input = held
        }
        process(input, checked: checked, context: context)
    }

    /// Reads the requests in `input` (its first `checked` bytes already scanned for a head's end).
    private func process(_ input: ByteBuffer, checked: Int, context: ChannelHandlerContext) {
        var input = input, checked = checked
        while input.readableBytes > 0 {
            if gaveUp {
                context.fireChannelRead(wrapInboundOut(input))
                return
            }
            if bodyRemaining > 0 {
                let count = min(bodyRemaining, input.readableBytes)
                context.fireChannelRead(wrapInboundOut(input.readSlice(length: count)!))
                bodyRemaining -= count
                if bodyRemaining == 0 { passedOnWhole() }
                continue
            }
            let scan = input.withUnsafeReadableBytes { RawRequestHead.scan($0, checked: checked) }
            checked = 0
            switch scan {
            case .incomplete:
                pending = input
                return
            case .unreadable:
                giveUp(passing: input, context: context)
                return
            case .head(let head):
                if head.isPlainGet, mayAnswer(context) {
                    switch answer(head, in: input, context: context) {
                    case .answered:
                        input.moveReaderIndex(forwardBy: head.size)
                        continue
                    case .waiting:
                        waiting!.held = input
                        return
                    case .declined:
                        break
                    }
                }
                guard passOn(head, from: &input, context: context) else { return }
            }
        }
    }

    /// Passes the request starting `input` on to the codec (as much of its body as is
    /// here); false when it cannot be delimited, and every byte was passed on unread.
    private func passOn(_ head: RawRequestHead, from input: inout ByteBuffer, context: ChannelHandlerContext) -> Bool {
        guard head.isDelimited else {
            giveUp(passing: input, context: context)
            return false
        }
        let count = min(head.size + head.bodyLength, input.readableBytes)
        context.fireChannelRead(wrapInboundOut(input.readSlice(length: count)!))
        bodyRemaining = head.size + head.bodyLength - count
        if bodyRemaining == 0 { passedOnWhole() }
        return true
    }

    /// Reads are held back while a request waits for the store: the client's bytes stay in
    /// the socket.
    func read(context: ChannelHandlerContext) {
        if waiting != nil {
            readHeld = true
        } else {
            context.read()
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    /// A request passed on to its last byte: the codec must have read it as one request too.
    private func passedOnWhole() {
        passedOn += 1
        if ledger.failed || ledger.heads != passedOn || ledger.ends != passedOn { gaveUp = true }
    }

    /// Whether the codec has nothing pending: every request passed on was read as such and
    /// answered, and the socket takes more.
    private func mayAnswer(_ context: ChannelHandlerContext) -> Bool {
        !ledger.failed && ledger.heads == passedOn && ledger.ends == passedOn && ledger.answers == passedOn
            && context.channel.isWritable
    }

    private func giveUp(passing input: ByteBuffer, context: ChannelHandlerContext) {
        gaveUp = true
        context.fireChannelRead(wrapInboundOut(input))
    }

    /// Asks the engine for its answer to `head`: written at once when the store read on
    /// this thread (`answered`), or later when its read comes back (`waiting`, with `waiting`
    /// set); `declined` (nothing written) when the login is not cached or the engine cannot
    /// answer it.
    private func answer(_ head: RawRequestHead, in input: ByteBuffer, context: ChannelHandlerContext) -> Outcome {
        let started = ContinuousClock.now
        let (method, target, headers) = input.withUnsafeReadableBytes { head.request(in: $0) }
        guard let authorization = headers["authorization"],
              let (credential, stamp) = gets.credentials.entry(authorization: authorization)
        else { return .declined }
        if gets.throttle.mayBlock,
           gets.throttle.retryAfter(subnet: ClientAddress.subnet(of: client(context, headers)).key) != nil {
            return .declined
        }
        guard let path = RoloResponder.decodedPath(target) else { return .declined }
        let tally = gets.recorder.map { _ in RequestTally() }
        let request = DAVRequest(method: method, path: path, headers: headers,
                                 body: Data(), credential: credential, tally: tally)
        let slot = AnswerSlot()
        guard gets.answer(request, { slot.deliver($0) }) else { return .declined }
        let waiting = Waiting(head: head, held: input, started: started, method: method, target: target, headers: headers,
                              authorization: authorization, request: request, stamp: stamp)
        // An answer the store gave on this thread (SQLite's) is taken without making the
        // callback a later one needs.
        let now: DAVService.InlineAnswer??
        if let early = slot.early() {
            now = early
        } else {
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            now = slot.take { answer in
                loop.execute {
                    let (handler, context) = bound.value
                    handler.resume(answer, context: context)
                }
            }
        }
        if let now {
            return write(now, for: waiting, context: context) ? .answered : .declined
        }
        self.waiting = waiting
        return .waiting
    }

    /// Writes the engine's answer when the login's stamp is still the cached one; false
    /// (nothing written) otherwise, the login then forgotten.
    private func write(_ answer: DAVService.InlineAnswer?, for request: Waiting, context: ChannelHandlerContext) -> Bool {
        guard let answer else { return false }
        guard answer.stamp == request.stamp else {
            gets.credentials.remove(authorization: request.authorization)
            return false
        }
        let dav = answer.response, head = request.head, headers = request.headers
        var buffer = context.channel.allocator.buffer(capacity: 320 + (head.isHead ? 0 : dav.body.count))
        guard RoloResponder.writeWholeAnswer(dav, forHead: head.isHead, date: gets.date.current,
                                             server: gets.serverName, into: &buffer) else { return false }
        context.write(wrapOutboundOut(buffer), promise: nil)
        needsFlush = true
        ledger.lastActivity = context.eventLoop.now
        let credential = request.request.credential
        gets.accessLog.record(method: request.method, path: request.target, status: dav.status, since: request.started,
                              user: credential.user) {
            client(context, headers)
        }
        if let tally = request.request.tally, let recorder = gets.recorder {
            // Only account passwords are cached, so no address is kept for them.
            recorder.record(credential, counts: tally.counts, address: "", userAgent: nil)
        }
        return true
    }

    /// The store's read came back (on this event loop): the answer, or the request passed
    /// on, then the bytes held meanwhile, and the reads held back.
    private func resume(_ answer: DAVService.InlineAnswer?, context: ChannelHandlerContext) {
        guard let request = waiting else { return }  // the connection closed meanwhile
        waiting = nil
        var input = request.held
        if write(answer, for: request, context: context) {
            input.moveReaderIndex(forwardBy: request.head.size)
            process(input, checked: 0, context: context)
        } else if passOn(request.head, from: &input, context: context) {
            process(input, checked: 0, context: context)
        }
        // What went on to the codec reaches Hummingbird at the end of a read.
        context.fireChannelReadComplete()
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        if readHeld, waiting == nil {
            readHeld = false
            context.read()
        }
    }

    /// The client's address: the peer, or the `X-Forwarded-For` a trusted proxy sent.
    private func client(_ context: ChannelHandlerContext, _ headers: [String: String]) -> String {
        ClientAddress.resolve(peer: context.channel.remoteAddress?.ipAddress ?? "unknown",
                              forwardedFor: headers["x-forwarded-for"], trustedProxies: gets.trustedProxies)
    }

    // MARK: End of input

    /// The start of a head still held goes to the codec before the end of input does, so it
    /// sees what the client sent.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed? = event as? ChannelEvent {
            // A request still waiting for the store goes to the codec too (its late answer is dropped).
            if let request = waiting {
                waiting = nil
                giveUp(passing: request.held, context: context)
            }
            passPending(context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        waiting = nil
        passPending(context)
        cancelIdleCheck()
        context.fireChannelInactive()
    }

    private func passPending(_ context: ChannelHandlerContext) {
        guard let held = pending else { return }
        pending = nil
        giveUp(passing: held, context: context)
    }

    // MARK: Idle timeout

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startIdleCheck(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelIdleCheck()
    }

    func channelActive(context: ChannelHandlerContext) {
        startIdleCheck(context)
        context.fireChannelActive()
    }

    private func startIdleCheck(_ context: ChannelHandlerContext) {
        guard let idleTimeout, idleCheck == nil else { return }
        ledger.lastActivity = context.eventLoop.now
        scheduleIdleCheck(at: ledger.lastActivity + idleTimeout, context: context)
    }

    private func scheduleIdleCheck(at deadline: NIODeadline, context: ChannelHandlerContext) {
        idleCheck = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            idleCheck = nil
            checkIdle(context)
        }
    }

    /// Hummingbird's rule (`HTTPConnectionStateHandler`), with this handler's answers counted
    /// as activity: a request read whole and still being answered keeps the connection.
    private func checkIdle(_ context: ChannelHandlerContext) {
        guard let idleTimeout, context.channel.isActive else { return }
        let now = context.eventLoop.now
        if ledger.isAnswering || waiting != nil {
            scheduleIdleCheck(at: now + idleTimeout, context: context)
        } else if now >= ledger.lastActivity + idleTimeout {
            context.close(promise: nil)
        } else {
            scheduleIdleCheck(at: ledger.lastActivity + idleTimeout, context: context)
        }
    }

    private func cancelIdleCheck() {
        idleCheck?.cancel()
        idleCheck = nil
    }
}

/// Where the engine's answer goes: kept for the caller when it comes before the caller
/// looks (the store read on the calling thread), else handed to the caller's `later`.
private final class AnswerSlot: Sendable {
    private struct State {
        var early: DAVService.InlineAnswer??
        var later: (@Sendable (DAVService.InlineAnswer?) -> Void)?
        var looked = false
    }

    private let state = Mutex(State())

    func deliver(_ answer: DAVService.InlineAnswer?) {
        let call = state.withLock { state -> (@Sendable (DAVService.InlineAnswer?) -> Void)? in
            guard state.looked else {
                state.early = .some(answer)
                return nil
            }
            return state.later
        }
        call?(answer)
    }

    /// The answer if it came already (itself possibly nil: the full path answers); else nil,
    /// and `take` is still to be asked.
    func early() -> DAVService.InlineAnswer?? {
        state.withLock { $0.early }
    }

    /// The answer if it came already (itself possibly nil: the full path answers); else nil,
    /// and `later` gets it when it comes.
    func take(orLater later: @escaping @Sendable (DAVService.InlineAnswer?) -> Void) -> DAVService.InlineAnswer?? {
        state.withLock { state in
            state.looked = true
            if let early = state.early { return early }
            state.later = later
            return nil
        }
    }
}

/// What one connection's codec and Hummingbird did, as `CodecWatch` saw it, for its
/// `InlineGetHandler`. Event-loop bound.
final class CodecLedger {
    /// Request heads and ends that came out of the codec.
    var heads = 0, ends = 0
    /// Answer ends Hummingbird wrote.
    var answers = 0
    /// The codec reported an error: its reading and the handler's may differ.
    var failed = false
    /// The last request part read, answer finished or answer written inline.
    var lastActivity = NIODeadline.now()

    /// Hummingbird has a request read whole and not answered yet.
    var isAnswering: Bool { answers < heads && ends == heads }

    init() {}
}

/// Sits right after the HTTP/1 codec and keeps the `CodecLedger`: request heads and ends
/// read, answer ends written, errors. Changes nothing that passes.
final class CodecWatch: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let ledger: CodecLedger

    init(_ ledger: CodecLedger) {
        self.ledger = ledger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: ledger.heads += 1
        case .body: break
        case .end: ledger.ends += 1
        }
        ledger.lastActivity = context.eventLoop.now
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        context.write(data, promise: promise)
        ledger.answers += 1
        if ledger.answers == ledger.heads { ledger.lastActivity = context.eventLoop.now }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        ledger.failed = true
        context.fireErrorCaught(error)
    }
}
