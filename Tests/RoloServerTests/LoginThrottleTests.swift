import DAV
import Foundation
import Logging
import RoloSQLite
import RoloStore
import Testing
@testable import RoloServer

/// The failed-login throttle without a server: subnets, delays, the 429 cutoff, the window,
/// the per-account delay, memory bounds, and the failure log line.
@Suite struct LoginThrottleTests {
    // MARK: Subnets

    @Test func theAccessHistoryKeepsAnIPv4Slash24AndAnIPv6Slash48() {
        #expect(ClientAddress.historyPrefix(of: "203.0.113.7") == "203.0.113.0/24")
        #expect(ClientAddress.historyPrefix(of: "::ffff:203.0.113.7") == "203.0.113.0/24")
        #expect(ClientAddress.historyPrefix(of: "[2001:db8:aa:bb:cc::1]") == "2001:db8:aa::/48")
        #expect(ClientAddress.historyPrefix(of: "unknown") == "")
    }

    @Test func ipv4IsItsOwnSubnet() {
        let subnet = ClientAddress.subnet(of: "203.0.113.7")
        #expect(subnet == .init(address: "203.0.113.7", key: "203.0.113.7", isIP: true))
        #expect(ClientAddress.subnet(of: "203.0.113.8").key != subnet.key)
    }

