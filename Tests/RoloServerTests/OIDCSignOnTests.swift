import Foundation
import Logging
import RoloSQLite
import RoloStore
import RoloWeb
import Testing
@testable import RoloServer

/// The OpenID sign-in's end (`OIDCSignOn.finish`) against the failed-login throttle and log,
/// without a browser: the provider's endpoints are on a loopback port nothing listens on,
/// so a path that asks it finds it unreachable, and a path that must not ask it cannot
/// pass by doing so. The flow with a real provider is Tests/interop/oidc.sh.
@Suite struct OIDCSignOnTests {
    static let redirectURI = "http://127.0.0.1/web/login/oidc/callback"

    struct Fixture {
        let store: SQLiteStore
        let folder: URL
        let log = LogCapture()
        let authenticator: BasicAuthenticator
        let signOn: OIDCSignOn

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-oidc-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            store = try SQLiteStore(path: folder.appendingPathComponent("db.sqlite").path, bcryptCost: 4)
            authenticator = BasicAuthenticator(store: store, cacheLifetime: .seconds(60),
                                               throttle: LoginThrottle(LoginThrottleTests.small), logger: log.logger())
            let nowhere = URL(string: "http://127.0.0.1:1")!
            let settings = OIDCSettings(issuer: nowhere, displayName: "Test SSO", clientID: "rolo")
            let provider = OIDCProvider(settings: settings, issuer: nowhere.absoluteString,
                                        authorizationEndpoint: nowhere.appendingPathComponent("authorize"),
                                        tokenEndpoint: nowhere.appendingPathComponent("token"),
                                        jwksURI: nowhere.appendingPathComponent("jwks"),
                                        http: try OIDCHTTP(caFile: nil), keys: JSONWebKeys(entries: []))
            signOn = OIDCSignOn(provider: provider, store: store, logins: authenticator, logger: log.logger())
        }

        func close() {
            try? store.close()
            try? FileManager.default.removeItem(at: folder)
        }

        /// A sign-in begun as a browser would, brought back with `code`.
        func genuine(code: String = "the-code", from address: String) async throws -> WebSignOnResult {
            guard case .redirect(_, let state) = await signOn.begin(redirectURI: OIDCSignOnTests.redirectURI, next: "/web/") else {
                throw CancellationError()
            }
            return await signOn.finish(query: ["state": state, "code": code], state: state,
                                       redirectURI: OIDCSignOnTests.redirectURI, remoteAddress: address)
        }
    }

    @Test func refusedSignInsCountInTheThrottleAndTheFailureLog() async throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let browser = "203.0.113.80"
        let small = LoginThrottleTests.small
        let forged = ["state": "forged", "code": "x"]
        for index in 1..<small.blockingFailures {
            let result = await fixture.signOn.finish(query: forged, state: "forged", redirectURI: Self.redirectURI,
                                                     remoteAddress: browser)
            #expect(result == .refused("the sign-in's state does not match this browser's. Start again."), "refusal \(index)")
        }
        // The provider's own refusal (the user said no there) counts too, and is the one that blocks.
        guard case .redirect(_, let state) = await fixture.signOn.begin(redirectURI: Self.redirectURI, next: "/web/") else {
            Issue.record("no sign-in began"); return
        }
        let denied = await fixture.signOn.finish(query: ["state": state, "error": "access_denied"], state: state,
                                                 redirectURI: Self.redirectURI, remoteAddress: browser)
        #expect(denied == .throttled(retryAfter: .seconds(60)))
        // Blocked: even a sign-in the provider would answer is refused before it is asked
        // (asking it here would give `.unavailable`).
        guard case .throttled(let retryAfter) = try await fixture.genuine(from: browser) else {
            Issue.record("a blocked network's sign-in was not refused"); return
        }
        #expect(retryAfter > .seconds(50) && retryAfter <= .seconds(60), "the block's time left: \(retryAfter)")
        // Another network is not affected: its sign-in reaches the (unreachable) provider.
        guard case .unavailable = try await fixture.genuine(from: "198.51.100.4") else {
            Issue.record("another network's sign-in did not reach the provider"); return
        }

        let lines = fixture.log.messages(startingWith: "auth_failed")
        #expect(lines == Array(repeating: "auth_failed user=- ip=\(browser) reason=sso_refused", count: small.blockingFailures)
            + ["auth_failed user=- ip=\(browser) reason=throttled"])
    }

    @Test func anUnreachableProviderIsNoFailureAndIsLoggedOncePerOutage() async throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        // Two sign-ins in one outage (each waits out the client's connect timeout, 10 s).
        for _ in 0..<2 {
            guard case .unavailable(let reason) = try await fixture.genuine(from: "203.0.113.81") else {
                Issue.record("an unreachable provider was not unavailable"); return
            }
            #expect(reason.contains("127.0.0.1:1"), "\(reason)")
        }
        #expect(fixture.log.messages(startingWith: "OpenID provider Test SSO unavailable").count == 1)
        #expect(fixture.log.messages(startingWith: "auth_failed").isEmpty)
        #expect(fixture.authenticator.throttle.failures(subnet: ClientAddress.subnet(of: "203.0.113.81").key) == 0)
    }
}
