import Foundation
import RoloStore

/// The `local` source: the account password, bcrypt-checked by the store. (App passwords are
/// checked by `BasicAuthenticator` before any source, for every user whatever their source.)
struct LocalSource: PasswordSource {
    let store: any AccountStore

    func login(user: String, password: String) async -> SourceAnswer {
        switch await check(user: user, password: password) {
        case .valid: return .found(SourceUser(name: user))
        case .invalid: return .rejected
        case .unavailable: return .unavailable
        }
    }

    /// The check with the account's password stamp, which the credential cache keeps.
    func check(user: String, password: String) async -> BasicAuthenticator.Verdict {
        do {
            // Read before the check: a change made meanwhile leaves a stamp that no
            // longer matches, so the next request checks again.
            let stamp = try await store.accountPasswordStamp(user: user)
            let matches = try await withTaskExecutorPreference(BlockingWorkExecutor.shared) {
                try await store.verifyPassword(user: user, password: password)
            }
            // No stamp: "app passwords only" (the account password opens no DAV
            // request), a disabled user, or none.
            guard matches, let stamp else { return .invalid }
            return .valid(stamp: stamp)
        } catch StoreError.unavailable {
            return .unavailable
        } catch {
            return .invalid
        }
    }
}
