import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import WebPush

/// One push message for one subscription: what `PushSender.send` POSTs.
public struct PushDelivery: Sendable {
    /// The subscription's push resource (already validated at registration; checked again
    /// before sending, since the policy may have changed since).
    public var endpoint: URL
    public var keys: SubscriptionKeys
    /// The address book's `P:topic`. Sent as the RFC 8030 `Topic` header, so that the push
    /// service replaces an older undelivered message for the same address book: see
    /// `topicHeader`.
    public var topic: String
    /// The `P:push-message` XML, before encryption.
    public var plaintext: Data
    /// Seconds the push service may hold the message for an offline device (RFC 8030 `TTL`).
    public var ttl: Int
    /// RFC 8030 `Urgency`: `very-low`, `low`, `normal` or `high`; anything else is sent as `normal`.
    public var urgency: String

    public init(endpoint: URL, keys: SubscriptionKeys, topic: String, plaintext: Data,
                ttl: Int = 86_400, urgency: String = "normal") {
        self.endpoint = endpoint; self.keys = keys; self.topic = topic; self.plaintext = plaintext
        self.ttl = ttl; self.urgency = urgency
    }

    /// The `Topic` header value: `topic` itself when it is 1 to 32 base64url characters
    /// (RFC 8030 §5.4; a 22-char random topic is), otherwise base64url(SHA-1(topic)), 27
    /// characters, as Nextcloud's DAV push does. The hash only has to be stable and
    /// distinct per topic, not secret. Nil for an empty topic: no header.
    public var topicHeader: String? {
        guard !topic.isEmpty else { return nil }
        let isBase64URL = topic.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "-", "_": true
            default: false
            }
        }
        if isBase64URL, topic.unicodeScalars.count <= 32 { return topic }
        return Base64URL.encode(Data(Insecure.SHA1.hash(data: Data(topic.utf8))))
    }
}

/// What became of one delivery, for the caller to act on.
public enum PushDeliveryResult: Sendable, Hashable {
    /// A 2xx: the push service took the message.
    case delivered
    /// 404 or 410: the subscription no longer exists at the push service; drop the registration.
    case gone
    /// Worth trying again later: 429 (with `Retry-After`, in seconds from now, when the
    /// service sent one), a 5xx, a network error or a timeout.
    case retry(after: TimeInterval?)
    /// Will not succeed as it stands: any other status (401/403 VAPID trouble, 413, a 3xx,
    /// which is never followed), or a refusal before anything was sent, with `status` 0: the
    /// target failed the address check, or the message could not be encrypted. Counts as a
    /// failure of the subscription.
    case rejected(status: Int, reason: String)
}

/// Sends WebDAV-Push messages: encrypts each one to its subscription (RFC 8291), signs it
/// with the server's VAPID key (RFC 8292) and POSTs it to the push resource (RFC 8030).
///
/// The push resource is a URL a client chose, so before each POST the host's addresses are
/// resolved and all must be public (loopback only with `policy.allowLoopback`), redirects
/// are never followed, and every request has a connect and a total timeout.
///
/// The address check and AsyncHTTPClient's connect are two lookups, so a name whose DNS
/// answer changes between them (rebinding with a zero TTL) can still reach a private
/// address. Closing that needs the connection to use the checked address: a custom NIO
/// resolver (AsyncHTTPClient's public API takes none), connecting to the IP with the name
/// kept for `Host` and TLS SNI, or an egress proxy that enforces the same policy.
///
/// One `HTTPClient` serves every send; call `shutdown()` before dropping the sender.
public final class PushSender: Sendable {
    private let vapidKey: VAPIDKey
    private let subject: String
    private let policy: PushTarget.Policy
    private let requestTimeout: Duration
    private let logger: Logger
    private let client: HTTPClient
    private let resolve: @Sendable (String) async throws -> [IPAddress]
    private let now: @Sendable () -> Date
    /// `Authorization` values per audience (origin), reused until an hour before they expire,
    /// so a burst of pushes to one service signs once.
    private let authorizations = Mutex<[String: CachedAuthorization]>([:])

    private struct CachedAuthorization {
        var value: String
        var expires: Date
    }

    /// How far ahead `exp` is set (RFC 8292 allows at most 24 h).
    static let tokenLifetime: TimeInterval = 12 * 3600
    /// A cached token is replaced once it has less than this left.
    static let tokenRenewalMargin: TimeInterval = 3600

    /// - Parameters:
    ///   - subject: the VAPID `sub` claim, a `mailto:` or `https:` contact for push-service operators.
    ///   - connectTimeout: for the TCP (and TLS) connect.
    ///   - requestTimeout: for the whole exchange up to the last byte of the answer, the DNS
    ///     check's time included (the lookup itself is bounded by the system resolver's timeouts).
    public convenience init(vapidKey: VAPIDKey, subject: String, policy: PushTarget.Policy,
                            connectTimeout: Duration = .seconds(10), requestTimeout: Duration = .seconds(30),
                            logger: Logger) {
        self.init(vapidKey: vapidKey, subject: subject, policy: policy, connectTimeout: connectTimeout,
                  requestTimeout: requestTimeout, logger: logger, resolve: AddressCheck.resolve, now: Date.init)
    }

