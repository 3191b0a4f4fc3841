import DAV
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import RoloSQLite
import RoloStore
import Testing
@testable import RoloServer

/// `InlineGetHandler` in front of NIO's real HTTP/1 codec, in a channel of its own (NIO's
/// `EmbeddedChannel`), over the real engine and a real SQLite store: what it answers from the
/// bytes itself, what reaches the codec (read back as the request parts Hummingbird would
/// get), and in which order the answers leave.
@Suite struct InlineGetHandlerTests {
    static let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ada\r\nFN:Ada Lovelace\r\nEND:VCARD\r\n"
    static let cardPath = "/dav/addressbooks/alice/default/ada.vcf"
    static let cached = "Basic YWxpY2U6cHc="

    /// Makes channels that share one store with alice's card and `cached` as her verified login.
    struct Fixture {
        let gets: InlineGets

        /// A connected channel with Hummingbird's HTTP/1 codec set up as `HTTP1Channel` does,
        /// and the inline handler and its watch put around it as the server does.
        func channel(idleTimeout: TimeAmount? = nil) throws -> EmbeddedChannel {
            let channel = EmbeddedChannel()
            let pipeline = channel.pipeline.syncOperations
            try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false,
                                                     withOutboundHeaderValidation: false)
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try RoloHTTP1Channel.addInlineGets(gets, idleTimeout: idleTimeout, to: pipeline)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 4000)).wait()
            return channel
        }
    }

    static func withFixture(throttle: LoginThrottle = LoginThrottle(), _ body: (Fixture) throws -> Void) async throws {
        let store = try SQLiteStore.temporary()
        defer { try? store.close() }
        try await store.createUser(name: "alice", password: "pw")
        let engine = DAVService(store: store)
        let put = await engine.handle(DAVRequest(method: "PUT", path: cardPath, headers: ["content-type": "text/vcard"],
                                                 body: Data(card.utf8), user: "alice"))
        #expect(put.status == 201)
        let credentials = CredentialCache(lifetime: .seconds(60))
        credentials.insert(authorization: cached, credential: .accountPassword("alice"),
                           stamp: try #require(try store.accountPasswordStamp(user: "alice")))
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let gets = InlineGets(credentials: credentials, throttle: throttle, answer: engine.inlineResponse,
                              accessLog: AccessLog(metrics: ServerMetrics(store: store), logger: logger),
                              recorder: nil,
                              trustedProxies: [], date: HTTPDateCache(), serverName: "Rolo")
        try body(Fixture(gets: gets))
    }

    /// A request head as a client writes it: Host, then `Authorization` unless nil, then `extra`
    /// (whole field lines), then the blank line.
    static func request(_ method: String = "GET", _ target: String = cardPath, version: String = "HTTP/1.1",
                        authorization: String? = cached, _ extra: String = "") -> String {
        "\(method) \(target) \(version)\r\nHost: 127.0.0.1\r\n" + (authorization.map { "Authorization: \($0)\r\n" } ?? "")
            + extra + "\r\n"
    }

    static let get = request()

    static func send(_ channel: EmbeddedChannel, _ text: String) throws {
        try channel.writeInbound(ByteBuffer(string: text))
        channel.pipeline.fireChannelReadComplete()
    }

    /// What reached Hummingbird: request parts, described ("GET /path", "body x", "end").
    static func passedOn(_ channel: EmbeddedChannel) throws -> [String] {
        var parts: [String] = []
        while let part = try channel.readInbound(as: HTTPRequestPart.self) {
            switch part {
            case .head(let head): parts.append("\(head.method.rawValue) \(head.path ?? "")")
            case .body(let buffer): parts.append("body " + String(buffer: buffer))
            case .end: parts.append("end")
            }
        }
        return parts
    }

    /// Every byte written to the client so far.
    static func written(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    /// The status codes of the answers in `text`, in order.
    static func statuses(_ text: String) -> [Int] {
        text.components(separatedBy: "\r\n").compactMap { line in
            line.hasPrefix("HTTP/1.1 ") ? Int(line.dropFirst(9).prefix(3)) : nil
        }
    }

    /// Hummingbird's answer to a request passed on, written through the codec.
    static func respond(_ channel: EmbeddedChannel, _ status: HTTPResponse.Status = .noContent) throws {
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: status)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
    }

    /// The head of the one answer in `text`, its lines without `Date`, and its body.
    static func answer(_ text: String) -> (lines: [String], body: String) {
        let parts = text.components(separatedBy: "\r\n\r\n")
        let lines = parts[0].components(separatedBy: "\r\n").filter { !$0.hasPrefix("Date: ") }
        return (lines, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// A cached login from a blocked subnet goes to the responder (which answers 429); while
    /// another subnet is blocked, this one is still answered here.
    @Test func passesOnAGETFromABlockedSubnetOnly() async throws {
        for (blocked, inline) in [("127.0.0.1", false), ("10.0.0.1", true), ("::ffff:127.0.0.1", false)] {
            let throttle = LoginThrottle(LoginThrottleSettings(freeFailures: 0, baseDelay: .zero, maxDelay: .zero,
                                                               cappedFailures: 0))
            let key = ClientAddress.subnet(of: blocked).key
            #expect(throttle.recordFailure(subnet: key, account: "x") == .blocked(retryAfter: .seconds(1800)))
            try await Self.withFixture(throttle: throttle) { fixture in
                let channel = try fixture.channel()
                try Self.send(channel, Self.get)
                #expect(try Self.passedOn(channel) == (inline ? [] : ["GET \(Self.cardPath)", "end"]), "\(blocked)")
                #expect(Self.statuses(try Self.written(channel)) == (inline ? [200] : []), "\(blocked)")
            }
        }
    }

    @Test func answersAPlainGETOfACardWithACachedLoginItself() async throws {
        try await Self.withFixture { fixture in
            let channel = try fixture.channel()
            try Self.send(channel, Self.get)
            #expect(try Self.passedOn(channel).isEmpty)
            let text = try Self.written(channel)
            let (lines, body) = Self.answer(text)
            #expect(lines.first == "HTTP/1.1 200 OK")
            #expect(lines.dropFirst().map { String($0.prefix { $0 != ":" }) }
                    == ["ETag", "Last-Modified", "Vary", "Content-Type", "Content-Length", "Server"])
            #expect(lines.contains("Content-Length: \(Self.card.utf8.count)"))
            #expect(lines.contains("Content-Type: text/vcard; charset=utf-8"))
            #expect(lines.contains("Server: Rolo"))
            #expect(text.contains("\r\nDate: "))
            #expect(body == Self.card)
            let etag = try #require(lines.first { $0.hasPrefix("ETag: ") }?.dropFirst(6))

            try Self.send(channel, Self.request("HEAD"))
            let head = Self.answer(try Self.written(channel))
            #expect(head.lines == lines)
            #expect(head.body.isEmpty)

            // 304 carries no Content-Length, as NIO's encoder writes it on the full path.
            try Self.send(channel, Self.request(authorization: Self.cached, "If-None-Match: \(etag)\r\n"))
            let notModified = Self.answer(try Self.written(channel))
            #expect(notModified.lines.first == "HTTP/1.1 304 Not Modified")
            #expect(!notModified.lines.contains { $0.hasPrefix("Content-Length") })
            try Self.send(channel, Self.request(authorization: Self.cached, "If-Match: \"other\"\r\n"))
            #expect(Self.statuses(try Self.written(channel)) == [412])
            for extra in ["Connection: Keep-Alive\r\n", "Connection: keep-alive, \r\n", "Content-Length: 0\r\n",
                          "X-Odd:  spaced value \t\r\n"] {
                try Self.send(channel, Self.request(authorization: Self.cached, extra))
                #expect(Self.statuses(try Self.written(channel)) == [200], "\(extra)")
            }
            #expect(try Self.passedOn(channel).isEmpty)
        }
    }

    /// Requests it must not answer reach Hummingbird as sent; when they are delimited the
    /// next plain GET is answered inline again once their answer is out.
    @Test func passesOnWhatItMayNotAnswer() async throws {
        try await Self.withFixture { fixture in
            let cases: [(String, [String])] = [
                (Self.request(authorization: "Basic bm90OmNhY2hlZA=="), ["GET \(Self.cardPath)", "end"]),  // login to check
                (Self.request(authorization: nil), ["GET \(Self.cardPath)", "end"]),
                (Self.request("GET", "/dav/addressbooks/alice/default/missing.vcf"), ["GET /dav/addressbooks/alice/default/missing.vcf", "end"]),
                (Self.request("GET", "/dav/addressbooks/alice/default/"), ["GET /dav/addressbooks/alice/default/", "end"]),
                (Self.request("GET", Self.cardPath + "?x=1"), ["GET \(Self.cardPath)?x=1", "end"]),
                (Self.request("GET", Self.cardPath + "#f"), ["GET \(Self.cardPath)#f", "end"]),
                (Self.request(authorization: Self.cached, "Content-Length: 1\r\n") + "x", ["GET \(Self.cardPath)", "body x", "end"]),
                (Self.request(authorization: Self.cached, "Expect: 100-continue\r\n"), ["GET \(Self.cardPath)", "end"]),
                (Self.request("PROPFIND"), ["PROPFIND \(Self.cardPath)", "end"]),
                (Self.request("DELETE"), ["DELETE \(Self.cardPath)", "end"]),
                (Self.request(authorization: Self.cached, "Authorization: \(Self.cached)\r\n"), ["GET \(Self.cardPath)", "end"]),
                (Self.request(authorization: Self.cached, "X-Name: caf\u{e9}\r\n"), ["GET \(Self.cardPath)", "end"]),
            ]
            for (request, parts) in cases {
                let channel = try fixture.channel()
                try Self.send(channel, request)
                #expect(try Self.written(channel).isEmpty, "\(request)")
                #expect(try Self.passedOn(channel) == parts, "\(request)")
                try Self.respond(channel)
                _ = try Self.written(channel)
                try Self.send(channel, Self.get)
                #expect(try Self.passedOn(channel).isEmpty, "after \(request)")
                #expect(Self.statuses(try Self.written(channel)) == [200], "after \(request)")
            }
        }
    }

    /// After a request whose end it cannot be sure of, it reads nothing more on that
    /// connection: every later byte goes to the codec, even plain GETs.
    @Test func givesUpOnRequestsItCannotDelimit() async throws {
        try await Self.withFixture { fixture in
            let getParts = ["GET \(Self.cardPath)", "end"]
            // The request, what reaches Hummingbird, and what of a plain GET sent after its answer
            // does (nil: NIO's parser refuses more bytes on the connection, then the full path
            // answers 400 and closes).
            let cases: [(String, [String], [String]?)] = [
                (Self.request(authorization: Self.cached, "Connection: close\r\n"), getParts, nil),
                (Self.request(version: "HTTP/1.0"), getParts, nil),
                // An upgrade: NIO's parser reads nothing after it.
                (Self.request(authorization: Self.cached, "Connection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n"),
                 getParts, []),
                (Self.request(authorization: Self.cached, "Connection: TE\r\n"), getParts, getParts),
                (Self.request("PUT", authorization: Self.cached, "Transfer-Encoding: chunked\r\n") + "3\r\nabc\r\n0\r\n\r\n",
                 ["PUT \(Self.cardPath)", "body abc", "end"], getParts),
                // A body only the codec can delimit, with a GET inside it and one after it.
                (Self.request("POST", authorization: Self.cached, "Transfer-Encoding: chunked\r\n")
                    + "\(String(Self.get.utf8.count, radix: 16))\r\n\(Self.get)\r\n0\r\n\r\n" + Self.get,
                 ["POST \(Self.cardPath)", "body \(Self.get)", "end", "GET \(Self.cardPath)", "end"], getParts),
            ]
            for (request, parts, after) in cases {
                let channel = try fixture.channel()
                try Self.send(channel, request)
                #expect(try Self.written(channel).isEmpty, "\(request)")
                #expect(try Self.passedOn(channel) == parts, "\(request)")
                let ends = parts.filter { $0 == "end" }.count
                for _ in 0..<ends { try Self.respond(channel) }
                #expect(Self.statuses(try Self.written(channel)) == Array(repeating: 204, count: ends))
                let sent = Result { try Self.send(channel, Self.get) }
                if let after {
                    _ = try sent.get()
                    #expect(try Self.passedOn(channel) == after, "after \(request)")
                } else {
                    #expect(throws: HTTPParserError.self, "after \(request)") { try sent.get() }
                }
                #expect(try Self.written(channel).isEmpty, "after \(request)")
                _ = try? channel.finish()
            }
        }
    }

    /// Bytes NIO's parser refuses or could read another way go to the codec, whose error ends
    /// the connection on the full path; nothing is answered inline, then or later.
    @Test func leavesOddBytesToTheCodec() async throws {
        try await Self.withFixture { fixture in
            let odd = [
                Self.request(authorization: Self.cached, "Content-Length: 0\r\nContent-Length: 0\r\n"),
                Self.request(authorization: Self.cached, "Content-Length: 0, 0\r\n"),
                Self.request(authorization: Self.cached, "Content-Length: +0\r\n"),
                Self.request(authorization: Self.cached, "Content-Length: 0\r\nTransfer-Encoding: chunked\r\n") + "0\r\n\r\n",
                Self.request(authorization: Self.cached, "X-Folded: a\r\n b\r\n"),
                Self.request(authorization: Self.cached, "X-Space : a\r\n"),
                Self.request(authorization: Self.cached, "X-Bare: a\nb\r\n"),
                Self.request(authorization: Self.cached, "X-Bare: a\rb\r\n"),
                "GET \(Self.cardPath) HTTP/1.1\nHost: 127.0.0.1\nAuthorization: \(Self.cached)\n\n",
                "GET  \(Self.cardPath) HTTP/1.1\r\nAuthorization: \(Self.cached)\r\n\r\n",
                "\r\n" + Self.get,
                Self.request("CONNECT", "127.0.0.1:443"),
                Self.request("FOO"),  // a method NIO's parser does not know: it fails, this handler gives up
                Self.request(authorization: Self.cached, "X-Long: \(String(repeating: "a", count: 9000))\r\n"),
            ]
            for request in odd {
                let channel = try fixture.channel()
                // The codec may refuse the bytes (the full path then answers 400 and closes).
                _ = try? Self.send(channel, request + Self.get)
                #expect(try Self.statuses(Self.written(channel)).isEmpty, "\(request)")
                _ = try? channel.finish()
            }
        }
    }

    /// A head split over several reads is answered once it is complete, whatever the split.
    @Test func waitsForTheRestOfAHead() async throws {
        try await Self.withFixture { fixture in
            let bytes = Array(Self.get.utf8)
            for split in 1..<bytes.count {
                let channel = try fixture.channel()
                try Self.send(channel, String(decoding: bytes[..<split], as: UTF8.self))
                #expect(try Self.written(channel).isEmpty)
                try Self.send(channel, String(decoding: bytes[split...], as: UTF8.self))
                #expect(Self.statuses(try Self.written(channel)) == [200], "split at \(split)")
                #expect(try Self.passedOn(channel).isEmpty)
            }
            // A bare CR or LF is seen wherever the reads split the head.
            for odd in [Self.request(authorization: Self.cached, "X-Bare: a\rb\r\n"),
                        Self.request(authorization: Self.cached, "X-Bare: a\nb\r\n")] {
                let oddBytes = Array(odd.utf8)
                for split in 1..<oddBytes.count {
                    let channel = try fixture.channel()
                    _ = try? Self.send(channel, String(decoding: oddBytes[..<split], as: UTF8.self))
                    _ = try? Self.send(channel, String(decoding: oddBytes[split...], as: UTF8.self))
                    #expect(try Self.statuses(Self.written(channel)).isEmpty, "split at \(split)")
                    _ = try? channel.finish()
                }
            }
            // Byte by byte, and a second request right behind the first.
            let channel = try fixture.channel()
            for byte in (Self.get + Self.get).utf8 { try Self.send(channel, String(decoding: [byte], as: UTF8.self)) }
            #expect(Self.statuses(try Self.written(channel)) == [200, 200])
            #expect(try Self.passedOn(channel).isEmpty)
        }
    }

    /// Pipelined requests in one read: a GET is answered inline, the PUT behind it goes to
    /// Hummingbird with its body, and the GETs behind the PUT must wait for it, so they are
    /// passed on too and answered in order; once all are answered, GETs are inline again.
    @Test func nothingOvertakesARequestPassedOn() async throws {
        try await Self.withFixture { fixture in
            let channel = try fixture.channel()
            let put = Self.request("PUT", authorization: Self.cached, "Content-Length: \(Self.card.utf8.count)\r\n") + Self.card
            // The last 10 bytes of the PUT's body come in a second read.
            let split = put.utf8.index(put.utf8.endIndex, offsetBy: -10)
            try Self.send(channel, Self.get + put[..<split])
            try Self.send(channel, put[split...] + Self.get + Self.request("HEAD"))
            let bodySplit = Self.card.utf8.index(Self.card.utf8.endIndex, offsetBy: -10)
            #expect(try Self.passedOn(channel) == ["PUT \(Self.cardPath)", "body " + Self.card[..<bodySplit],
                                                     "body " + Self.card[bodySplit...], "end",
                                                     "GET \(Self.cardPath)", "end", "HEAD \(Self.cardPath)", "end"])
            #expect(Self.statuses(try Self.written(channel)) == [200])
            try Self.respond(channel, .noContent)          // the PUT's answer
            try Self.send(channel, Self.get)               // still behind the two passed on
            #expect(try Self.passedOn(channel) == ["GET \(Self.cardPath)", "end"])
            try Self.respond(channel, .ok)
            try Self.respond(channel, .ok)
            try Self.respond(channel, .accepted)
            #expect(Self.statuses(try Self.written(channel)) == [204, 200, 200, 202])
            try Self.send(channel, Self.get + Self.get)
            #expect(try Self.passedOn(channel).isEmpty)
            #expect(Self.statuses(try Self.written(channel)) == [200, 200])
        }
    }

    /// While the socket takes no more, GETs go to Hummingbird, whose writer waits for it.
    @Test func passesOnWhileTheChannelIsNotWritable() async throws {
        try await Self.withFixture { fixture in
            let channel = try fixture.channel()
            channel.isWritable = false
            try Self.send(channel, Self.get)
            #expect(try Self.passedOn(channel) == ["GET \(Self.cardPath)", "end"])
            channel.isWritable = true
            try Self.respond(channel, .ok)
            try Self.send(channel, Self.get)
            #expect(try Self.passedOn(channel).isEmpty)
            #expect(Self.statuses(try Self.written(channel)) == [200, 200])
        }
    }

    /// The idle timeout counts inline answers as activity, spares a request Hummingbird is
    /// still answering, and closes a connection that really is idle.
    @Test func keepsTheIdleTimeout() async throws {
        try await Self.withFixture { fixture in
            let channel = try fixture.channel(idleTimeout: .seconds(60))
            for _ in 0..<3 {
                channel.embeddedEventLoop.advanceTime(by: .seconds(45))
                try Self.send(channel, Self.get)
                #expect(channel.isActive)
            }
            try Self.send(channel, Self.request("PROPFIND"))
            channel.embeddedEventLoop.advanceTime(by: .seconds(150))
            #expect(channel.isActive)  // Hummingbird is still answering it
            try Self.respond(channel)
            channel.embeddedEventLoop.advanceTime(by: .seconds(59))
            #expect(channel.isActive)
            channel.embeddedEventLoop.advanceTime(by: .seconds(2))
            #expect(!channel.isActive)

            // A head that never ends does not keep the connection either.
            let dripping = try fixture.channel(idleTimeout: .seconds(60))
            for byte in "GET \(Self.cardPath) HTTP/1.1\r\nX-Slow: abcdefgh" {
                dripping.embeddedEventLoop.advanceTime(by: .seconds(10))
                _ = try? Self.send(dripping, String(byte))
            }
            #expect(!dripping.isActive)
        }
    }
}
