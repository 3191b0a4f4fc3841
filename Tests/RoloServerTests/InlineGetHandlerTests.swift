import DAV
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import RoloStore
import Testing
@testable import RoloServer

/// `InlineGetHandler` in a channel of its own (NIO's `EmbeddedChannel`) over the real engine
/// and a real store: what it answers itself, what it passes on, and in which order.
@Suite struct InlineGetHandlerTests {
    static let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ada\r\nFN:Ada Lovelace\r\nEND:VCARD\r\n"
    static let cardPath = "/dav/addressbooks/alice/default/ada.vcf"
    static let cached = "Basic YWxpY2U6cHc="

    /// A channel with the handler, alice's card stored, and `cached` as her verified login.
    static func withChannel(_ body: (EmbeddedChannel) throws -> Void) async throws {
        let store = try SQLiteStore.temporary()
        defer { try? store.close() }
        try await store.createUser(name: "alice", password: "pw")
        let engine = DAVService(store: store)
        let put = await engine.handle(DAVRequest(method: "PUT", path: cardPath, headers: ["content-type": "text/vcard"],
                                                 body: Data(card.utf8), user: "alice"))
        #expect(put.status == 201)
        let credentials = CredentialCache(lifetime: .seconds(60))
        credentials.insert(authorization: cached, user: "alice")
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let gets = InlineGets(credentials: credentials, answer: engine.immediateResponse,
                              accessLog: AccessLog(metrics: ServerMetrics(store: store, databasePath: store.path), logger: logger),
                              trustedProxies: [], date: HTTPDateCache(), serverName: "Rolo")
        let channel = EmbeddedChannel(handler: InlineGetHandler(gets))
        defer { _ = try? channel.finish() }
        try body(channel)
    }

    static func head(_ method: HTTPRequest.Method, _ path: String, authorization: String? = cached,
                     _ extra: [(HTTPField.Name, String)] = []) -> HTTPRequestPart {
        var fields = HTTPFields()
        if let authorization { fields[.authorization] = authorization }
        for (name, value) in extra { fields.append(HTTPField(name: name, value: value)) }
        return .head(HTTPRequest(method: method, scheme: nil, authority: "127.0.0.1", path: path, headerFields: fields))
    }

    /// A request part as method and path, or its kind.
    static func describe(_ part: HTTPRequestPart) -> String {
        switch part {
        case .head(let head): "\(head.method.rawValue) \(head.path ?? "")"
        case .body: "body"
        case .end: "end"
        }
    }

    /// The request parts the handler passed on, described.
    static func passedOn(_ channel: EmbeddedChannel) throws -> [String] {
        var parts: [String] = []
        while let part = try channel.readInbound(as: HTTPRequestPart.self) { parts.append(describe(part)) }
        return parts
    }

