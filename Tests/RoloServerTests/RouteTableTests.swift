import Foundation
import HTTPTypes
import Hummingbird
import Testing
@testable import RoloServer

/// The route table (`RoloResponder.routeTable`): which route answers what, and what each
/// route's authentication and body limit do, through a real server.
@Suite struct RouteTableTests {
    private func handler(_ method: String, _ path: String, webUI: Bool = true, accept: String? = nil) -> Route.Handler? {
        var head = HTTPRequest(method: HTTPRequest.Method(method)!, scheme: "http", authority: "127.0.0.1", path: path)
        if let accept { head.headerFields[.accept] = accept }
        let request = Request(head: head, body: .init(buffer: .init()))
        return RoloResponder.routeTable(webUI: webUI).first { $0.matches(method: method, path: path, request: request) }?.handler
    }

    @Test func everyPathAndMethodHasARouteAndTheRestIsDAV() {
        #expect(handler("PROPFIND", "/dav/addressbooks/alice/") == .dav)
        #expect(handler("FROB", "/anything") == .dav)
        #expect(handler("POST", "/health") == .dav)
        #expect(handler("GET", "/health") == .health)
        #expect(handler("HEAD", "/health") == .health)
        #expect(handler("GET", "/metrics") == .metrics)
        #expect(handler("PROPFIND", "/.well-known/carddav/") == .wellKnownRedirect)
        #expect(handler("GET", "/api/app-passwords") == .accountAPI)
        #expect(handler("GET", "/feeds/abc") == .feed)
        #expect(handler("POST", "/feeds") == .feed)
        #expect(handler("GET", "/feedsx") == .dav)
    }

    @Test func theWebUIsRoutesExistOnlyWithTheWebUI() {
        #expect(handler("GET", "/web/") == .web)
        #expect(handler("POST", "/web") == .web)
        #expect(handler("GET", "/webby") == .dav)
        #expect(handler("GET", "/", accept: "text/html") == .browserRedirect)
        #expect(handler("GET", "/", accept: "text/vcard") == .dav)
        #expect(handler("GET", "/web/", webUI: false) == .dav)
        #expect(handler("GET", "/", webUI: false, accept: "text/html") == .dav)
    }

    @Test func aMethodNoRouteNamesReachesTheEngineWhichAnswers501WithAllow() async throws {
        try await TestServer.with { server in
            let answer = try await server.request("SEARCH", "/dav/addressbooks/alice/")
            #expect(answer.status == 501)
            #expect(answer.headers["allow"]?.contains("PROPFIND") == true)
        }
    }

    @Test func routingFollowsThePercentDecodedPath() async throws {
        try await TestServer.with { server in
            let encoded = try await server.request("GET", "/%77eb/", user: nil)
            let plain = try await server.request("GET", "/web/", user: nil)
            #expect(encoded.status == plain.status)
            #expect(encoded.headers["location"] == plain.headers["location"])
            #expect(try await server.request("GET", "/%68ealth", user: nil).status == 200)
        }
    }

    @Test func basicAuthenticationComesBeforeTheBodyLimit() async throws {
        try await TestServer.with(configure: { $0.limits.maxRequestBodySize = 16 }) { server in
            let big = Data(repeating: UInt8(ascii: "x"), count: 64)
            let anonymous = try await server.request("PROPFIND", "/dav/", user: nil, body: big)
            #expect(anonymous.status == 401)
            #expect(anonymous.headers["www-authenticate"] != nil)
            #expect(try await server.request("PROPFIND", "/dav/", body: big).status == 413)
        }
    }
}
