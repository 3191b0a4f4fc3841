import Foundation

/// The rules for what identifies a credential and what a password must be, decided before a
/// back end's transaction.
package enum AccountRules {
    /// The name an app password is kept under: trimmed of spaces, 1-200 bytes, no control
    /// character (it is shown in lists, logs and the access history, where a line break or
    /// NUL would do harm, and PostgreSQL text cannot hold NUL), and not "account password",
    /// which the history uses for the account's own password.
    package static func appPasswordName(_ name: String) throws(StoreError) -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 200 else { throw StoreError.appPasswordNameLength }
        guard !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw StoreError.appPasswordNameControl
        }
        guard trimmed.lowercased() != "account password" else { throw StoreError.appPasswordNameReserved }
        return trimmed
    }

    /// The shortest password `checkPassword` lets through (forms say it before one is typed).
    package static let minimumPasswordLength = 8

    /// The one rule for a password a person sets: at least 8 characters, at most 72 bytes of
    /// UTF-8, no control character. Every front end that sets one (CLI `user add`/`passwd`,
    /// serve's generated first admin, the web UI) asks this before the store, so the CLI
    /// cannot accept what the web UI refuses. `--fixtures` users are test data whose password
    /// is their name unless a file gives one; they are loaded as given. The bounds are bcrypt's: it
    /// reads only the first 72 bytes and stops at a NUL, so a longer password would be cut
    /// without a word. A control character cannot be typed into a sign-in form nor read back
    /// by `--password-stdin` (a line). The store's `createUser`/`setPassword` stay permissive
    /// (its suites sign in with "pw"); that is why the rule lives here and not there. Throws
    /// `StoreError.invalid` with a reason that names the rule.
    package static func checkPassword(_ password: String) throws {
        guard password.count >= minimumPasswordLength else { throw StoreError.passwordTooShort }
        guard password.utf8.count <= 72 else { throw StoreError.passwordTooLong }
        guard !password.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw StoreError.passwordControl
        }
    }
}