    /// The answer the handler wrote: its head and body; nil when it wrote nothing.
    static func answer(_ channel: EmbeddedChannel) throws -> (head: HTTPResponse, body: String)? {
        guard case .head(let head)? = try channel.readOutbound(as: HTTPResponsePart.self) else { return nil }
        var body = ""
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) {
            switch part {
            case .body(let buffer): body += String(buffer: buffer)
            case .end: return (head, body)
            case .head: Issue.record("a second head before the end")
            }
        }
        Issue.record("no end part")
        return (head, body)
    }

    @Test func answersAGETOfACardWithACachedLoginItself() async throws {
        try await Self.withChannel { channel in
            try channel.writeInbound(Self.head(.get, Self.cardPath))
            try channel.writeInbound(HTTPRequestPart.end(nil))
            #expect(try Self.passedOn(channel).isEmpty)
            let answer = try #require(try Self.answer(channel))
            #expect(answer.head.status.code == 200)
            #expect(answer.body == Self.card)
            #expect(answer.head.headerFields[.contentLength] == String(Self.card.utf8.count))
            #expect(answer.head.headerFields[.contentType] == "text/vcard; charset=utf-8")
            #expect(answer.head.headerFields[.eTag]?.hasPrefix("\"") == true)
            #expect(answer.head.headerFields[.server] == "Rolo")
            #expect(answer.head.headerFields[.date] != nil)

            try channel.writeInbound(Self.head(.head, Self.cardPath))
            try channel.writeInbound(HTTPRequestPart.end(nil))
            let headAnswer = try #require(try Self.answer(channel))
            #expect(headAnswer.head.status.code == 200)
            #expect(headAnswer.body.isEmpty)
            #expect(headAnswer.head.headerFields[.contentLength] == String(Self.card.utf8.count))

            let etag = try #require(answer.head.headerFields[.eTag])
            try channel.writeInbound(Self.head(.get, Self.cardPath, [(.ifNoneMatch, etag)]))
            try channel.writeInbound(HTTPRequestPart.end(nil))
            #expect(try Self.answer(channel)?.head.status.code == 304)
            try channel.writeInbound(Self.head(.get, Self.cardPath, [(.connection, "Keep-Alive")]))
            try channel.writeInbound(HTTPRequestPart.end(nil))
            #expect(try Self.answer(channel)?.head.status.code == 200)
            try channel.writeInbound(Self.head(.get, Self.cardPath, [(.ifMatch, "\"other\"")]))
            try channel.writeInbound(HTTPRequestPart.end(nil))
            #expect(try Self.answer(channel)?.head.status.code == 412)
            #expect(try Self.passedOn(channel).isEmpty)
        }
    }

    @Test func passesOnWhatItCannotAnswerAtOnce() async throws {
        try await Self.withChannel { channel in
            let requests: [[HTTPRequestPart]] = [
                [Self.head(.get, Self.cardPath, authorization: "Basic bm90OmNhY2hlZA=="), .end(nil)],  // login to check
                [Self.head(.get, Self.cardPath, authorization: nil), .end(nil)],                     // no login
                [Self.head(.get, "/dav/addressbooks/alice/default/missing.vcf"), .end(nil)],         // 404
                [Self.head(.get, "/dav/addressbooks/alice/default/"), .end(nil)],                     // a collection
                [Self.head(.get, Self.cardPath + "?x=1"), .end(nil)],                                 // a query string
                [Self.head(.get, Self.cardPath, [(.connection, "close")]), .end(nil)],
                [Self.head(.get, Self.cardPath, [(.connection, "keep-alive"), (.connection, "upgrade")]), .end(nil)],
                [Self.head(.get, Self.cardPath), .body(ByteBuffer(string: "x")), .end(nil)],         // a body
                [Self.head(HTTPRequest.Method("PROPFIND")!, Self.cardPath), .end(nil)],
            ]
            for parts in requests {
                for part in parts { try channel.writeInbound(part) }
                #expect(try Self.answer(channel) == nil)
                #expect(try Self.passedOn(channel) == parts.map(Self.describe))
                try channel.writeOutbound(HTTPResponsePart.end(nil)) // the full path's answer ends
                while try channel.readOutbound(as: HTTPResponsePart.self) != nil {}
            }
        }
    }

    @Test func answersNothingBeforeTheRequestsPassedOnAreAnswered() async throws {
        try await Self.withChannel { channel in
            // A PUT goes the full way; a GET pipelined behind it must not overtake it.
            try channel.writeInbound(Self.head(.put, Self.cardPath))
            try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: Self.card)))
            try channel.writeInbound(HTTPRequestPart.end(nil))
            try channel.writeInbound(Self.head(.get, Self.cardPath))
            try channel.writeInbound(HTTPRequestPart.end(nil))
            #expect(try Self.passedOn(channel) == ["PUT \(Self.cardPath)", "body", "end", "GET \(Self.cardPath)", "end"])
            #expect(try Self.answer(channel) == nil)

            // Both answers go out; the next GET is the handler's again.
            for _ in 0..<2 {
                try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .noContent)))
                try channel.writeOutbound(HTTPResponsePart.end(nil))
            }
            while try channel.readOutbound(as: HTTPResponsePart.self) != nil {}
            try channel.writeInbound(Self.head(.get, Self.cardPath))
            try channel.writeInbound(HTTPRequestPart.end(nil))
            #expect(try Self.passedOn(channel).isEmpty)
            #expect(try Self.answer(channel)?.body == Self.card)
        }
    }
}
