import ArgumentParser
import Foundation
import LDAPClient
import RoloServer

/// The `ldap_*` settings of the `ldap` source, shared by `serve` and `auth test`: each from
/// its flag, else its `ROLO_LDAP_*` variable, else the config file. A wrong one stops the
/// command naming it; the directory itself is not asked at start (an outage then must not
/// keep local users out).
struct LDAPOptions: ParsableArguments {
    @Option(help: "Directory URL, ldap:// or ldaps:// (env ROLO_LDAP_URL).") var ldapURL: String?
    @Option(help: ArgumentHelp("Upgrade an ldap:// connection with StartTLS (env ROLO_LDAP_START_TLS, default off).",
                               valueName: "on|off")) var ldapStartTLS: String?
    @Option(help: "CA certificates (PEM) to verify the directory with (env ROLO_LDAP_CA_FILE, default the system's).")
    var ldapCAFile: String?
    @Option(help: ArgumentHelp("Certificate check: never, allow, try or demand (env ROLO_LDAP_TLS_VERIFY, default demand).",
                               valueName: "mode")) var ldapTLSVerify: String?
    @Option(help: "Where users are searched, e.g. ou=people,dc=example,dc=org (env ROLO_LDAP_BASE_DN).") var ldapBaseDN: String?
    @Option(help: "Service account to search with (env ROLO_LDAP_BIND_DN; default an anonymous search).") var ldapBindDN: String?
    @Option(help: "File holding the service account's password (env ROLO_LDAP_BIND_PASSWORD_FILE).")
    var ldapBindPasswordFile: String?
    @Option(help: "Search filter, {user} is the escaped login name (env ROLO_LDAP_USER_FILTER, default (uid={user})).")
    var ldapUserFilter: String?
    @Option(help: "Attribute that names the user in Rolo (env ROLO_LDAP_USER_ATTRIBUTE, default uid).") var ldapUserAttribute: String?
    @Option(help: "Display name attribute (env ROLO_LDAP_DISPLAY_NAME_ATTRIBUTE, default cn).") var ldapDisplayNameAttribute: String?
    @Option(help: "E-mail attribute (env ROLO_LDAP_EMAIL_ATTRIBUTE, default mail).") var ldapEmailAttribute: String?
    @Option(help: "Attribute of the user listing their groups, e.g. memberOf (env ROLO_LDAP_USER_GROUPS_ATTRIBUTE).")
    var ldapUserGroupsAttribute: String?
    @Option(help: "Where groups are searched for the user (env ROLO_LDAP_GROUP_BASE_DN).") var ldapGroupBaseDN: String?
    @Option(help: "Group attribute naming members: member (DN) or memberUid (name) (env ROLO_LDAP_GROUP_MEMBER_ATTRIBUTE, default member).")
    var ldapGroupMemberAttribute: String?
    @Option(help: "Group DN a user must be in to log in (env ROLO_LDAP_REQUIRED_GROUP).") var ldapRequiredGroup: String?
    @Option(help: "Group DN whose members are Rolo admins (env ROLO_LDAP_ADMIN_GROUP).") var ldapAdminGroup: String?
    @Option(help: "Seconds to connect and for each search or bind (env ROLO_LDAP_TIMEOUT_SECONDS, default 5).")
    var ldapTimeoutSeconds: Int?

