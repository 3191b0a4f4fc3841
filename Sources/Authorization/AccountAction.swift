import RoloStore

/// What a person does to an account rather than to cards: sharing, app passwords, the
/// access history, other users. Decided by `Access.decide(_:by:)`, whichever front end asks.
public enum AccountAction: Sendable, Hashable {
    /// Read or change the account's own settings at all (the JSON API and the privacy page
    /// are this, before any one operation).
    case manageAccount(of: String)
    /// Share `owner`'s book with someone, or change a share's access.
    case manageSharesGiven(owner: String)
    /// Accept a share offered to `sharee`.
    case manageSharesReceived(sharee: String)
    /// End a share: its owner revokes it or its sharee leaves it.
    case removeShare(owner: String, sharee: String)
    /// Create, list or revoke `user`'s app passwords.
    case manageAppPasswords(of: String)
    /// Read `user`'s access history.
    case seeAccessHistory(of: String)
    /// Search the server's users by name or e-mail (to pick a sharee).
    case searchUsers
    /// Create, reset, disable or delete users.
    case manageUsers
    /// The admin pages (users, health).
    case seeAdminPages
}

/// Who asks for an account action.
public enum AccountActor: Sendable, Hashable {
    /// A signed-in user: DAV, the web UI (the account password) or the JSON API.
    case user(Credential, admin: Bool)
    /// The command line. Whoever runs `rolo` holds the database itself, so it may do
    /// every account action, for any user (an admin acting for someone else does it here).
    case console
}

/// `Access.decide`'s answer.
public enum AccessDecision: Sendable, Hashable {
    case allowed
    case denied(AccessDenied)
}

/// Why an account action is refused; `message` is what a person reads.
public struct AccessDenied: Error, Sendable, Hashable {
    public enum Reason: Sendable, Hashable {
        /// App passwords open cards only; the account is managed with the account password.
        case appPassword
        /// The action is someone else's to take.
        case notYours
        /// Only administrators may.
        case notAdmin
    }

    public var reason: Reason
    public var message: String

    public init(_ reason: Reason, _ message: String) { self.reason = reason; self.message = message }
}

extension Access {
    /// Whether `actor` may take `action`, or why not.
    ///
    /// An admin manages other users' shares, app passwords and history only from the
    /// command line, never through their own account in the web UI or the API: an admin's
    /// password or browser session is one more credential that can be stolen, and one that
    /// could silently expose anyone's books; the console needs the server's database.
    public static func decide(_ action: AccountAction, by actor: AccountActor) -> AccessDecision {
        guard case .user(let credential, let admin) = actor else { return .allowed }
        let user = credential.user
        switch action {
        case .manageUsers, .seeAdminPages:
            // Admin pages are signed in with the account password; an app password never gets there.
            guard !credential.isAppPassword else { return .denied(appPasswordDenied) }
            return admin ? .allowed : .denied(AccessDenied(.notAdmin, "Only administrators see this page."))
        default:
            break
        }
        if credential.isAppPassword {
            if action == .searchUsers {
                return .denied(AccessDenied(.appPassword, "App passwords cannot search for users; use the account password."))
            }
            return .denied(appPasswordDenied)
        }
        switch action {
        case .manageAccount(let subject), .manageAppPasswords(let subject), .seeAccessHistory(let subject):
            return subject == user ? .allowed : .denied(AccessDenied(.notYours, "This is another user's account."))
        case .manageSharesGiven(let owner):
            return owner == user ? .allowed : .denied(AccessDenied(.notYours, "Only the owner shares a book."))
        case .manageSharesReceived(let sharee):
            return sharee == user ? .allowed : .denied(AccessDenied(.notYours, "Only the sharee accepts a share."))
        case .removeShare(let owner, _) where owner == DirectoryRules.owner:
            // The directory's mount is the server's, not a share: hiding it from one's
            // devices is a setting of one's directory entry, which the next rebuild keeps.
            return .denied(AccessDenied(.notYours, "The directory cannot be left; hide it from your devices in your directory entry."))
        case .removeShare(let owner, let sharee):
            return user == owner || user == sharee
                ? .allowed : .denied(AccessDenied(.notYours, "Only the owner or the sharee removes a share."))
        case .searchUsers, .manageUsers, .seeAdminPages:
            return .allowed
        }
    }

    /// `decide` for callers that throw.
    public static func require(_ action: AccountAction, by actor: AccountActor) throws(AccessDenied) {
        if case .denied(let denied) = decide(action, by: actor) { throw denied }
    }

    public static let appPasswordDenied = AccessDenied(
        .appPassword, "App passwords cannot manage the account; sign in with the account password.")
}