    /// With the DNS lookup and the clock replaceable, for tests.
    init(vapidKey: VAPIDKey, subject: String, policy: PushTarget.Policy, connectTimeout: Duration,
         requestTimeout: Duration, logger: Logger, resolve: @escaping @Sendable (String) async throws -> [IPAddress],
         now: @escaping @Sendable () -> Date) {
        self.vapidKey = vapidKey; self.subject = subject; self.policy = policy
        self.requestTimeout = requestTimeout; self.logger = logger; self.resolve = resolve; self.now = now
        let configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: TimeAmount(connectTimeout), read: TimeAmount(requestTimeout)))
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration,
                            backgroundActivityLogger: logger)
    }

    /// Closes the client's connections. Sends after this fail as `.retry`.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Encrypts, signs and POSTs one message. Never throws: every outcome is a result.
    public func send(_ delivery: PushDelivery) async -> PushDeliveryResult {
        let deadline = NIODeadline.now() + TimeAmount(requestTimeout)
        // The endpoint is a capability URL: log only its origin.
        let origin = VAPIDKey.origin(of: delivery.endpoint) ?? "(no origin)"
        var logger = self.logger
        logger[metadataKey: "push.origin"] = "\(origin)"

        let endpoint: URL
        do {
            endpoint = try PushTarget.validate(delivery.endpoint.absoluteString, policy: policy)
            try await checkAddresses(of: endpoint)
        } catch let error as AddressRefused {
            logger.warning("Push target refused: \(error)")
            return .rejected(status: 0, reason: error.description)
        } catch let error as PushTargetError {
            logger.warning("Push target refused: \(error)")
            return .rejected(status: 0, reason: error.description)
        } catch {
            logger.info("Push target not resolved: \(error)")
            return .retry(after: nil)
        }

        let body: Data
        let authorization: String
        do {
            body = try WebPushEncryption.encrypt(delivery.plaintext, for: delivery.keys)
            authorization = try self.authorization(for: origin)
        } catch {
            logger.error("Push message not prepared: \(error)")
            return .rejected(status: 0, reason: "\(error)")
        }

        var request = HTTPClientRequest(url: endpoint.absoluteString)
        request.method = .POST
        request.headers.add(name: "TTL", value: String(max(delivery.ttl, 0)))
        request.headers.add(name: "Urgency", value: Self.urgencies.contains(delivery.urgency) ? delivery.urgency : "normal")
        if let topic = delivery.topicHeader { request.headers.add(name: "Topic", value: topic) }
        request.headers.add(name: "Content-Encoding", value: "aes128gcm")
        request.headers.add(name: "Content-Type", value: "application/xml; charset=\"UTF-8\"")
        request.headers.add(name: "Authorization", value: authorization)
        request.body = .bytes(ByteBuffer(bytes: body))

        do {
            let response = try await client.execute(request, deadline: deadline, logger: logger)
            // The status decides; a body cut short (timeout, reset) only loses the log's text.
            let answer = (try? await Self.readSome(response.body, limit: 512)) ?? Data()
            let result = Self.result(status: Int(response.status.code), reasonPhrase: response.status.reasonPhrase,
                                     headers: response.headers, body: answer, now: now())
            switch result {
            case .delivered: logger.debug("Push delivered")
            case .gone: logger.info("Push subscription gone (\(response.status.code))")
            case .retry, .rejected: logger.warning("Push not delivered: \(result)")
            }
            return result
        } catch {
            logger.info("Push not delivered: \(error)")
            return .retry(after: nil)
        }
    }

    private static let urgencies: Set<String> = ["very-low", "low", "normal", "high"]

    /// A name that resolves to an address the policy does not permit.
    struct AddressRefused: Error, CustomStringConvertible {
        var host: String
        var address: IPAddress
        var description: String { "\(host) resolves to \(address), which is not a public address" }
    }

    /// Resolves a named host and refuses it if any of its addresses is not permitted: the
    /// connect may pick any of them. IP literals were checked by `validate`.
    private func checkAddresses(of endpoint: URL) async throws {
        guard let host = PushTarget.host(of: endpoint) else { return }
        if case .address = PushTarget.classify(host: host) { return }
        let addresses = try await resolve(host)
        guard !addresses.isEmpty else {
            throw AddressCheck.ResolutionFailed(host: host, message: "no addresses")
        }
        if let refused = addresses.first(where: { !policy.permits($0) }) {
            throw AddressRefused(host: host, address: refused)
        }
    }

    /// `vapid t=…, k=…` for `audience`, from the cache while it has an hour left.
    private func authorization(for audience: String) throws -> String {
        let now = now()
        if let cached = authorizations.withLock({ $0[audience] }),
           cached.expires.timeIntervalSince(now) > Self.tokenRenewalMargin {
            return cached.value
        }
        let expires = now.addingTimeInterval(Self.tokenLifetime)
        let value = try vapidKey.authorization(audience: audience, subject: subject, expires: expires)
        authorizations.withLock { cache in
            cache = cache.filter { $0.value.expires.timeIntervalSince(now) > Self.tokenRenewalMargin }
            cache[audience] = CachedAuthorization(value: value, expires: expires)
        }
        return value
    }

    /// Up to `limit` bytes of a response body, for the log; the rest is left unread.
    private static func readSome(_ body: HTTPClientResponse.Body, limit: Int) async throws -> Data {
        var collected = Data()
        for try await chunk in body {
            collected.append(contentsOf: chunk.readableBytesView.prefix(limit - collected.count))
            if collected.count >= limit { break }
        }
        return collected
    }
}
