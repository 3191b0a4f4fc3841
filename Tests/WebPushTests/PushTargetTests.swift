import Foundation
import Testing
import WebPush

@Suite struct PushTargetTests {
    static let strict = PushTarget.Policy()
    static let loopback = PushTarget.Policy(allowLoopback: true)

    @Test(arguments: [
        "https://push.example.net/wpush/v2/gAAAAABk",
        "https://ntfy.example.org/upAbC123?up=1",
        "https://push.example.net:8443/x",
        "HTTPS://Push.Example.NET/x",
        "https://push.example.net./x",
        "https://münchen.example/x",
        "https://ex%61mple.com/x",
        "https://8.8.8.8/x",
        "https://172.32.0.1/x",                       // just past 172.16/12
        "https://100.128.0.1/x",                      // just past 100.64/10
        "https://[2606:4700:4700::1111]/x",
        "https://[::ffff:8.8.8.8]/x",                 // mapped, public underneath
        "https://[2002:808:808::1]/x",                // 6to4 of 8.8.8.8
    ])
    func accepts(_ text: String) throws {
        let url = try PushTarget.validate(text, policy: Self.strict)
        #expect(url.scheme?.lowercased() == "https")
    }

    @Test(arguments: [
        ("http://push.example.net/x", .schemeNotAllowed("http")),
        ("ftp://push.example.net/x", .schemeNotAllowed("ftp")),
        ("javascript:alert(1)", .schemeNotAllowed("javascript")),
        ("/relative/path", .notAbsolute),
        ("push.example.net/x", .notAbsolute),
        ("not a url", .notAbsolute),
        ("https:///x", .missingHost),
        ("https://user:secret@push.example.net/x", .userInfo),
        ("https://@push.example.net/x", .userInfo),
        ("https://push.example.net:0/x", .invalidPort(0)),
        ("https://push.example.net:70000/x", .invalidPort(70000)),
        ("https://localhost/x", .notPublic("localhost")),
        ("https://push.localhost/x", .notPublic("push.localhost")),
        ("https://LOCALHOST./x", .notPublic("localhost.")),
        ("https://127.0.0.1/x", .notPublic("127.0.0.1")),
        ("https://127.8.9.10:8443/x", .notPublic("127.8.9.10")),
        ("https://10.1.2.3/x", .notPublic("10.1.2.3")),
        ("https://172.16.0.1/x", .notPublic("172.16.0.1")),
        ("https://172.31.255.255/x", .notPublic("172.31.255.255")),
        ("https://192.168.1.1/x", .notPublic("192.168.1.1")),
        ("https://169.254.169.254/latest/meta-data/", .notPublic("169.254.169.254")),
        ("https://100.64.0.1/x", .notPublic("100.64.0.1")),
        ("https://100.127.255.255/x", .notPublic("100.127.255.255")),
        ("https://0.0.0.0/x", .notPublic("0.0.0.0")),
        ("https://0.1.2.3/x", .notPublic("0.1.2.3")),
        ("https://224.0.0.1/x", .notPublic("224.0.0.1")),
        ("https://255.255.255.255/x", .notPublic("255.255.255.255")),
        ("https://192.0.2.1/x", .notPublic("192.0.2.1")),
        ("https://[::1]/x", .notPublic("::1")),
        ("https://[::]/x", .notPublic("::")),
        ("https://[fe80::1]/x", .notPublic("fe80::1")),
        ("https://[febf::1]/x", .notPublic("febf::1")),
        ("https://[fc00::1]/x", .notPublic("fc00::1")),
        ("https://[fd12:3456:789a::1]/x", .notPublic("fd12:3456:789a::1")),
        ("https://[ff02::1]/x", .notPublic("ff02::1")),
        ("https://[2001:db8::1]/x", .notPublic("2001:db8::1")),
        ("https://[::ffff:127.0.0.1]/x", .notPublic("::ffff:127.0.0.1")),
        ("https://[::FFFF:10.0.0.1]/x", .notPublic("::ffff:10.0.0.1")),
        ("https://[::ffff:a9fe:a9fe]/x", .notPublic("::ffff:a9fe:a9fe")),   // 169.254.169.254
        ("https://[::127.0.0.1]/x", .notPublic("::127.0.0.1")),             // IPv4-compatible
        ("https://[64:ff9b::a00:1]/x", .notPublic("64:ff9b::a00:1")),       // NAT64 of 10.0.0.1
        ("https://[2002:c0a8:101::1]/x", .notPublic("2002:c0a8:101::1")),   // 6to4 of 192.168.1.1
        ("https://[fe80::1%25eth0]/x", .invalidHost("fe80::1%eth0")),
        ("https://2130706433/x", .invalidHost("2130706433")),               // 127.0.0.1 to inet_aton
        ("https://127.1/x", .invalidHost("127.1")),
        ("https://0x7f.0.0.1/x", .invalidHost("0x7f.0.0.1")),
        ("https://10.0.0.0x1/x", .invalidHost("10.0.0.0x1")),
        ("https://%31%32%37.0.0.1/x", .notPublic("127.0.0.1")),               // escapes decoded first
    ] as [(String, PushTargetError)])
    func refuses(_ text: String, because expected: PushTargetError) {
        #expect(throws: expected) { try PushTarget.validate(text, policy: Self.strict) }
    }

