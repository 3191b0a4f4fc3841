import Foundation

/// The `oidc_*` settings: who the provider is and how its answer names the user. `rolo serve`
/// fills them from the config file, flags and `ROLO_OIDC_*`; `OIDCProvider.discover` checks
/// them against the provider at start.
public struct OIDCSettings: Sendable, Equatable {
    /// `oidc_issuer`: the provider's issuer URL, exactly as its ID tokens' `iss` says it.
    public var issuer: URL
    /// `oidc_display_name`: the sign-in page's "Sign in with <name>".
    public var displayName: String
    /// `oidc_client_id`: Rolo's client at the provider; ID tokens must name it in `aud`.
    public var clientID: String
    /// Read from `oidc_client_secret_file`; nil for a public client (PKCE alone).
    public var clientSecret: String?
    /// `oidc_scopes`: asked for at sign-in; `openid` is always among them.
    public var scopes: [String]
    /// `oidc_ca_file`: PEM certificates trusted for the provider instead of the system's.
    public var caFile: String?
    /// `oidc_user_claim`: the ID-token claim that names the user in Rolo.
    public var userClaim: String
    /// `oidc_groups_claim`: the claim listing the user's groups.
    public var groupsClaim: String
    /// `oidc_required_group`: when set, only its members sign in.
    public var requiredGroup: String?
    /// `oidc_admin_group`: when set, its members are Rolo admins and nobody else is
    /// (decided again at every sign-in).
    public var adminGroup: String?

    public static let defaultScopes = ["openid", "profile", "email"]

    public init(issuer: URL, displayName: String = "OpenID Connect", clientID: String, clientSecret: String? = nil,
                scopes: [String] = defaultScopes, caFile: String? = nil, userClaim: String = "preferred_username",
                groupsClaim: String = "groups", requiredGroup: String? = nil, adminGroup: String? = nil) {
        self.issuer = issuer; self.displayName = displayName; self.clientID = clientID; self.clientSecret = clientSecret
        self.scopes = scopes.contains("openid") ? scopes : ["openid"] + scopes
        self.caFile = caFile; self.userClaim = userClaim; self.groupsClaim = groupsClaim
        self.requiredGroup = requiredGroup; self.adminGroup = adminGroup
    }

    /// Whether Rolo may talk to `url`: https, or plain http to a loopback address only (a
    /// provider run by a test on the same machine). Anything else would carry the sign-in
    /// code and the client secret in the clear.
    public static func isAllowedEndpoint(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": return url.host?.isEmpty == false
        case "http": return url.host.map(isLoopback) ?? false
        default: return false
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" || bare == "::1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts[0] == "127"
    }
}
