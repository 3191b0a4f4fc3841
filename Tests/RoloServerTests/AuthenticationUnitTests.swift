import Foundation
import Synchronization
import Testing
import DAV
@testable import RoloServer

/// The pieces of authentication that need no server: header parsing, cache, throttle.
@Suite struct AuthenticationUnitTests {
    private func basic(_ credentials: String) -> String { "Basic " + Data(credentials.utf8).base64EncodedString() }

    @Test func basicHeaderKeepsColonsInThePassword() throws {
        let parsed = try #require(BasicAuthenticator.parseBasic(basic("alice:pa:ss")))
        #expect(parsed.user == "alice")
        #expect(parsed.password == "pa:ss")
    }

    @Test func basicHeaderAcceptsUTF8AndAnyCaseScheme() throws {
        let parsed = try #require(BasicAuthenticator.parseBasic("bAsIc " + Data("zoë:pässwörd".utf8).base64EncodedString()))
        #expect(parsed.user == "zoë")
        #expect(parsed.password == "pässwörd")
    }

    @Test func malformedBasicHeadersAreRejected() {
        #expect(BasicAuthenticator.parseBasic("Bearer abc") == nil)
        #expect(BasicAuthenticator.parseBasic("Basic !!!") == nil)
        #expect(BasicAuthenticator.parseBasic(basic("no-colon")) == nil)
        #expect(BasicAuthenticator.parseBasic(basic(":password")) == nil)
    }

    @Test func credentialCacheRemembersOnlyTheExactHeaderUntilExpiry() {
        let cache = CredentialCache(lifetime: .seconds(60))
        let now = ContinuousClock.now
        cache.insert(authorization: basic("alice:secret"), credential: .accountPassword("alice"), stamp: "s1", now: now)
        #expect(cache.entry(authorization: basic("alice:secret"), now: now + .seconds(59))?.credential.user == "alice")
        #expect(cache.entry(authorization: basic("alice:Secret"), now: now) == nil)
        #expect(cache.entry(authorization: basic("alicesecret:"), now: now) == nil)
        #expect(cache.entry(authorization: basic("alice:secret"), now: now + .seconds(61)) == nil)
    }

    @Test func credentialCacheHitCountsOnlyWhileTheStoreGivesTheSameStamp() {
        let cache = CredentialCache(lifetime: .seconds(60))
        cache.insert(authorization: basic("alice:secret"), credential: .accountPassword("alice"), stamp: "s1")
        #expect(cache.credential(authorization: basic("alice:secret"), currentStamp: { _ in "s1" })?.user == "alice")
        #expect(cache.credential(authorization: basic("alice:secret"), currentStamp: { _ in "s2" }) == nil)
        // A stale entry is forgotten, so the stamp coming back does not revive it.
        #expect(cache.credential(authorization: basic("alice:secret"), currentStamp: { _ in "s1" }) == nil)
        cache.insert(authorization: basic("alice:secret"), credential: .accountPassword("alice"), stamp: "s1")
        #expect(cache.credential(authorization: basic("alice:secret"), currentStamp: { _ in nil }) == nil)
    }

    @Test func aSourcesAnswerAboutAUserIsRememberedForTheLifetimeAndNotAtAllWithZero() {
        let cache = CredentialCache(lifetime: .seconds(60))
        let now = ContinuousClock.now
        #expect(cache.presence(of: "alice", now: now) == nil)
        cache.notePresence(true, of: "alice", now: now)
        cache.notePresence(false, of: "bob", now: now)
        #expect(cache.presence(of: "alice", now: now + .seconds(59)) == true)
        #expect(cache.presence(of: "bob", now: now + .seconds(59)) == false)
        #expect(cache.presence(of: "alice", now: now + .seconds(61)) == nil)
        cache.notePresence(true, of: "carol", now: now)
        cache.removeAll()
        #expect(cache.presence(of: "carol", now: now) == nil)
        // auth_cache_seconds = 0: the directory is asked every time.
        let off = CredentialCache(lifetime: .zero)
        off.notePresence(true, of: "alice", now: now)
        #expect(off.presence(of: "alice", now: now) == nil)
    }

    @Test func throttleIsFreeForFiveFailuresThenDoublesUpToTheCap() {
        let throttle = LoginThrottle()
        let now = ContinuousClock.now
        let delays = (0..<12).map { _ in throttle.recordFailure(subnet: "10.0.0.1", account: "a", now: now) }
        #expect(delays.prefix(5).allSatisfy { $0 == .delay(.zero) })
        #expect(delays[5] == .delay(.milliseconds(250)))
        #expect(delays[6] == .delay(.milliseconds(500)))
        #expect(delays[10] == .delay(.seconds(8)))
        #expect(delays[11] == .delay(.seconds(10)))
        #expect(throttle.recordFailure(subnet: "10.0.0.1", account: "a", now: now) == .delay(.seconds(10)))
        #expect(throttle.recordFailure(subnet: "10.0.0.2", account: "b", now: now) == .delay(.zero))
    }

    @Test func throttleForgetsASubnetAfterSuccessOrTime() {
        let throttle = LoginThrottle()
        let now = ContinuousClock.now
        for _ in 0..<7 { _ = throttle.recordFailure(subnet: "a", account: "x", now: now) }
        throttle.recordSuccess(subnet: "a")
        #expect(throttle.recordFailure(subnet: "a", account: "y", now: now) == .delay(.zero))
        for _ in 0..<7 { _ = throttle.recordFailure(subnet: "b", account: "z", now: now) }
        #expect(throttle.recordFailure(subnet: "b", account: "w", now: now + .seconds(1800)) == .delay(.zero))
    }

    @Test func basePathIsNormalized() {
        #expect(ServerConfiguration(basePath: "dav/").basePath == "/dav")
        #expect(ServerConfiguration(basePath: "/").basePath == "")
        #expect(ServerConfiguration(basePath: "/a//b/").basePath == "/a/b")
    }

    @Test func putsGetTheResourceLimitOtherMethodsTheRequestLimit() {
        let limits = RequestLimits(maxResourceSize: 10, maxRequestBodySize: 20)
        #expect(limits.maxBodySize(forMethod: "PUT") == 10)
        #expect(limits.maxBodySize(forMethod: "REPORT") == 20)
    }
}

@Suite struct SharedPasswordChecksTests {
    /// A client opening eight connections at once sends the same header on each: one
    /// bcrypt answers all eight, and a later check (after the first has finished) runs again.
    @Test func concurrentChecksOfOneHeaderShareOneRunAndOthersRunTheirOwn() async {
        let checks = SharedPasswordChecks<Bool>()
        let runs = Mutex([String: Int]())
        let arrived = Atomic(0)
        let check = { @Sendable (header: String, valid: Bool) async -> Bool in
            arrived.add(1, ordering: .sequentiallyConsistent)
            return await checks.result(for: header) {
                runs.withLock { $0[header, default: 0] += 1 }
                // Hold the check until every caller has come (plus a margin for the last
                // one's few instructions between counting itself and joining).
                while arrived.load(ordering: .sequentiallyConsistent) < 9 { try? await Task.sleep(for: .milliseconds(5)) }
                try? await Task.sleep(for: .milliseconds(100))
                return valid
            }
        }
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 { group.addTask { await check("Basic same", true) } }
            group.addTask { await check("Basic other", false) }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 8)
        #expect(results.filter { !$0 }.count == 1)
        #expect(runs.withLock { $0 } == ["Basic same": 1, "Basic other": 1])
        #expect(checks.count == 0)
        #expect(await check("Basic same", false) == false)
        #expect(runs.withLock { $0["Basic same"] } == 2)
    }
}