    /// The settings, or nil when `needed` is false and no `ldap_url` is set. With `needed`
    /// (`auth_sources` lists ldap), `ldap_url` and `ldap_base_dn` must be there.
    func settings(_ layered: LayeredSettings, needed: Bool) throws -> LDAPSourceSettings? {
        func text(_ flag: String?, _ key: String) -> String? {
            layered.string(flag, env: "ROLO_" + key.uppercased(), key: key).flatMap { $0.isEmpty ? nil : $0 }
        }
        func invalid(_ key: String, _ flag: Any?, _ problem: String) -> CLIError {
            layered.invalid(key, flagGiven: flag != nil, env: "ROLO_" + key.uppercased(), problem)
        }
        guard let url = text(ldapURL, "ldap_url") else {
            if needed { throw CLIError("auth_sources lists ldap, which needs ldap_url.") }
            return nil
        }
        let scheme = url.prefix { $0 != ":" }.lowercased()
        guard ["ldap", "ldaps"].contains(scheme), let parsed = URL(string: url), let host = parsed.host, !host.isEmpty,
              parsed.path.isEmpty || parsed.path == "/" else {
            throw invalid("ldap_url", ldapURL, "must be ldap://host[:port] or ldaps://host[:port] (got \(url)).")
        }
        guard let baseDN = text(ldapBaseDN, "ldap_base_dn") else {
            throw CLIError("ldap_url is set, which needs ldap_base_dn.")
        }
        var startTLS = false
        switch text(ldapStartTLS, "ldap_start_tls") ?? "off" {
        case "on": startTLS = true
        case "off": startTLS = false
        case let other: throw invalid("ldap_start_tls", ldapStartTLS, "must be on or off (got \(other)).")
        }
        if startTLS && scheme == "ldaps" {
            throw invalid("ldap_start_tls", ldapStartTLS, "is for ldap:// URLs (ldaps:// is TLS from the start).")
        }
        let verifyText = text(ldapTLSVerify, "ldap_tls_verify") ?? "demand"
        guard let verify = LDAPTLSVerify(rawValue: verifyText) else {
            throw invalid("ldap_tls_verify", ldapTLSVerify, "must be never, allow, try or demand (got \(verifyText)).")
        }
        let caFile = text(ldapCAFile, "ldap_ca_file")
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw invalid("ldap_ca_file", ldapCAFile, "cannot be read: \(caFile).")
        }
        let timeout = try layered.integer(ldapTimeoutSeconds, env: "ROLO_LDAP_TIMEOUT_SECONDS", key: "ldap_timeout_seconds") ?? 5
        guard (1...300).contains(timeout) else {
            throw invalid("ldap_timeout_seconds", ldapTimeoutSeconds, "must be 1 to 300 (got \(timeout)).")
        }
        var settings = LDAPSourceSettings(
            connection: LDAPSettings(url: url, startTLS: startTLS, caFile: caFile, tlsVerify: verify,
                                     networkTimeoutSeconds: timeout, searchTimeoutSeconds: timeout),
            baseDN: baseDN)
        settings.bindDN = text(ldapBindDN, "ldap_bind_dn")
        if let file = text(ldapBindPasswordFile, "ldap_bind_password_file") {
            guard let content = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw invalid("ldap_bind_password_file", ldapBindPasswordFile, "cannot be read: \(file).")
            }
            // The first line: a file written with `echo` ends in a newline that is no part of it.
            let password = String(content.prefix { $0 != "\n" && $0 != "\r" })
            guard !password.isEmpty else { throw invalid("ldap_bind_password_file", ldapBindPasswordFile, "is empty: \(file).") }
            settings.bindPassword = password
        }
        if settings.bindDN != nil && settings.bindPassword == nil {
            throw CLIError("ldap_bind_dn is set, which needs ldap_bind_password_file.")
        }
        if settings.bindDN == nil && settings.bindPassword != nil {
            throw CLIError("ldap_bind_password_file is set, which needs ldap_bind_dn.")
        }
        if let filter = text(ldapUserFilter, "ldap_user_filter") {
            guard filter.contains("{user}"), filter.hasPrefix("("), filter.hasSuffix(")") else {
                throw invalid("ldap_user_filter", ldapUserFilter, "must be a filter in parentheses holding {user} (got \(filter)).")
            }
            settings.userFilter = filter
        }
        if let value = text(ldapUserAttribute, "ldap_user_attribute") { settings.userAttribute = value }
        if let value = text(ldapDisplayNameAttribute, "ldap_display_name_attribute") { settings.displayNameAttribute = value }
        if let value = text(ldapEmailAttribute, "ldap_email_attribute") { settings.emailAttribute = value }
        settings.userGroupsAttribute = text(ldapUserGroupsAttribute, "ldap_user_groups_attribute")
        settings.groupBaseDN = text(ldapGroupBaseDN, "ldap_group_base_dn")
        if let value = text(ldapGroupMemberAttribute, "ldap_group_member_attribute") { settings.groupMemberAttribute = value }
        settings.requiredGroup = text(ldapRequiredGroup, "ldap_required_group")
        settings.adminGroup = text(ldapAdminGroup, "ldap_admin_group")
        if (settings.requiredGroup != nil || settings.adminGroup != nil)
            && settings.userGroupsAttribute == nil && settings.groupBaseDN == nil {
            throw CLIError("ldap_required_group and ldap_admin_group need ldap_user_groups_attribute or ldap_group_base_dn.")
        }
        return settings
    }
}
