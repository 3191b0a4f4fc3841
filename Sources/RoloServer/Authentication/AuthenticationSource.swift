import Foundation
import HTTPTypes
import RoloStore

/// The sources a login may come from (`auth_sources`), tried in the configured order.
/// A password source is a case here and a `PasswordSource` conformance beside `LocalSource`,
/// asked in `BasicAuthenticator.checkSources`.
public enum AuthenticationSourceKind: String, Sendable, CaseIterable {
    /// Rolo's own users: bcrypt account passwords and app passwords.
    case local
    /// A trusted reverse proxy names the user in `proxy_user_header`.
    case proxy
    /// A directory (OpenLDAP, 389-DS, Active Directory): search, then bind as the user.
    case ldap
    /// The web UI's "Sign in with <provider>" (OpenID Connect, the `oidc_*` settings).
    case oidc

    /// Whether `name` can be `proxy_user_header`: an HTTP field name (RFC 9110 token).
    public static func isHeaderName(_ name: String) -> Bool { HTTPField.Name(name) != nil }
}

/// Who a source found behind a login.
struct SourceUser: Sendable, Equatable {
    /// The user's name in Rolo.
    var name: String
    var displayName: String?
    var email: String?
    var groups: [String] = []
    var isAdmin = false
    /// Whether the source decides who is an admin (`ldap_admin_group` set): then each login
    /// sets the account's admin flag to `isAdmin`, else it is left as `rolo user set` made it.
    var managesAdmin = false
}

/// What a source answers a login with.
enum SourceAnswer: Sendable, Equatable {
    case found(SourceUser)
    /// Not this user, or not this password.
    case rejected
    /// The source cannot be reached: 503 with `Retry-After`, and no other source is asked
    /// (a fall-back could let a different password in).
    case unavailable
}

/// A source that checks a user name and a password (`local`, `ldap`). Throttling,
/// the failure log and the credential cache stay in `BasicAuthenticator`, in front of every
/// source, so they cover them all.
protocol PasswordSource: Sendable {
    func login(user: String, password: String) async -> SourceAnswer
}

/// The user name a login carries, as Rolo names the user: iOS 18.4 and later send a name
/// that holds `@` percent-encoded (`alice%40example.org`), meaning `alice@example.org`.
/// Only a name with `%40` is decoded, so every other name (a `%` is allowed in one) is kept.
public enum LoginName {
    public static func normalized(_ name: String) -> String {
        guard name.range(of: "%40", options: .caseInsensitive) != nil,
              let decoded = name.removingPercentEncoding, !decoded.isEmpty else { return name }
        return decoded
    }
}
