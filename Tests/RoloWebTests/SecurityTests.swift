import Foundation
import Testing
@testable import RoloWeb

/// The pieces of the web UI's defences, one by one.
@Suite struct SecurityTests {
    @Test func onlySafeSchemesBecomeLinks() {
        for safe in ["https://example.org/x", "http://example.org", "mailto:a@example.org", "tel:+15550100", "sms:+1555",
                     "xmpp:ann@example.org", "HTTPS://EXAMPLE.ORG"] {
            #expect(SafeLink.href(safe) != nil, "\(safe)")
        }
        for unsafe in ["javascript:alert(1)", "JavaScript:alert(1)", " javascript:alert(1)", "java\nscript:alert(1)",
                       "data:text/html,<script>alert(1)</script>", "vbscript:msgbox", "file:///etc/passwd", "//evil.example",
                       "http:evil", "https:/x", "ftp://example.org", "http://exa mple.org", "\u{0000}http://x", ""] {
            #expect(SafeLink.href(unsafe) == nil, "\(unsafe)")
        }
        #expect(SafeLink.web("www.example.org") == "https://www.example.org")
        #expect(SafeLink.web("javascript:alert(1)") == nil)
        #expect(SafeLink.mailto("ann@example.org") == "mailto:ann@example.org")
        #expect(SafeLink.mailto("javascript:alert(1)@x") == nil)
        #expect(SafeLink.tel("+1 (555) 010-0") == "tel:+15550100")
        #expect(SafeLink.tel("call me <b>") == nil)
    }

    @Test func cursorsRoundTripAndGarbageIsTheStart() {
        let cursor = ListingCursorFixture.make(sortKey: "anna\u{00E9}", name: "a/b?c=d&e.vcf")
        let encoded = ListCursorCoding.encode(cursor)
        #expect(encoded.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(ListCursorCoding.decode(encoded) == cursor)
        for garbage in ["", "!!!", "%00", "bm9udWw", String(repeating: "A", count: 5000)] {
            #expect(ListCursorCoding.decode(garbage) == nil, "\(garbage.prefix(10))")
        }
    }

    @Test func picturesAreRecognisedByTheirBytesOnly() {
        #expect(ImageSniffer.mediaType(of: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0]) == "image/jpeg")
        #expect(ImageSniffer.mediaType(of: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]) == "image/png")
        #expect(ImageSniffer.mediaType(of: Array("GIF89a....".utf8)) == "image/gif")
        #expect(ImageSniffer.mediaType(of: Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)) == "image/webp")
        #expect(ImageSniffer.mediaType(of: Array("<svg xmlns=\"http://www.w3.org/2000/svg\"><script/></svg>".utf8)) == nil)
        #expect(ImageSniffer.mediaType(of: Array("<?xml version=\"1.0\"?><svg/>".utf8)) == nil)
        #expect(ImageSniffer.mediaType(of: Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8)) == nil)
        #expect(ImageSniffer.mediaType(of: [UInt8]()) == nil)
    }

    @Test func theOriginCheckWantsThisServer() {
        let expected = ["http://127.0.0.1:8800"]
        #expect(OriginCheck.allows(fetchSite: nil, origin: nil, expected: expected))
        #expect(OriginCheck.allows(fetchSite: "same-origin", origin: "http://127.0.0.1:8800", expected: expected))
        #expect(OriginCheck.allows(fetchSite: nil, origin: "HTTP://127.0.0.1:8800/", expected: expected))
        #expect(!OriginCheck.allows(fetchSite: "cross-site", origin: nil, expected: expected))
        #expect(!OriginCheck.allows(fetchSite: "same-site", origin: nil, expected: expected))
        #expect(!OriginCheck.allows(fetchSite: nil, origin: "http://127.0.0.1:9999", expected: expected))
        #expect(!OriginCheck.allows(fetchSite: nil, origin: "null", expected: expected))
        #expect(!OriginCheck.allows(fetchSite: nil, origin: "https://evil.example", expected: expected))
        #expect(OriginCheck.allows(fetchSite: nil, origin: "https://rolo.example", expected: ["https://rolo.example:443"]))
        #expect(OriginCheck.origin(host: "rolo.example", secure: true) == "https://rolo.example")
        #expect(OriginCheck.origin(host: "evil/x", secure: false) == nil)
    }

