import ArgumentParser
import Foundation
import RoloServer

/// The `oidc_*` settings of `rolo serve` (flag, `ROLO_OIDC_*`, config file), read only with
/// `oidc` among `auth_sources`. A missing issuer or client id, an unreadable secret file, a
/// plain-http issuer off loopback, or a provider whose discovery fails stops serve at start
/// naming the setting.
struct OIDCOptions: ParsableArguments {
    @Option(name: .customLong("oidc-issuer"), help: "OpenID provider's issuer URL, https (http only on loopback) (env ROLO_OIDC_ISSUER).")
    var issuer: String?
    @Option(name: .customLong("oidc-display-name"), help: "Provider name on the sign-in page's \"Sign in with\" button (env ROLO_OIDC_DISPLAY_NAME).")
    var displayName: String?
    @Option(name: .customLong("oidc-client-id"), help: "Rolo's client id at the provider (env ROLO_OIDC_CLIENT_ID).")
    var clientID: String?
    @Option(name: .customLong("oidc-client-secret-file"), help: "File holding the client secret (env ROLO_OIDC_CLIENT_SECRET_FILE).")
    var clientSecretFile: String?
    @Option(name: .customLong("oidc-scope"), help: "Scope asked for at sign-in; repeatable (env ROLO_OIDC_SCOPES, comma-separated, default openid profile email).")
    var scopes: [String] = []
    @Option(name: .customLong("oidc-ca-file"), help: "PEM certificates trusted for the provider instead of the system's (env ROLO_OIDC_CA_FILE).")
    var caFile: String?
    @Option(name: .customLong("oidc-user-claim"), help: "ID-token claim naming the user (env ROLO_OIDC_USER_CLAIM, default preferred_username).")
    var userClaim: String?
    @Option(name: .customLong("oidc-groups-claim"), help: "ID-token claim listing the user's groups (env ROLO_OIDC_GROUPS_CLAIM, default groups).")
    var groupsClaim: String?
    @Option(name: .customLong("oidc-required-group"), help: "Only members of this group sign in (env ROLO_OIDC_REQUIRED_GROUP).")
    var requiredGroup: String?
    @Option(name: .customLong("oidc-admin-group"), help: "Members of this group are admins (env ROLO_OIDC_ADMIN_GROUP).")
    var adminGroup: String?

    /// The settings when `oidc` is among the sources, nil otherwise.
    func settings(_ settings: LayeredSettings, sourceListed: Bool, authSourcesFlagGiven: Bool) throws -> OIDCSettings? {
        guard sourceListed else { return nil }
        func value(_ flag: String?, _ key: String) -> String? {
            settings.string(flag, env: "ROLO_" + key.uppercased(), key: key).flatMap { $0.isEmpty ? nil : $0 }
        }
        func invalid(_ key: String, given flag: Any?, _ problem: String) -> CLIError {
            settings.invalid(key, flagGiven: flag != nil, env: "ROLO_" + key.uppercased(), problem)
        }
        guard let issuerText = value(issuer, "oidc_issuer") else {
            throw settings.invalid("auth_sources", flagGiven: authSourcesFlagGiven, env: "ROLO_AUTH_SOURCES",
                                   flag: "--auth-source", "lists oidc, which needs oidc_issuer.")
        }
        guard let issuerURL = URL(string: issuerText), issuerURL.host != nil else {
            throw invalid("oidc_issuer", given: issuer, "must be a URL (got \(issuerText)).")
        }
        guard OIDCSettings.isAllowedEndpoint(issuerURL) else {
            throw invalid("oidc_issuer", given: issuer, "must be https, or http on a loopback address (got \(issuerText)).")
        }
        guard let client = value(clientID, "oidc_client_id") else {
            throw settings.invalid("auth_sources", flagGiven: authSourcesFlagGiven, env: "ROLO_AUTH_SOURCES",
                                   flag: "--auth-source", "lists oidc, which needs oidc_client_id.")
        }
        var secret: String?
        if let path = value(clientSecretFile, "oidc_client_secret_file") {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw invalid("oidc_client_secret_file", given: clientSecretFile, "cannot be read (\(path)).")
            }
            secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard secret?.isEmpty == false else {
                throw invalid("oidc_client_secret_file", given: clientSecretFile, "is empty (\(path)).")
            }
        }
        let ca = value(caFile, "oidc_ca_file")
        if let ca, !FileManager.default.isReadableFile(atPath: ca) {
            throw invalid("oidc_ca_file", given: caFile, "cannot be read (\(ca)).")
        }
        let listed = settings.list(scopes, env: "ROLO_OIDC_SCOPES", key: "oidc_scopes")
        return OIDCSettings(
            issuer: issuerURL, displayName: value(displayName, "oidc_display_name") ?? issuerURL.host ?? "OpenID Connect",
            clientID: client, clientSecret: secret, scopes: listed.isEmpty ? OIDCSettings.defaultScopes : listed,
            caFile: ca, userClaim: value(userClaim, "oidc_user_claim") ?? "preferred_username",
            groupsClaim: value(groupsClaim, "oidc_groups_claim") ?? "groups",
            requiredGroup: value(requiredGroup, "oidc_required_group"), adminGroup: value(adminGroup, "oidc_admin_group"))
    }

    /// The provider, discovered before the server starts; a failure names `oidc_issuer`.
    func discover(_ oidcSettings: OIDCSettings?, _ settings: LayeredSettings) async throws -> OIDCProvider? {
        guard let oidcSettings else { return nil }
        do {
            return try await OIDCProvider.discover(oidcSettings)
        } catch {
            throw settings.invalid("oidc_issuer", flagGiven: issuer != nil, env: "ROLO_OIDC_ISSUER",
                                   "names a provider whose discovery failed: \(error).")
        }
    }
}
