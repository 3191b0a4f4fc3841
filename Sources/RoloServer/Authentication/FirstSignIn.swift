import Foundation
import RoloStore

/// A user a directory or SSO source vouches for gets an account on first sign-in (home and
/// default book), so no client ever meets "principal not found". Shared by `proxy` and `oidc`.
enum FirstSignIn {
    /// Makes the user, with a password nobody knows (32 random bytes, never shown), so only
    /// the source or an app password signs in. False for a disabled account: an admin's
    /// disable holds whatever source signs in.
    static func ensureUser(_ name: String, store: any AccountStore) async throws -> Bool {
        if let account = try await store.account(name: name) { return !account.disabled }
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let password = bytes.map { String(format: "%02x", $0) }.joined()
        do {
            try await store.createUser(name: name, password: password)
        } catch {
            // Another request made it meanwhile.
            if let account = try await store.account(name: name) { return !account.disabled }
            throw error
        }
        return true
    }
}
