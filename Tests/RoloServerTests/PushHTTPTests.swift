import Crypto
import Foundation
import PushTestSupport
import RoloServer
import RoloStore
import Synchronization
import Testing
import WebPush

/// WebDAV-Push end to end: a real server, real SQLite, curl as the client, and a push
/// service inside the test on 127.0.0.1 that records what Rolo sends. The test holds the
/// device's private key and decrypts every message itself.
@Suite struct PushHTTPTests {
    static let publicURL = URL(string: "https://contacts.example.org")!
    static let pushNamespace = "https://bitfire.at/webdav-push"

    /// A device as DAVx5 is one: its own P-256 key and auth secret.
    struct Device {
        let key = P256.KeyAgreement.PrivateKey()
        let authSecret = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        var publicKeyText: String { Base64URL.encode(key.publicKey.x963Representation) }
        var authSecretText: String { Base64URL.encode(authSecret) }
    }

    /// `quiet`: the notifier's quiet period (short, so tests wait little; the burst test
    /// makes it long enough that a loaded machine's gaps between PUTs stay inside it).
    static func withPushServer<T>(clock: StoreClock = .system, quiet: Duration = .milliseconds(200),
                                  firstBackoff: TimeInterval = 30,
                                  _ body: (TestServer, FakePushService) async throws -> T) async throws -> T {
        try await withFakePushService { service in
            try await TestServer.with(configure: { configuration in
                configuration.publicURL = publicURL
                configuration.push.allowLoopback = true
                configuration.push.notifier.quietPeriod = quiet
                configuration.push.notifier.maximumDelay = max(quiet * 10, .seconds(5))
                configuration.push.notifier.firstBackoff = firstBackoff
            }, clock: clock) { server in
                try await body(server, service)
            }
        }
    }

    /// The body DAVx5 4.5 sends: no trigger, no content-encoding.
    static func davx5Body(resource: String, device: Device, expires: String? = nil) -> Data {
        Data("""
            <?xml version="1.0" encoding="utf-8"?>
            <push-register xmlns="https://bitfire.at/webdav-push">
              <subscription><web-push-subscription>
                <push-resource>\(resource)</push-resource>
                <subscription-public-key type="p256dh">\(device.publicKeyText)</subscription-public-key>
                <auth-secret>\(device.authSecretText)</auth-secret>
              </web-push-subscription></subscription>
              \(expires.map { "<expires>\($0)</expires>" } ?? "")
            </push-register>
            """.utf8)
    }

    static func register(_ server: TestServer, book: String = "/dav/addressbooks/alice/default/", user: String = "alice",
                         resource: URL, device: Device, expires: String? = nil) async throws -> CurlResult {
        try await server.request("POST", book, user: user, headers: ["Content-Type": "application/xml; charset=utf-8"],
                                 body: davx5Body(resource: resource.absoluteString, device: device, expires: expires))
    }

    static func card(_ uid: String) -> Data {
        Data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(uid)\r\nEND:VCARD\r\n".utf8)
    }

    static func put(_ server: TestServer, _ uid: String, headers: [String: String] = [:]) async throws -> CurlResult {
        try await server.request("PUT", "/dav/addressbooks/alice/default/\(uid).vcf",
                                 headers: headers.merging(["Content-Type": "text/vcard"]) { a, _ in a }, body: card(uid))
    }

    /// The text of the first element called `name` (any prefix, any attributes).
    static func property(_ name: String, in text: String) -> String? {
        let pattern = "<(?:[A-Za-z0-9]+:)?\(name)(?:\\s[^>]*)?>([^<]*)</"
        guard let regex = try? NSRegularExpression(pattern: pattern),
              let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
              let range = Range(match.range(at: 1), in: text) else { return nil }
        return String(text[range])
    }

    /// The default book's push properties and sync token (Depth 0; DAVx5's Depth 1 PROPFIND
    /// of the home is checked in the discovery test).
    static func bookProperties(_ server: TestServer, path: String = "/dav/addressbooks/alice/default/",
                               depth: String = "0") async throws -> String {
        let response = try await server.request("PROPFIND", path, headers: ["Depth": depth], body: Data("""
            <?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:p="https://bitfire.at/webdav-push">
            <d:prop><p:transports/><p:topic/><p:supported-triggers/><d:sync-token/></d:prop></d:propfind>
            """.utf8))
        #expect(response.status == 207)
        return response.text
    }

