import Foundation
import RoloStore

/// The `proxy` source: the header a trusted reverse proxy (Authelia, authentik, nginx
/// `auth_request`) sets names the user. Believed only when the TCP peer is one of
/// `trusted_proxies`; from anyone else the header is as if absent.
struct ProxySource: Sendable {
    let header: String
    let trustedProxies: Set<String>
    let store: any AccountStore

    /// The user the header names, or nil when it is absent, untrusted or no valid name.
    func user(peer: String, value: String?) -> String? {
        guard trustedProxies.contains(peer), let value else { return nil }
        let name = LoginName.normalized(value.trimmingCharacters(in: .whitespaces))
        guard (try? Naming.validate(name, what: "user")) != nil else { return nil }
        return name
    }

    /// Makes the user on their first login (`FirstSignIn`); false for a disabled account.
    func ensureUser(_ name: String) async throws -> Bool {
        try await FirstSignIn.ensureUser(name, store: store)
    }
}