    @Test func ipv6TextualFormsAreOneAddress() {
        let forms = ["2001:db8::1", "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:DB8:0:0::1", "[2001:db8::1]",
                     "2001:db8::1%eth0", " 2001:db8::1 "]
        for form in forms {
            #expect(ClientAddress.subnet(of: form) == .init(address: "2001:db8::1", key: "2001:db8::/56", isIP: true),
                    "\(form)")
        }
    }

    @Test func oneIPv6Slash56SharesACounterAndTheNextDoesNot() {
        let first = ClientAddress.subnet(of: "2001:db8:1:100::1")
        #expect(first.key == "2001:db8:1:100::/56")
        #expect(ClientAddress.subnet(of: "2001:db8:1:1ff:ffff:ffff:ffff:ffff").key == first.key)
        #expect(ClientAddress.subnet(of: "2001:db8:0001:01ab::42").key == first.key)
        #expect(ClientAddress.subnet(of: "2001:db8:1:200::1").key == "2001:db8:1:200::/56")
        #expect(ClientAddress.subnet(of: "2001:db8:1:0ff::1").key == "2001:db8:1::/56")

        let throttle = LoginThrottle(LoginThrottleSettings(freeFailures: 1))
        let now = ContinuousClock.now
        _ = throttle.recordFailure(subnet: first.key, account: "a", now: now)
        let neighbour = ClientAddress.subnet(of: "2001:db8:1:1ff::2").key
        #expect(throttle.recordFailure(subnet: neighbour, account: "b", now: now) == .delay(.milliseconds(250)))
        let other = ClientAddress.subnet(of: "2001:db8:1:200::1").key
        #expect(throttle.recordFailure(subnet: other, account: "c", now: now) == .delay(.zero))
    }

    @Test func ipv4MappedIPv6IsTheIPv4Address() {
        let plain = ClientAddress.subnet(of: "192.0.2.33")
        #expect(ClientAddress.subnet(of: "::ffff:192.0.2.33") == plain)
        #expect(ClientAddress.subnet(of: "::FFFF:c000:0221") == plain)
        #expect(ClientAddress.subnet(of: "[::ffff:192.0.2.33]") == plain)
        // Not mapped: an ordinary IPv6 address in ::/56.
        #expect(ClientAddress.subnet(of: "::1").key == "::/56")
    }

    @Test func textThatIsNoAddressIsItsOwnKey() {
        #expect(ClientAddress.subnet(of: "unknown") == .init(address: "unknown", key: "unknown", isIP: false))
        #expect(ClientAddress.subnet(of: "1.2.3").isIP == false)
        #expect(ClientAddress.subnet(of: "example.org").isIP == false)
    }

    // MARK: Delays and the 429 cutoff

    @Test func defaultsAreFiveFreeThenDoublingToTenSecondsThenTenMoreThen429() {
        let settings = LoginThrottleSettings()
        #expect(settings.freeFailures == 5 && settings.baseDelay == .milliseconds(250) && settings.maxDelay == .seconds(10))
        #expect(settings.cappedFailures == 10 && settings.window == .seconds(1800) && settings.accountFreeFailures == 20)
        // 6: 250 ms, 7: 500 ms, … 11: 8 s, 12: 10 s (the cap); 12…21 at the cap, 22 blocks.
        #expect(settings.blockingFailures == 22)

        let throttle = LoginThrottle(settings)
        let start = ContinuousClock.now
        var verdicts: [LoginThrottle.Verdict] = []
        for index in 0..<22 {
            verdicts.append(throttle.recordFailure(subnet: "198.51.100.1", account: "u\(index)",
                                                   now: start + .seconds(index)))
        }
        #expect(verdicts[11] == .delay(.seconds(10)))
        #expect(verdicts[20] == .delay(.seconds(10)))
        #expect(verdicts[21] == .blocked(retryAfter: .seconds(1800)))
        #expect(verdicts.prefix(21).allSatisfy { if case .delay = $0 { true } else { false } })
        let blockedAt = start + .seconds(21)
        #expect(throttle.mayBlock)
        #expect(throttle.retryAfter(subnet: "198.51.100.1", now: blockedAt + .seconds(100)) == .seconds(1700))
        #expect(throttle.retryAfter(subnet: "198.51.100.2", now: blockedAt) == nil)
    }

    @Test func retryAfterIsWholeSecondsRoundedUp() {
        #expect(RoloResponder.retryAfterSeconds(.seconds(1800)) == 1800)
        #expect(RoloResponder.retryAfterSeconds(.milliseconds(1700_001)) == 1701)
        #expect(RoloResponder.retryAfterSeconds(.milliseconds(10)) == 1)
        #expect(RoloResponder.retryAfterSeconds(.zero) == 1)
        let response = RoloResponder.tooManyRequests(retryAfter: .milliseconds(59_500))
        #expect(response.status.code == 429)
        #expect(response.headers[.retryAfter] == "60")
    }

    @Test func zeroCappedFailuresBlocksAtTheFirstCappedFailure() {
        let settings = LoginThrottleSettings(freeFailures: 0, baseDelay: .milliseconds(100), maxDelay: .milliseconds(400),
                                             cappedFailures: 0)
        #expect(settings.blockingFailures == 3)
        let throttle = LoginThrottle(settings)
        let now = ContinuousClock.now
        #expect(throttle.recordFailure(subnet: "s", account: "a", now: now) == .delay(.milliseconds(100)))
        #expect(throttle.recordFailure(subnet: "s", account: "a", now: now) == .delay(.milliseconds(200)))
        #expect(throttle.recordFailure(subnet: "s", account: "a", now: now) == .blocked(retryAfter: .seconds(1800)))
    }

    @Test func successResetsTheSubnet() {
        let throttle = LoginThrottle(Self.small)
        let now = ContinuousClock.now
        for index in 0..<5 { _ = throttle.recordFailure(subnet: "s", account: "a\(index)", now: now) }
        #expect(throttle.failures(subnet: "s") == 5)
        throttle.recordSuccess(subnet: "s")
        #expect(throttle.failures(subnet: "s") == 0)
        #expect(throttle.recordFailure(subnet: "s", account: "b", now: now) == .delay(.zero))
    }

    @Test func theBlockEndsWhenTheWindowHasPassedAndCountingStartsAfresh() {
        let throttle = LoginThrottle(Self.small)
        let now = ContinuousClock.now
        var verdict = LoginThrottle.Verdict.delay(.zero)
        for _ in 0..<Self.small.blockingFailures { verdict = throttle.recordFailure(subnet: "s", account: "a", now: now) }
        #expect(verdict == .blocked(retryAfter: .seconds(60)))
        #expect(throttle.retryAfter(subnet: "s", now: now + .seconds(59)) == .seconds(1))
        #expect(throttle.retryAfter(subnet: "s", now: now + .seconds(60)) == nil)
        #expect(!throttle.mayBlock)
        #expect(throttle.recordFailure(subnet: "s", account: "a", now: now + .seconds(61)) == .delay(.zero))
        #expect(throttle.failures(subnet: "s") == 1)
    }

    @Test func failuresFurtherApartThanTheWindowAreForgotten() {
        let throttle = LoginThrottle(Self.small)
        let start = ContinuousClock.now
        // One failure every 61 s never adds up: each finds the last one forgotten.
        for index in 0..<20 {
            #expect(throttle.recordFailure(subnet: "s", account: "a\(index)", now: start + .seconds(61 * index))
                    == .delay(.zero))
        }
        // One every 59 s does.
        var verdicts: [LoginThrottle.Verdict] = []
        for index in 0..<Self.small.blockingFailures {
            verdicts.append(throttle.recordFailure(subnet: "t", account: "b\(index)", now: start + .seconds(59 * index)))
        }
        #expect(verdicts.last == .blocked(retryAfter: .seconds(60)))
    }

    /// free 2, 10 ms doubling to 40 ms, 2 failures at the cap, a 60 s window: failure 6 blocks.
    static let small = LoginThrottleSettings(freeFailures: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(40),
                                             cappedFailures: 2, window: .seconds(60), accountFreeFailures: 4)

    // MARK: Per account

    @Test func anAccountGuessedFromManySubnetsIsDelayedButNeverBlocked() {
        let throttle = LoginThrottle(Self.small)
        let now = ContinuousClock.now
        let verdicts = (0..<40).map { index in
            throttle.recordFailure(subnet: "10.0.\(index / 256).\(index % 256)", account: "alice", now: now)
        }
        // Four free for the account, then the subnet curve shifted by that allowance.
        #expect(verdicts.prefix(4).allSatisfy { $0 == .delay(.zero) })
        #expect(verdicts[4] == .delay(.milliseconds(10)))
        #expect(verdicts[5] == .delay(.milliseconds(20)))
        #expect(verdicts[6] == .delay(.milliseconds(40)))
        #expect(verdicts.dropFirst(6).allSatisfy { $0 == .delay(.milliseconds(40)) })
        #expect(!throttle.mayBlock)
        // Another account from those subnets is not slowed; the account's count is its own.
        #expect(throttle.recordFailure(subnet: "10.0.0.39", account: "bob", now: now) == .delay(.zero))
        #expect(throttle.failures(account: "alice") == 40)
        // Success from a subnet does not clear the account (it only ever delays failures).
        throttle.recordSuccess(subnet: "10.0.0.1")
        #expect(throttle.failures(account: "alice") == 40)
        #expect(throttle.recordFailure(subnet: "10.0.1.1", account: "alice", now: now + .seconds(60)) == .delay(.zero))
    }

    @Test func memoryIsBoundedAndAHeavyHitterSurvivesAFloodOfOneOffs() {
        let throttle = LoginThrottle(Self.small, capacity: 100)
        let now = ContinuousClock.now
        for _ in 0..<5 { _ = throttle.recordFailure(subnet: "attacker", account: "alice", now: now) }
        for index in 0..<1000 {
            _ = throttle.recordFailure(subnet: "one-off-\(index)", account: "name-\(index)", now: now)
        }
        let counts = throttle.recordCount
        #expect(counts.subnets <= 100 && counts.accounts <= 100)
        #expect(throttle.failures(subnet: "attacker") == 5)
        #expect(throttle.failures(account: "alice") == 5)
        // Stale records go first, however many failures they had.
        for index in 0..<100 {
            _ = throttle.recordFailure(subnet: "late-\(index)", account: "late-\(index)", now: now + .seconds(3600))
        }
        #expect(throttle.failures(subnet: "attacker") == 0)
        #expect(throttle.failures(subnet: "late-99") == 1)
        #expect(throttle.recordCount.subnets <= 100)
    }

    @Test func resetForgetsEverything() {
        let throttle = LoginThrottle(Self.small)
        for _ in 0..<Self.small.blockingFailures { _ = throttle.recordFailure(subnet: "s", account: "a") }
        #expect(throttle.retryAfter(subnet: "s") != nil)
        throttle.removeAll()
        #expect(!throttle.mayBlock)
        #expect(throttle.retryAfter(subnet: "s") == nil)
        #expect(throttle.failures(account: "a") == 0)
    }

    // MARK: The authenticator and its log

    @Test func aBlockedSubnetIsRefusedWithoutAPasswordCheckEvenForTheRightOneOrACachedOne() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-throttle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore(path: folder.appendingPathComponent("db.sqlite").path, bcryptCost: 4)
        defer { try? store.close() }
        try await store.createUser(name: "alice", password: "right")
        let log = LogCapture()
        let throttle = LoginThrottle(Self.small)
        let authenticator = BasicAuthenticator(store: store, cacheLifetime: .seconds(60), throttle: throttle,
                                               logger: log.logger())
        let right = Self.basic("alice:right")
        let attacker = "2001:db8:5:500::66", neighbour = "2001:db8:5:5ff::77", elsewhere = "2001:db8:5:600::1"

        #expect(await authenticator.authenticate(authorization: right, remoteAddress: attacker)
                == .authenticated(.accountPassword("alice")))
        #expect(authenticator.cache.entry(authorization: right)?.credential.user == "alice")
        for index in 1..<Self.small.blockingFailures {
            #expect(await authenticator.authenticate(authorization: Self.basic("alice:guess\(index)"), remoteAddress: attacker)
                    == .rejected(delay: Self.small.delay(afterFailures: index)))
        }
        let last = await authenticator.authenticate(authorization: Self.basic("mallory:x"), remoteAddress: attacker)
        #expect(last == .throttled(retryAfter: .seconds(60)))

        // The right password, cached or not, gets the 429, and nothing ran: a check would
        // have reset the subnet (success) or counted one more failure.
        authenticator.cache.removeAll()
        let key = ClientAddress.subnet(of: attacker).key
        let before = throttle.failures(subnet: key)
        guard case .throttled = await authenticator.authenticate(authorization: right, remoteAddress: attacker) else {
            Issue.record("the right password was not refused"); return
        }
        authenticator.cache.insert(authorization: right, credential: .accountPassword("alice"),
                                   stamp: try #require(try store.accountPasswordStamp(user: "alice")))
        guard case .throttled = await authenticator.authenticate(authorization: right, remoteAddress: neighbour) else {
            Issue.record("a cached login from the blocked /56 was not refused"); return
        }
        #expect(throttle.failures(subnet: key) == before)
        #expect(authenticator.checks.count == 0)
        // No credentials stay a plain 401 challenge, blocked or not.
        #expect(await authenticator.authenticate(authorization: nil, remoteAddress: attacker) == .missingCredentials)
        #expect(await authenticator.authenticate(authorization: "Basic !!!", remoteAddress: attacker) == .missingCredentials)
        // Another /56 is not affected.
        #expect(await authenticator.authenticate(authorization: right, remoteAddress: elsewhere)
                == .authenticated(.accountPassword("alice")))

        let lines = log.messages(startingWith: "auth_failed")
        #expect(lines.count == Self.small.blockingFailures + 2)
        #expect(lines.first == "auth_failed user=alice ip=2001:db8:5:500::66 reason=bad_password")
        #expect(lines.dropFirst(Self.small.blockingFailures - 1).first
                == "auth_failed user=mallory ip=2001:db8:5:500::66 reason=unknown_user")
        #expect(lines.suffix(2) == ["auth_failed user=alice ip=2001:db8:5:500::66 reason=throttled",
                                    "auth_failed user=alice ip=2001:db8:5:5ff::77 reason=throttled"])
        let metadata = try #require(log.records.last?["metadata"] as? [String: String])
        #expect(metadata == ["event": "auth_failed", "user": "alice", "ip": "2001:db8:5:5ff::77", "reason": "throttled"])
        #expect(!log.records.contains { "\($0)".contains("right") || "\($0)".contains("guess") })
    }

    /// Two processes on one database, each with its own throttle, a guesser alternating
    /// between them (a round-robin balancer): the subnet is blocked after the configured
    /// number of failures in all, not twice that, and both processes delay as the sum says.
    @Test func twoProcessesOnOneStoreShareTheFailureCounts() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-throttle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore(path: folder.appendingPathComponent("db.sqlite").path, bcryptCost: 4)
        defer { try? store.close() }
        try await store.createUser(name: "alice", password: "right")
        let processes = (0..<2).map { _ in
            BasicAuthenticator(store: store, cacheLifetime: .seconds(60), throttle: LoginThrottle(Self.small))
        }
        let attacker = "203.0.113.66"
        for index in 1..<Self.small.blockingFailures {
            #expect(await processes[index % 2].authenticate(authorization: Self.basic("alice:guess\(index)"), remoteAddress: attacker)
                    == .rejected(delay: Self.small.delay(afterFailures: index)), "failure \(index)")
        }
        #expect(await processes[Self.small.blockingFailures % 2].authenticate(authorization: Self.basic("alice:last"),
                                                                             remoteAddress: attacker)
                == .throttled(retryAfter: .seconds(60)))
        // A success through one process forgets the subnet's failures counted through another.
        let neighbour = "198.51.100.9"
        #expect(await processes[0].authenticate(authorization: Self.basic("carol:typo"), remoteAddress: neighbour)
                == .rejected(delay: .zero))
        #expect(await processes[1].authenticate(authorization: Self.basic("alice:right"), remoteAddress: neighbour)
                == .authenticated(.accountPassword("alice")))
        #expect(try await store.recordLoginFailure(subnet: neighbour, account: "nobody", window: 60, now: Date()).subnet == 1)
    }

    @Test func loggedNamesCannotBreakTheLineOrForgeTheAddress() {
        #expect(AuthFailureLog.loggable("alice") == "alice")
        #expect(AuthFailureLog.loggable("a.b-c_d+e@example.org") == "a.b-c_d+e@example.org")
        #expect(AuthFailureLog.loggable("x ip=1.2.3.4\nauth_failed") == "x%20ip%3D1.2.3.4%0Aauth_failed")
        #expect(AuthFailureLog.loggable("zoë\"") == "zo%C3%AB%22")
        #expect(AuthFailureLog.loggable(String(repeating: "a", count: 500)).count == 64)
        #expect(AuthFailureLog.loggable("") == "-")
    }

    private static func basic(_ credentials: String) -> String { "Basic " + Data(credentials.utf8).base64EncodedString() }
}