    @Test func tokensAreRandomAndComparedWhole() {
        let one = Tokens.random(bytes: 32), two = Tokens.random(bytes: 32)
        #expect(one != two && one.count == 43)
        #expect(Tokens.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Tokens.constantTimeEquals(one, one))
        #expect(!Tokens.constantTimeEquals(one, two))
        #expect(!Tokens.constantTimeEquals(one, String(one.dropLast())))
    }

    @Test func cookiesAreHttpOnlyLaxAndSecureBehindTLS() {
        let plain = Cookies.setCookie(name: Cookies.sessionName(secure: false), value: "t", secure: false, maxAge: 60)
        #expect(plain == "rolo_session=t; Path=/; HttpOnly; SameSite=Lax; Max-Age=60")
        let secure = Cookies.setCookie(name: Cookies.sessionName(secure: true), value: "t", secure: true, maxAge: nil)
        #expect(secure == "__Host-rolo_session=t; Path=/; HttpOnly; SameSite=Lax; Secure")
        #expect(Cookies.parse("a=1; rolo_session=xyz; b=\"2\"") == ["a": "1", "rolo_session": "xyz", "b": "2"])
    }

    @Test func nextAfterSignInStaysInTheUI() {
        #expect(WebApp.safeNext("/web/b/default/", base: "/web") == "/web/b/default/")
        for bad in ["https://evil.example/", "//evil.example", "/web//evil.example", "/dav/", "/web\\evil", "/webx", "/web/\nx"] {
            #expect(WebApp.safeNext(bad, base: "/web") == nil, "\(bad)")
        }
    }

    @Test func formsAreReadUrlEncodedAndMultipart() throws {
        let encoded = try FormData.parse(body: Data("a=1&b=x+y%26z&c=&c=2&%E2%9C%93=%E2%9C%93".utf8),
                                         contentType: "application/x-www-form-urlencoded")
        #expect(encoded["a"] == "1" && encoded["b"] == "x y&z" && encoded.values("c") == ["", "2"] && encoded["✓"] == "✓")
        let body = [
            "--XyZ", "Content-Disposition: form-data; name=\"csrf\"", "", "token", "--XyZ",
            "Content-Disposition: form-data; name=\"photo\"; filename=\"p.jpg\"", "Content-Type: image/jpeg", "",
            "\u{FF}binary\r\nwith a line", "--XyZ", "Content-Disposition: form-data; name=\"empty\"; filename=\"\"",
            "Content-Type: application/octet-stream", "", "", "--XyZ--", "",
        ].joined(separator: "\r\n")
        let multipart = try FormData.parse(body: Data(body.utf8), contentType: "multipart/form-data; boundary=XyZ")
        #expect(multipart["csrf"] == "token")
        let file = try #require(multipart.file("photo"))
        #expect(file.filename == "p.jpg" && file.contentType == "image/jpeg")
        #expect(String(decoding: file.data, as: UTF8.self) == "\u{FF}binary\r\nwith a line")
        #expect(multipart.file("empty") == nil)
        #expect(throws: FormData.FormError.self) { try FormData.parse(body: Data(), contentType: "application/json") }
        #expect(throws: FormData.FormError.self) { try FormData.parse(body: Data("x".utf8), contentType: "multipart/form-data") }
    }

    @Test func labelsReadAsPhonesShowThem() {
        #expect(Formatting.label(.mobile, default: "Phone") == "Mobile")
        #expect(Formatting.label(.homeFax, default: "Phone") == "Home fax")
        #expect(Formatting.label(.custom("Boat"), default: "Phone") == "Boat")
        #expect(Formatting.label(nil, default: "Phone") == "Phone")
        #expect(Formatting.count(1, cap: 1000) == "1 contact")
        #expect(Formatting.count(1000, cap: 1000) == "1\u{00A0}000+ contacts")
        #expect(Formatting.count(12_345, cap: 100_000) == "12\u{00A0}345 contacts")
        #expect(EditorForm.label(code: "home", custom: "") == .home)
        #expect(EditorForm.label(code: "custom", custom: "Boat") == .custom("Boat"))
        #expect(EditorForm.label(code: "mobile", custom: "work") == .work)
        #expect(EditorForm.label(code: "", custom: "") == nil)
    }
}

import RoloStore

enum ListingCursorFixture {
    static func make(sortKey: String, name: String) -> ListingCursor { ListingCursor(sortKey: sortKey, name: name) }
}
