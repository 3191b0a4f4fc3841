/// The rule a new account password must meet, asked by every web form that sets one (the
/// account page and the admin's create and reset). One function, so that when the store core
/// holds the one rule for every path (issue 29: the CLI, the API, the web UI), this is the
/// only line that changes to ask it.
enum PasswordRule {
    static let minimumLength = 8

    /// What is wrong with `password` as a person reads it, or nil when it may be set.
    static func problem(with password: String) -> String? {
        password.count >= minimumLength ? nil : "The password needs at least \(minimumLength) characters."
    }
}
