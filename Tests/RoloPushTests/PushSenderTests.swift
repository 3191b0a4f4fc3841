import Foundation
import Logging
import PushTestSupport
@testable import RoloPush
import Synchronization
import Testing
import WebPush

@Suite struct PushSenderTests {
    static let subject = "mailto:admin@rolo.example"
    static let message = Data(#"<?xml version="1.0" encoding="utf-8"?><push-message xmlns="https://bitfire.at/webdav-push" xmlns:D="DAV:"><topic>Xq3bR0kP2vM8tWcQe1yN7a</topic><content-update><D:sync-token>http://rolo/sync/42</D:sync-token></content-update></push-message>"#.utf8)

    /// A clock the test moves by hand.
    final class TestClock: Sendable {
        private let current: Mutex<Date>
        init(_ start: Date = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))) {
            current = Mutex(start)
        }
        var now: Date { current.withLock { $0 } }
        func advance(by seconds: TimeInterval) { current.withLock { $0.addTimeInterval(seconds) } }
    }

    /// A sender that is always shut down, with short timeouts so no test waits long. It sends
    /// from `ServiceThread`, as the fake service answers there: the timeouts then measure
    /// the sender, not how long the test run's other work holds the cooperative pool.
    func withSender<T>(policy: PushTarget.Policy = .init(allowLoopback: true), vapidKey: VAPIDKey = VAPIDKey(),
                       requestTimeout: Duration = .seconds(5), clock: TestClock = TestClock(),
                       resolve: @escaping @Sendable (String) async throws -> [IPAddress] = AddressCheck.resolve,
                       _ body: (PushSender) async throws -> T) async throws -> T {
        var logger = Logger(label: "push-sender-test")
        logger.logLevel = .critical
        let sender = PushSender(vapidKey: vapidKey, subject: Self.subject, policy: policy,
                                connectTimeout: .seconds(2), requestTimeout: requestTimeout, logger: logger,
                                resolve: resolve, now: { clock.now })
        return try await withTaskExecutorPreference(ServiceThread.shared) {
            do {
                let result = try await body(sender)
                try await sender.shutdown()
                return result
            } catch {
                try? await sender.shutdown()
                throw error
            }
        }
    }

    func delivery(to endpoint: URL, client: PushClientKeys = PushClientKeys(), plaintext: Data = message,
                  topic: String = "Xq3bR0kP2vM8tWcQe1yN7a", urgency: String = "high") -> PushDelivery {
        PushDelivery(endpoint: endpoint, keys: client.subscriptionKeys, topic: topic, plaintext: plaintext,
                     ttl: 60, urgency: urgency)
    }

    @Test func postsAnEncryptedVAPIDSignedMessage() async throws {
        try await withFakePushService { service in
            let client = PushClientKeys()
            let vapid = VAPIDKey()
            let clock = TestClock()
            let result = try await withSender(vapidKey: vapid, clock: clock) { sender in
                await sender.send(delivery(to: service.url("/push/abc"), client: client))
            }
            #expect(result == .delivered)
            let received = try #require(service.received.first)
            #expect(service.received.count == 1)
            #expect(received.path == "/push/abc")
            #expect(try client.decrypt(received.body) == Self.message)
            #expect(received.headers["ttl"] == "60")
            #expect(received.headers["urgency"] == "high")
            #expect(received.headers["topic"] == "Xq3bR0kP2vM8tWcQe1yN7a")
            #expect(received.headers["content-encoding"] == "aes128gcm")
            #expect(received.headers["content-type"] == #"application/xml; charset="UTF-8""#)
            #expect(received.headers["content-length"] == String(received.body.count))
            let vapidHeader = try VAPIDVerification.verify(authorization: try #require(received.headers["authorization"]))
            #expect(vapidHeader.claims.aud == "http://127.0.0.1:\(service.port)")
            #expect(vapidHeader.claims.sub == Self.subject)
            #expect(vapidHeader.claims.exp == Int(clock.now.timeIntervalSince1970) + 12 * 3600)
            #expect(vapidHeader.publicKeyText == vapid.publicKeyBase64URL)
            #expect(vapidHeader.signatureLength == 64)
        }
    }

    @Test(arguments: [
        (200, [:], .delivered),
        (201, [:], .delivered),
        (202, [:], .delivered),
        (404, [:], .gone),
        (410, [:], .gone),
        (429, ["Retry-After": "120"], .retry(after: 120)),
        (429, [:], .retry(after: nil)),
        (500, [:], .retry(after: nil)),
        (503, ["Retry-After": "30"], .retry(after: 30)),
        (400, [:], .rejected(status: 400, reason: "Bad Request")),
        (401, [:], .rejected(status: 401, reason: "Unauthorized")),
        (403, [:], .rejected(status: 403, reason: "Forbidden")),
        (413, [:], .rejected(status: 413, reason: "Payload Too Large")),
    ] as [(Int, [String: String], PushDeliveryResult)])
    func mapsTheServiceAnswer(status: Int, headers: [String: String], expected: PushDeliveryResult) async throws {
        try await withFakePushService { service in
            service.answer("/push/1", with: .status(status, headers: headers))
            let result = try await withSender { sender in await sender.send(delivery(to: service.url("/push/1"))) }
            #expect(result == expected)
            #expect(service.received.count == 1)
        }
    }

    @Test func honoursARetryAfterDate() async throws {
        try await withFakePushService { service in
            let clock = TestClock()
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let date = formatter.string(from: clock.now.addingTimeInterval(90))
            service.answer("/push/1", with: .status(429, headers: ["Retry-After": date]))
            let result = try await withSender(clock: clock) { sender in await sender.send(delivery(to: service.url("/push/1"))) }
            #expect(result == .retry(after: 90))
        }
    }

    @Test func doesNotFollowARedirect() async throws {
        try await withFakePushService { service in
            service.answer("/push/1", with: .status(302, headers: ["Location": service.url("/elsewhere").absoluteString]))
            let result = try await withSender { sender in await sender.send(delivery(to: service.url("/push/1"))) }
            #expect(result == .rejected(status: 302, reason: "redirect not followed"))
            #expect(service.received.map(\.path) == ["/push/1"])
        }
    }

    @Test func aServiceSlowerThanTheTimeoutIsARetry() async throws {
        try await withFakePushService { service in
            // The timeout (2 s) cuts a 10-minute hang. The send alone is timed, against a bound
            // far from both: at a load average of 35, the send with the sender's set-up and
            // shut-down took over 30 s.
            service.answer("/push/slow", with: .delay(.seconds(600)))
            let (result, elapsed) = try await withSender(requestTimeout: .seconds(2)) { sender in
                let started = ContinuousClock.now
                let result = await sender.send(delivery(to: service.url("/push/slow")))
                return (result, ContinuousClock.now - started)
            }
            #expect(result == .retry(after: nil))
            #expect(service.received.count == 1)          // it reached the service, which then hung
            #expect(elapsed >= .milliseconds(1900) && elapsed < .seconds(300), "\(elapsed)")
        }
    }

    @Test func refusesLoopbackWithoutTheTestFlag() async throws {
        try await withFakePushService { service in
            let result = try await withSender(policy: .init()) { sender in
                await sender.send(delivery(to: service.url("/push/1")))
            }
            #expect(result == .rejected(status: 0, reason: "the push resource's host 127.0.0.1 is not a public address"))
            try await Task.sleep(for: .milliseconds(100))
            #expect(service.received.isEmpty)
        }
    }

    @Test func refusesAnOriginOffTheAllowList() async throws {
        try await withFakePushService { service in
            let policy = PushTarget.Policy(allowLoopback: true, allowedOrigins: ["https://push.example.net"])
            let result = try await withSender(policy: policy) { sender in
                await sender.send(delivery(to: service.url("/push/1")))
            }
            #expect(result == .rejected(status: 0,
                                        reason: "push resources at http://127.0.0.1:\(service.port) are not allowed by this server"))
            #expect(service.received.isEmpty)
        }
    }

    @Test func refusesANameThatResolvesToAPrivateAddress() async throws {
        let asked = Mutex<[String]>([])
        let answers: [String: [IPAddress]] = [
            "rebound.example.net": [IPAddress("10.0.0.7")!],
            "mixed.example.net": [IPAddress("8.8.8.8")!, IPAddress("fd00::1")!],
        ]
        try await withSender(policy: .init(), resolve: { host in
            asked.withLock { $0.append(host) }
            return answers[host] ?? []
        }) { sender in
            #expect(await sender.send(delivery(to: URL(string: "https://rebound.example.net/push/1")!))
                == .rejected(status: 0, reason: "rebound.example.net resolves to 10.0.0.7, which is not a public address"))
            #expect(await sender.send(delivery(to: URL(string: "https://mixed.example.net/push/1")!))
                == .rejected(status: 0, reason: "mixed.example.net resolves to fd00::1, which is not a public address"))
            // No addresses: worth trying again later, the name may come back.
            #expect(await sender.send(delivery(to: URL(string: "https://gone.example.net/push/1")!)) == .retry(after: nil))
        }
        #expect(asked.withLock { $0 } == ["rebound.example.net", "mixed.example.net", "gone.example.net"])
    }

    @Test func resolvesANameBeforeSending() async throws {
        try await withFakePushService { service in
            let client = PushClientKeys()
            let endpoint = URL(string: "http://localhost:\(service.port)/push/named")!
            let result = try await withSender { sender in await sender.send(delivery(to: endpoint, client: client)) }
            #expect(result == .delivered)
            let received = try #require(service.received.first)
            #expect(try client.decrypt(received.body) == Self.message)
            let claims = try VAPIDVerification.verify(authorization: try #require(received.headers["authorization"])).claims
            #expect(claims.aud == "http://localhost:\(service.port)")
        }
    }

    @Test func theSystemResolverFindsLoopback() throws {
        #expect(try AddressCheck.resolveBlocking("127.0.0.1") == [IPAddress("127.0.0.1")!])
        #expect(try AddressCheck.resolveBlocking("localhost").allSatisfy(\.isLoopback))
    }

    @Test func reusesTheAuthorizationUntilAnHourBeforeItExpires() async throws {
        try await withFakePushService { service in
            let clock = TestClock()
            try await withSender(clock: clock) { sender in
                #expect(await sender.send(delivery(to: service.url("/push/1"))) == .delivered)
                clock.advance(by: 10 * 3600)
                #expect(await sender.send(delivery(to: service.url("/push/2"))) == .delivered)
                clock.advance(by: 3600 + 1)                 // 11 h in: under an hour left
                #expect(await sender.send(delivery(to: service.url("/push/3"))) == .delivered)
            }
            let headers = service.received.map { $0.headers["authorization"] ?? "" }
            #expect(headers.count == 3)
            #expect(headers[0] == headers[1])
            #expect(headers[2] != headers[1])
            let renewed = try VAPIDVerification.verify(authorization: headers[2]).claims
            #expect(renewed.exp == Int(clock.now.timeIntervalSince1970) + 12 * 3600)
        }
    }

    @Test func refusesAMessageTooLargeToEncrypt() async throws {
        try await withFakePushService { service in
            let result = try await withSender { sender in
                await sender.send(delivery(to: service.url("/push/1"), plaintext: Data(count: 3994)))
            }
            #expect(result == .rejected(status: 0, reason: "the push message is 3994 bytes; at most 3993 fit one record"))
            #expect(service.received.isEmpty)
        }
    }

    @Test func sendsAnUnknownUrgencyAsNormal() async throws {
        try await withFakePushService { service in
            _ = try await withSender { sender in
                await sender.send(delivery(to: service.url("/push/1"), urgency: "urgent\r\nX-Evil: 1"))
            }
            #expect(service.received.first?.headers["urgency"] == "normal")
            #expect(service.received.first?.headers["x-evil"] == nil)
        }
    }

    @Test(arguments: [
        ("Xq3bR0kP2vM8tWcQe1yN7a", "Xq3bR0kP2vM8tWcQe1yN7a"),
        (String(repeating: "a", count: 32), String(repeating: "a", count: 32)),
        ("", nil),
    ] as [(String, String?)])
    func topicHeaderKeepsAShortBase64URLTopic(topic: String, header: String?) {
        #expect(delivery(to: URL(string: "https://p.example")!, topic: topic).topicHeader == header)
    }

    @Test func topicHeaderHashesALongOrOddTopic() {
        let long = delivery(to: URL(string: "https://p.example")!, topic: String(repeating: "a", count: 33)).topicHeader
        let odd = delivery(to: URL(string: "https://p.example")!, topic: "550e8400-e29b-41d4-a716-446655440000/x").topicHeader
        #expect(long?.count == 27 && odd?.count == 27 && long != odd)
        // base64url(SHA-1("a" × 33)), as Python's hashlib gives it: stable across runs and servers.
        #expect(long == "I2ihrHHGjEtHtPsoBlCODrRHqmQ")
    }

    @Test func readsRetryAfterInEveryForm() {
        let now = Date(timeIntervalSince1970: 784_111_777)          // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(PushSender.retryAfter("120", now: now) == 120)
        #expect(PushSender.retryAfter(" 0 ", now: now) == 0)
        #expect(PushSender.retryAfter("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == 60)
        #expect(PushSender.retryAfter("Sunday, 06-Nov-94 08:51:37 GMT", now: now) == 120)
        #expect(PushSender.retryAfter("Sun Nov  6 08:52:37 1994", now: now) == 180)
        #expect(PushSender.retryAfter("Sun, 06 Nov 1994 08:00:00 GMT", now: now) == 0)
        #expect(PushSender.retryAfter("soon", now: now) == nil)
        #expect(PushSender.retryAfter("-5", now: now) == nil)
        #expect(PushSender.retryAfter(nil, now: now) == nil)
    }
}