    /// The decrypted push-message and its VAPID claims.
    static func open(_ received: FakePushService.Received, device: Device) throws -> (xml: String, vapid: VAPIDVerification.Verified) {
        let plaintext = try WebPushDecryption.decrypt(received.body, privateKey: device.key, authSecret: device.authSecret)
        let vapid = try VAPIDVerification.verify(authorization: try #require(received.headers["authorization"]))
        return (String(decoding: plaintext, as: UTF8.self), vapid)
    }

    @Test func addressBooksAdvertisePushAndProtectItsProperties() async throws {
        try await Self.withPushServer { server, _ in
            // As DAVx5 asks: Depth 1 on the home. The home itself has none of them.
            let listing = try await Self.bookProperties(server, path: "/dav/addressbooks/alice/", depth: "1")
            let responses = listing.components(separatedBy: "response>").filter { $0.contains("href>") }
            let home = try #require(responses.first { $0.contains("href>/dav/addressbooks/alice/<") })
            let book = try #require(responses.first { $0.contains("href>/dav/addressbooks/alice/default/<") })
            #expect(!home.contains("vapid-public-key") && book.contains("vapid-public-key"))
            let text = try await Self.bookProperties(server)
            let key = try #require(Self.property("vapid-public-key", in: text))
            #expect(key.count == 87 && Base64URL.decode(key)?.first == 0x04)
            #expect(text.contains("type=\"p256ecdsa\""))
            let topic = try #require(Self.property("topic", in: text))
            #expect(topic.count == 32)
            #expect(text.contains("content-update"))

            let options = try await server.request("OPTIONS", "/dav/addressbooks/alice/default/")
            #expect(options.headers["dav"]?.contains("webdav-push") == true)
            #expect(options.headers["allow"]?.contains("POST") == true)
            let homeOptions = try await server.request("OPTIONS", "/dav/addressbooks/alice/")
            #expect(homeOptions.headers["dav"]?.contains("webdav-push") == false)

            let proppatch = try await server.request("PROPPATCH", "/dav/addressbooks/alice/default/", body: Data("""
                <?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:p="https://bitfire.at/webdav-push">
                <d:set><d:prop><p:topic>mine</p:topic></d:prop></d:set></d:propertyupdate>
                """.utf8))
            #expect(proppatch.text.contains("cannot-modify-protected-property"))
            #expect(try await Self.property("topic", in: Self.bookProperties(server)) == topic)
        }
    }

    @Test func aDAVx5RegistrationGetsAnEncryptedSignedMessageWithTheBooksTopicAndToken() async throws {
        try await Self.withPushServer { server, service in
            let device = Device()
            let registered = try await Self.register(server, resource: service.url("/up/phone"), device: device)
            #expect(registered.status == 204)
            let location = try #require(registered.headers["location"])
            #expect(location.hasPrefix("https://contacts.example.org/dav/push/"))
            let expires = try #require(registered.headers["expires"])
            #expect(expires.hasSuffix(" GMT"))
            // Asked for nothing: three days.
            let granted = try #require(Self.imfDate(expires))
            #expect(abs(granted.timeIntervalSinceNow - 3 * 86_400) < 120)

            // DAVx5 renews about daily: the same registration, the same Location.
            let again = try await Self.register(server, resource: service.url("/up/phone"), device: device)
            #expect(again.status == 204 && again.headers["location"] == location)
            #expect(try await server.store.pushRegistrations(user: "alice").count == 1)

            #expect(try await Self.put(server, "ann").status == 201)
            let received = await service.waitForRequests(count: 1)
            try #require(received.count == 1)
            let message = received[0]
            #expect(message.path == "/up/phone")
            #expect(message.headers["content-encoding"] == "aes128gcm")
            #expect(message.headers["ttl"].flatMap(Int.init) ?? 0 > 0)
            #expect(message.headers["urgency"] == "normal")
            let (xml, vapid) = try Self.open(message, device: device)
            let properties = try await Self.bookProperties(server)
            #expect(xml.contains("<topic>\(try #require(Self.property("topic", in: properties)))</topic>"))
            #expect(xml.contains("<D:sync-token>\(try #require(Self.property("sync-token", in: properties)))</D:sync-token>"))
            #expect(xml.contains("xmlns=\"https://bitfire.at/webdav-push\"") && xml.contains("xmlns:D=\"DAV:\""))
            #expect(vapid.claims.aud == service.origin)
            #expect(vapid.signatureLength == 64)
            let exp = Date(timeIntervalSince1970: TimeInterval(vapid.claims.exp))
            #expect(exp > Date() && exp < Date().addingTimeInterval(86_400))
            #expect(properties.contains(vapid.publicKeyText))
            #expect(vapid.claims.sub == "https://contacts.example.org")
        }
    }

    @Test func requestedExpiryIsCappedAtSevenDaysAndNeverBelowADayAndAHalf() async throws {
        try await Self.withPushServer { server, service in
            func granted(_ requested: Date) async throws -> TimeInterval {
                let response = try await Self.register(server, resource: service.url("/up/\(UUID())"), device: Device(),
                                                       expires: HTTPDateText.format(requested))
                #expect(response.status == 204)
                let header = try #require(response.headers["expires"])
                return try #require(Self.imfDate(header)).timeIntervalSinceNow
            }
            let capped = try await granted(Date().addingTimeInterval(30 * 86_400))
            let raised = try await granted(Date().addingTimeInterval(600))
            let kept = try await granted(Date().addingTimeInterval(4 * 86_400))
            #expect(abs(capped - 7 * 86_400) < 120)
            #expect(abs(raised - 36 * 3600) < 120)
            #expect(abs(kept - 4 * 86_400) < 120)
        }
    }

    @Test func onlyTheOwnerDeletesARegistrationAndAStrangerLearnsNothing() async throws {
        try await Self.withPushServer { server, service in
            let registered = try await Self.register(server, resource: service.url("/up/a"), device: Device())
            let location = try #require(registered.headers["location"])
            let path = try #require(URL(string: location)?.path)
            #expect(try await server.request("DELETE", path, user: "bob").status == 404)
            #expect(try await server.request("DELETE", path).status == 204)
            #expect(try await server.request("DELETE", path).status == 404)
            #expect(try await server.request("DELETE", "/dav/push/0123456789abcdef0123456789abcdef").status == 404)
            #expect(try await server.request("DELETE", path, user: nil).status == 401)
        }
    }

    @Test func badRegistrationsAre403WithTheDraftsElementAndStoreNothing() async throws {
        try await Self.withPushServer { server, service in
            let device = Device()
            func refused(_ body: String, _ condition: String = "invalid-subscription") async throws {
                let response = try await server.request("POST", "/dav/addressbooks/alice/default/",
                                                        headers: ["Content-Type": "application/xml"], body: Data(body.utf8))
                #expect(response.status == 403, "\(body)")
                #expect(response.text.contains(condition) && response.text.contains(Self.pushNamespace), "\(response.text)")
            }
            func body(resource: String = service.url("/up/x").absoluteString, key: String = device.publicKeyText,
                      secret: String = device.authSecretText, extra: String = "", trigger: String = "") -> String {
                """
                <push-register xmlns="https://bitfire.at/webdav-push" xmlns:D="DAV:"><subscription><web-push-subscription>
                <push-resource>\(resource)</push-resource>\(extra)
                <subscription-public-key type="p256dh">\(key)</subscription-public-key><auth-secret>\(secret)</auth-secret>
                </web-push-subscription></subscription>\(trigger)</push-register>
                """
            }
            try await refused(body(resource: "ftp://push.example.org/x"))
            try await refused(body(resource: "/relative/path"))
            try await refused(body(resource: "https://push.example.org/" + String(repeating: "a", count: 1000)))
            try await refused(body(resource: "https://10.1.2.3/up"))
            try await refused(body(resource: "https://[fe80::1]/up"))
            try await refused(body(resource: "https://169.254.169.254/latest/meta-data"))
            // Off the curve: a valid-looking 65-byte point that is not on P-256.
            try await refused(body(key: Base64URL.encode(Data([0x04] + Array(repeating: 1, count: 64)))))
            try await refused(body(key: Base64URL.encode(Data(repeating: 4, count: 33))))
            try await refused(body(secret: Base64URL.encode(Data(repeating: 1, count: 15))))
            try await refused(body(extra: "<content-encoding>aesgcm</content-encoding>"))
            try await refused(body(trigger: "<trigger><property-update><D:depth>0</D:depth></property-update></trigger>"),
                              "no-supported-trigger")
            #expect(try await server.store.pushRegistrations(user: "alice").isEmpty)
            // The spec's form with a trigger and an encoding is of course accepted.
            let full = body(extra: "<content-encoding>aes128gcm</content-encoding>",
                            trigger: "<trigger><content-update><D:depth>infinity</D:depth></content-update></trigger>")
            let accepted = try await server.request("POST", "/dav/addressbooks/alice/default/",
                                                    headers: ["Content-Type": "application/xml"], body: Data(full.utf8))
            #expect(accepted.status == 204)
            // Another user's book is not there at all; a card is not a book.
            #expect(try await Self.register(server, book: "/dav/addressbooks/alice/default/", user: "bob",
                                            resource: service.url("/up/b"), device: device).status == 404)
            #expect(try await Self.put(server, "ann").status == 201)
            #expect(try await server.request("POST", "/dav/addressbooks/alice/default/ann.vcf",
                                             body: Data(body().utf8)).status == 405)
        }
    }

    @Test func aBurstOfThirtyChangesIsOneMessageWithTheLastToken() async throws {
        try await Self.withPushServer(quiet: .seconds(2)) { server, service in
            let device = Device()
            #expect(try await Self.register(server, resource: service.url("/up/burst"), device: device).status == 204)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<30 { group.addTask { try await Self.put(server, "c\(index)").status } }
                for try await status in group { #expect(status == 201) }
            }
            let first = await service.waitForRequests(count: 1, timeout: .seconds(30))
            try #require(first.count == 1)
            // Nothing else follows for well past the quiet period.
            try await Task.sleep(for: .seconds(3))
            #expect(service.received.count == 1)
            let (xml, _) = try Self.open(first[0], device: device)
            let token = try #require(Self.property("sync-token", in: try await Self.bookProperties(server)))
            #expect(xml.contains(token))
        }
    }

    @Test func pushDontNotifySparesTheWritersRegistrationAndStarSparesEveryone() async throws {
        try await Self.withPushServer { server, service in
            let writer = try await Self.register(server, resource: service.url("/up/writer"), device: Device())
            #expect(try await Self.register(server, resource: service.url("/up/other"), device: Device()).status == 204)
            let location = try #require(writer.headers["location"])
            #expect(try await Self.put(server, "ann", headers: ["Push-Dont-Notify": "\"\(location)\""]).status == 201)
            let received = await service.waitForRequests(count: 1)
            try await Task.sleep(for: .seconds(1))
            #expect(service.received.map(\.path) == ["/up/other"])
            #expect(received.count == 1)

            #expect(try await Self.put(server, "bea", headers: ["Push-Dont-Notify": "*"]).status == 201)
            try await Task.sleep(for: .seconds(1))
            #expect(service.received.count == 1)
            // A DELETE honours it too.
            _ = try await server.request("DELETE", "/dav/addressbooks/alice/default/bea.vcf",
                                         headers: ["Push-Dont-Notify": "\"\(location)\""])
            _ = await service.waitForRequests(count: 2)
            #expect(service.received.map(\.path) == ["/up/other", "/up/other"])
        }
    }

    /// The first retry an hour away: on a loaded machine the test once took longer than the
    /// default 30 s, saw the retry's second failure, and counted two.
    @Test func a410FromThePushServiceDropsTheRegistrationAndA500KeepsIt() async throws {
        try await Self.withPushServer(firstBackoff: 3600) { server, service in
            service.answer("/up/gone", with: .status(410))
            service.answer("/up/flaky", with: .status(500))
            #expect(try await Self.register(server, resource: service.url("/up/gone"), device: Device()).status == 204)
            #expect(try await Self.register(server, resource: service.url("/up/flaky"), device: Device()).status == 204)
            #expect(try await Self.register(server, resource: service.url("/up/fine"), device: Device()).status == 204)
            #expect(try await Self.put(server, "ann").status == 201)
            _ = await service.waitForRequests(count: 3)
            // The outcomes are recorded just after the answers: wait for the last of them.
            try await eventually { try await server.store.pushRegistrations(user: "alice").count == 2 }
            try await eventually {
                try await server.request("GET", "/metrics", user: nil).text.contains("rolo_push_messages_total{outcome=\"failed\"} 1")
            }
            let left = try await server.store.pushRegistrations(user: "alice").sorted { $0.pushResource < $1.pushResource }
            #expect(left.map(\.pushResource) == [service.url("/up/fine").absoluteString, service.url("/up/flaky").absoluteString])
            #expect(left.last?.failures == 1 && left.last?.retryAfter != nil)
            #expect(left.first?.failures == 0 && left.first?.lastSuccess != nil)
            let metrics = try await server.request("GET", "/metrics", user: nil).text
            for outcome in ["sent", "failed", "dropped"] {
                #expect(metrics.contains("rolo_push_messages_total{outcome=\"\(outcome)\"} 1"), "\(outcome)")
            }
        }
    }

    @Test func aShareeRegistersThroughTheMountAndLosesTheRegistrationWithTheShare() async throws {
        try await Self.withPushServer { server, service in
            _ = try await server.store.shareBook(owner: "alice", book: "default", with: "bob", access: .readOnly, accepted: true)
            let device = Device()
            let registered = try await Self.register(server, book: "/dav/addressbooks/bob/default~alice/", user: "bob",
                                                     resource: service.url("/up/bob"), device: device)
            #expect(registered.status == 204)
            // The owner's change reaches the sharee's phone, named by the book's one topic.
            #expect(try await Self.put(server, "ann").status == 201)
            let received = await service.waitForRequests(count: 1)
            try #require(received.count == 1)
            let (xml, _) = try Self.open(received[0], device: device)
            let topic = try #require(Self.property("topic", in: try await Self.bookProperties(server)))
            #expect(xml.contains("<topic>\(topic)</topic>"))
            try await server.store.removeShare(owner: "alice", book: "default", sharee: "bob")
            #expect(try await server.store.pushRegistrations(user: "bob").isEmpty)
            #expect(try await Self.put(server, "bea").status == 201)
            try await Task.sleep(for: .milliseconds(700))
            #expect(service.received.count == 1)
        }
    }

    @Test func expiredRegistrationsGetNothing() async throws {
        let now = ShiftedClock()
        try await Self.withPushServer(clock: now.storeClock) { server, service in
            #expect(try await Self.register(server, resource: service.url("/up/old"), device: Device()).status == 204)
            now.shift(by: 8 * 86_400)
            #expect(try await Self.register(server, resource: service.url("/up/new"), device: Device()).status == 204)
            #expect(try await Self.put(server, "ann").status == 201)
            _ = await service.waitForRequests(count: 1)
            try await Task.sleep(for: .milliseconds(700))
            #expect(service.received.map(\.path) == ["/up/new"])
        }
    }

    @Test func aHangingPushServiceDoesNotHoldUpWrites() async throws {
        try await Self.withPushServer { server, service in
            service.answer("/up/hang", with: .delay(.seconds(25)))
            #expect(try await Self.register(server, resource: service.url("/up/hang"), device: Device()).status == 204)
            #expect(try await Self.put(server, "first").status == 201)
            // The delivery is now stuck inside the push service...
            #expect(await service.waitForRequests(count: 1).count == 1)
            // ...and writes carry on: each answered long before the push service would be.
            // Timed by curl, from its connect to the answer's end: the server's time, not the
            // test's own waits for a thread (17 s once, the five alone, on an overloaded run).
            var answering = 0.0
            for index in 0..<5 {
                let response = try await Self.put(server, "next\(index)")
                #expect(response.status == 201)
                answering += response.seconds
            }
            #expect(answering < 10, "\(answering) s")
        }
    }

    static func imfDate(_ text: String) -> Date? { HTTPDateText.parse(text) }

}

/// The system clock moved forward by hand (registrations expire without waiting).
final class ShiftedClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)
    func shift(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
    var storeClock: StoreClock { StoreClock { [self] in Date().addingTimeInterval(offset.withLock { $0 }) } }
}

/// IMF-fixdate for the tests (the server's own formatter is what is under test).
enum HTTPDateText {
    static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()
    static func format(_ date: Date) -> String { formatter.string(from: date) }
    static func parse(_ text: String) -> Date? { formatter.date(from: text) }
}