    @Test func limitsTheURLTo1000UTF8Bytes() throws {
        let prefix = "https://push.example.net/"
        let fits = prefix + String(repeating: "a", count: 1000 - prefix.utf8.count)
        #expect(try PushTarget.validate(fits, policy: Self.strict).absoluteString == fits)
        #expect(throws: PushTargetError.tooLong(bytes: 1001)) {
            try PushTarget.validate(fits + "a", policy: Self.strict)
        }
        // Bytes, not characters: 488 two-byte characters are fewer than 1000 characters.
        let wide = prefix + String(repeating: "é", count: 488)
        #expect(wide.count < 1000)
        #expect(throws: PushTargetError.tooLong(bytes: 1001)) { try PushTarget.validate(wide, policy: Self.strict) }
    }

    @Test(arguments: [
        "http://127.0.0.1:8080/push/1",
        "https://127.0.0.1/push",
        "http://127.2.3.4:8080/push",
        "http://[::1]:8080/push",
        "http://[::ffff:127.0.0.1]:8080/push",
        "http://localhost:8080/push",
        "https://push.example.net/x",
    ])
    func allowLoopbackLetsLoopbackThrough(_ text: String) throws {
        _ = try PushTarget.validate(text, policy: Self.loopback)
    }

    @Test(arguments: [
        ("http://10.0.0.1:8080/push", .notPublic("10.0.0.1")),
        ("https://192.168.0.1/push", .notPublic("192.168.0.1")),
        ("http://[fe80::1]/push", .notPublic("fe80::1")),
        ("http://push.example.net/x", .schemeNotAllowed("http")),
        ("http://8.8.8.8/x", .schemeNotAllowed("http")),
    ] as [(String, PushTargetError)])
    func allowLoopbackStillRefusesTheRest(_ text: String, because expected: PushTargetError) {
        #expect(throws: expected) { try PushTarget.validate(text, policy: Self.loopback) }
    }

    @Test func allowedOriginsRestrictTheTargets() throws {
        let policy = PushTarget.Policy(allowedOrigins: ["https://push.example.net", "https://NTFY.example.org:443/"])
        _ = try PushTarget.validate("https://push.example.net/wpush/1", policy: policy)
        _ = try PushTarget.validate("https://PUSH.example.net:443/wpush/1", policy: policy)
        _ = try PushTarget.validate("https://ntfy.example.org/up1", policy: policy)
        #expect(throws: PushTargetError.originNotAllowed("https://other.example.net")) {
            try PushTarget.validate("https://other.example.net/wpush/1", policy: policy)
        }
        #expect(throws: PushTargetError.originNotAllowed("https://push.example.net:8443")) {
            try PushTarget.validate("https://push.example.net:8443/wpush/1", policy: policy)
        }
        // The allow-list does not open private addresses.
        #expect(throws: PushTargetError.notPublic("10.0.0.1")) {
            try PushTarget.validate("https://10.0.0.1/x",
                                    policy: .init(allowedOrigins: ["https://10.0.0.1"]))
        }
    }

    @Test func errorsSayWhatIsWrong() {
        #expect(PushTargetError.notPublic("10.0.0.1").description == "the push resource's host 10.0.0.1 is not a public address")
        #expect(PushTargetError.tooLong(bytes: 1001).description.contains("at most 1000"))
        #expect(PushTargetError.schemeNotAllowed("http").description.contains("https"))
    }
}

