import RoloStore

/// The password rule as the web forms put it: the store core's one rule
/// (`AccountRules.checkPassword`, asked by every path that sets a password), worded for the
/// account page and the admin's create and reset.
enum PasswordRule {
    static let minimumLength = AccountRules.minimumPasswordLength

    /// What is wrong with `password` as a person reads it, or nil when it may be set.
    static func problem(with password: String) -> String? {
        do {
            try AccountRules.checkPassword(password)
            return nil
        } catch StoreError.invalid(let reason) {
            return reason.prefix(1).uppercased() + reason.dropFirst() + "."
        } catch {
            return "\(error)"
        }
    }
}
