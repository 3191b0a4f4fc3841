import Foundation
import RoloStore

/// The Rolo account of a user a source vouched for: made on the first login (a home and a
/// default book, so no "principal not found") with the source recorded, and its display
/// name, e-mail and admin flag brought up to date on each login the source checked.
enum SourceAccounts {
    /// A user a directory or SSO source vouches for gets an account on first sign-in (home and
    /// default book, so no client meets "principal not found"), with a password nobody knows.
    /// The account after making or refreshing it; nil when the name belongs to another
    /// source's user (a local `alice` is not taken over by a directory's `alice`: an admin
    /// moves her with `rolo user set alice --source ldap`).
    static func provision(_ user: SourceUser, source: AuthenticationSourceKind,
                          store: any AccountStore) async throws -> UserAccount? {
        var account = try await store.account(name: user.name)
        if account == nil {
            do {
                // A password nobody knows: the directory's is never stored.
                try await store.createUser(name: user.name, password: randomPassword())
                try await store.updateAccount(name: user.name, UserAccountUpdate(source: source.rawValue))
            } catch StoreError.userExists {
                // Another request made it meanwhile.
            }
            account = try await store.account(name: user.name)
        }
        guard var account, account.source == source.rawValue else { return nil }
        var update = UserAccountUpdate()
        if let name = user.displayName, account.displayName != name { update.displayName = .some(name) }
        if let email = user.email, account.email != email { update.email = .some(email) }
        if user.managesAdmin, account.admin != user.isAdmin { update.admin = user.isAdmin }
        if update != UserAccountUpdate() {
            try await store.updateAccount(name: user.name, update)
            account = try await store.account(name: user.name) ?? account
        }
        return account
    }

    /// 32 random bytes as hex, never shown.
    static func randomPassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
