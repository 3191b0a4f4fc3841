import Foundation
import Testing

/// Body caps are enforced before the body is buffered, and `Expect: 100-continue` is answered
/// only when the request may go on (credentials present, declared length within the cap).
@Suite struct BodyLimitTests {
    static let card = Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:limit-1\r\nFN:Limit Test\r\nN:Test;Limit;;;\r\nEND:VCARD\r\n".utf8)

    @Test func oversizedPutWithExpectIsRefusedBeforeUpload() async throws {
        try await TestServer.with { server in
            let big = Data(repeating: UInt8(ascii: "a"), count: 11 << 20)
            let response = try await server.request(
                "PUT", "/dav/addressbooks/alice/default/big.vcf",
                headers: ["Content-Type": "text/vcard", "Expect": "100-continue"], body: big,
                extra: ["--expect100-timeout", "30"])
            #expect(response.status == 413)
            #expect(response.text.contains("max-resource-size"))
            #expect(!response.statusLines.contains { $0.contains(" 100") })
            #expect(response.uploadedBytes == 0)
        }
    }

    @Test func oversizedChunkedPutIsRefusedWith413() async throws {
        try await TestServer.with { server in
            let big = Data(repeating: UInt8(ascii: "a"), count: 11 << 20)
            let response = try await server.request(
                "PUT", "/dav/addressbooks/alice/default/big.vcf",
                headers: ["Content-Type": "text/vcard", "Transfer-Encoding": "chunked", "Expect": ""], body: big)
            #expect(response.status == 413)
            #expect(response.text.contains("max-resource-size"))
        }
    }

    @Test func configuredSmallerLimitApplies() async throws {
        try await TestServer.with(configure: { $0.limits.maxRequestBodySize = 1000 }) { server in
            let body = Data(repeating: UInt8(ascii: " "), count: 2000)
            let response = try await server.request("PROPFIND", "/dav/", headers: ["Depth": "0"], body: body)
            #expect(response.status == 413)
        }
    }

    @Test func expectContinueIsAnsweredWithoutTheOneSecondWait() async throws {
        try await TestServer.with { server in
            let response = try await server.request(
                "PUT", "/dav/addressbooks/alice/default/expect.vcf",
                headers: ["Content-Type": "text/vcard; charset=utf-8", "Expect": "100-continue"],
                body: Self.card, extra: ["--expect100-timeout", "30"])
            #expect(response.statusLines.first?.contains(" 100 Continue") == true)
            #expect(response.status != 413 && response.status != 417)
            #expect(response.uploadedBytes == Self.card.count)
        }
    }

    @Test func expectContinueWithoutCredentialsGets401BeforeAnyUpload() async throws {
        try await TestServer.with { server in
            let response = try await server.request(
                "PUT", "/dav/addressbooks/alice/default/anonymous.vcf", user: nil,
                headers: ["Content-Type": "text/vcard; charset=utf-8", "Expect": "100-continue"],
                body: Self.card, extra: ["--expect100-timeout", "30"])
            #expect(response.status == 401)
            #expect(!response.statusLines.contains { $0.contains(" 100") })
            #expect(response.uploadedBytes == 0)
            // The same request with credentials is then continued and stored.
            let retry = try await server.request(
                "PUT", "/dav/addressbooks/alice/default/anonymous.vcf",
                headers: ["Content-Type": "text/vcard; charset=utf-8", "Expect": "100-continue"],
                body: Self.card, extra: ["--expect100-timeout", "30"])
            #expect(retry.status == 201)
        }
    }
}
