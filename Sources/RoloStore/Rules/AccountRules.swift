import Foundation

/// The rules for what identifies a credential, decided before a back end's transaction.
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
}