@Suite struct IPAddressTests {
    @Test(arguments: [
        ("8.8.8.8", true), ("1.1.1.1", true), ("172.15.255.255", true), ("192.169.0.1", true),
        ("100.63.255.255", true), ("198.20.0.1", true), ("223.255.255.255", true),
        ("0.0.0.0", false), ("10.0.0.1", false), ("100.64.0.0", false), ("127.0.0.1", false),
        ("169.254.0.1", false), ("172.16.0.0", false), ("192.0.0.8", false), ("192.0.2.1", false),
        ("192.88.99.1", false), ("192.168.255.255", false), ("198.18.0.1", false), ("198.51.100.7", false),
        ("203.0.113.9", false), ("224.0.0.251", false), ("240.0.0.1", false), ("255.255.255.255", false),
        ("2606:4700:4700::1111", true), ("2a00:1450:4001:80b::200e", true), ("::ffff:8.8.8.8", true),
        ("64:ff9b::808:808", true), ("2002:808:808::1", true),
        ("::", false), ("::1", false), ("::ffff:0:0", false), ("::ffff:192.168.0.1", false),
        ("64:ff9b:1::1", false), ("100::1", false), ("2001::1", false), ("2001:db8::1", false),
        ("3fff::1", false), ("fc00::1", false), ("fdff::1", false), ("fe80::1", false), ("fec0::1", false),
        ("ff02::1", false), ("ff0e::1", false),
    ] as [(String, Bool)])
    func classifiesPublicAddresses(_ text: String, isPublic: Bool) throws {
        let address = try #require(IPAddress(text))
        #expect(address.isPublic == isPublic)
    }

    @Test func loopbackIncludesAllOf127AndMapped() {
        #expect(IPAddress("127.255.0.1")!.isLoopback)
        #expect(IPAddress("::1")!.isLoopback)
        #expect(IPAddress("::ffff:127.0.0.1")!.isLoopback)
        #expect(!IPAddress("::2")!.isLoopback)
        #expect(!IPAddress("128.0.0.1")!.isLoopback)
        #expect(PushTarget.Policy(allowLoopback: true).permits(IPAddress("127.0.0.1")!))
        #expect(!PushTarget.Policy().permits(IPAddress("127.0.0.1")!))
        #expect(!PushTarget.Policy(allowLoopback: true).permits(IPAddress("10.0.0.1")!))
    }

    @Test func parsesOnlyCanonicalText() {
        #expect(IPAddress("127.1") == nil)
        #expect(IPAddress("0x7f000001") == nil)
        #expect(IPAddress("[::1]") == nil)
        #expect(IPAddress("example.com") == nil)
        #expect(IPAddress(bytes: [1, 2, 3]) == nil)
        #expect(IPAddress(bytes: [10, 0, 0, 1])?.description == "10.0.0.1")
        #expect(IPAddress("2001:DB8:0:0::1")?.description == "2001:db8::1")
    }
}
