import Foundation
import LDAPClient
import Logging

/// The `ldap_*` settings: where the directory is and how a login name maps to an entry.
public struct LDAPSourceSettings: Sendable, Equatable {
    /// The connection: `ldap_url`, `ldap_start_tls`, `ldap_ca_file`, `ldap_tls_verify`,
    /// `ldap_timeout_seconds` (for the connection and for each operation).
    public var connection: LDAPSettings
    public var baseDN: String
    /// The service account the user's entry is searched with; nil: an anonymous search.
    public var bindDN: String?
    /// Read from `ldap_bind_password_file` at start, never from the command line.
    public var bindPassword: String?
    /// `{user}` is replaced by the login name escaped per RFC 4515.
    public var userFilter = "(uid={user})"
    /// The attribute whose value names the user in Rolo (`uid`, AD's `sAMAccountName`).
    public var userAttribute = "uid"
    public var displayNameAttribute = "cn"
    public var emailAttribute = "mail"
    /// An attribute of the user listing their groups' DNs (`memberOf`); nil: not read.
    public var userGroupsAttribute: String?
    /// Where groups are searched for the user; nil: no group search.
    public var groupBaseDN: String?
    /// `member` or `uniqueMember` hold the user's DN, `memberUid` the user's name.
    public var groupMemberAttribute = "member"
    /// Group DNs (compared without regard to case).
    public var requiredGroup: String?
    public var adminGroup: String?

    public init(connection: LDAPSettings, baseDN: String) {
        self.connection = connection
        self.baseDN = baseDN
    }
}

/// What the directory holds for a login name, as the service account sees it.
public struct LDAPUserEntry: Sendable, Equatable {
    public var dn: String
    /// The name in Rolo: `ldap_user_attribute`'s value (the login name when the entry lacks it).
    public var name: String
    public var displayName: String?
    public var email: String?
    /// Group DNs, from `ldap_user_groups_attribute` and the group search together.
    public var groups: [String]
    /// False when `ldap_required_group` is set and the user is not in it.
    public var allowed: Bool
    public var isAdmin: Bool
}

/// The `ldap` source: search the user's entry with the service account, then bind as that
/// entry with the password the user gave. One short connection per check (logins that
/// miss the credential cache are rare: a phone's sync burst is answered from the cache).
/// An empty password never reaches a bind; a directory that cannot answer (down, timing
/// out, TLS failing, the service account refused) is `unavailable`, logged once per outage.
public struct LDAPSource: PasswordSource {
    public let settings: LDAPSourceSettings
    private let outage: OutageLog

    public init(settings: LDAPSourceSettings, logger: Logger = Logger(label: "rolo")) {
        self.settings = settings
        self.outage = OutageLog(what: "LDAP directory", logger: logger)
    }

    /// What a check found, with the entry for `rolo auth test`.
    public enum Check: Sendable, Equatable {
        /// The entry and whether the password opened it.
        case entry(LDAPUserEntry, passwordAccepted: Bool)
        /// No entry (or more than one) matches the name.
        case noEntry
        case unavailable(String)
    }

    func login(user: String, password: String) async -> SourceAnswer {
        guard !password.isEmpty else { return .rejected }
        switch await check(user: user, password: password) {
        case .entry(let entry, let accepted):
            guard accepted, entry.allowed else { return .rejected }
            return .found(SourceUser(name: entry.name, displayName: entry.displayName, email: entry.email,
                                     groups: entry.groups, isAdmin: entry.isAdmin,
                                     managesAdmin: settings.adminGroup != nil))
        case .noEntry: return .rejected
        case .unavailable: return .unavailable
        }
    }

    /// Whether the user is still in the directory (and in the required group): asked for a
    /// user this source made when they sign in with an app password.
    func stillPresent(user: String) async -> SourceAnswer {
        switch await check(user: user, password: nil) {
        case .entry(let entry, _): return entry.allowed ? .found(SourceUser(name: entry.name)) : .rejected
        case .noEntry: return .rejected
        case .unavailable: return .unavailable
        }
    }

    /// Looks `user` up and, given a password, binds as the entry with it (never with an empty one).
    public func check(user: String, password: String?) async -> Check {
        do {
            let connection = try await LDAPConnection.open(settings.connection)
            defer { connection.close() }
            if let bindDN = settings.bindDN, let bindPassword = settings.bindPassword {
                do {
                    try await connection.bind(dn: bindDN, password: bindPassword)
                } catch LDAPError.invalidCredentials, LDAPError.emptyPassword {
                    // Not the user's fault, and no reason to try another source.
                    throw LDAPError.unavailable("the service account \(bindDN) was refused (ldap_bind_dn, ldap_bind_password_file)")
                }
            }
            guard let entry = try await lookup(user, on: connection) else {
                outage.recovered()
                return .noEntry
            }
            var accepted = false
            if let password, !password.isEmpty {
                do {
                    try await connection.bind(dn: entry.dn, password: password)
                    accepted = true
                } catch LDAPError.invalidCredentials, LDAPError.emptyPassword {
                    accepted = false
                }
            }
            outage.recovered()
            return .entry(entry, passwordAccepted: accepted)
        } catch let error as LDAPError {
            outage.failed("\(error)")
            return .unavailable("\(error)")
        } catch {
            outage.failed("\(error)")
            return .unavailable("\(error)")
        }
    }

    /// The one entry the filter finds for `user`, with its groups; nil for none or several.
    private func lookup(_ user: String, on connection: LDAPConnection) async throws -> LDAPUserEntry? {
        let filter = settings.userFilter.replacingOccurrences(of: "{user}", with: LDAPFilter.escape(user))
        var attributes = [settings.userAttribute, settings.displayNameAttribute, settings.emailAttribute]
        if let groups = settings.userGroupsAttribute { attributes.append(groups) }
        let found: [LDAPEntry]
        do {
            found = try await connection.search(base: settings.baseDN, filter: filter, attributes: attributes, sizeLimit: 2)
        } catch LDAPError.failed(let code, _) where code == 4 {
            return nil  // sizeLimitExceeded: the name is ambiguous, so it names nobody.
        }
        guard found.count == 1, let entry = found.first else { return nil }
        let name = entry.values(settings.userAttribute).first ?? user
        var groups = settings.userGroupsAttribute.map { entry.values($0) } ?? []
        if let groupBase = settings.groupBaseDN {
            let byName = settings.groupMemberAttribute.caseInsensitiveCompare("memberUid") == .orderedSame
            let member = LDAPFilter.escape(byName ? name : entry.dn)
            let matches = try await connection.search(base: groupBase, filter: "(\(settings.groupMemberAttribute)=\(member))",
                                                      attributes: ["cn"])
            for group in matches where !groups.contains(where: { Self.sameDN($0, group.dn) }) { groups.append(group.dn) }
        }
        let allowed = settings.requiredGroup.map { required in groups.contains { Self.sameDN($0, required) } } ?? true
        let isAdmin = settings.adminGroup.map { admin in groups.contains { Self.sameDN($0, admin) } } ?? false
        return LDAPUserEntry(dn: entry.dn, name: name, displayName: entry.values(settings.displayNameAttribute).first,
                             email: entry.values(settings.emailAttribute).first, groups: groups,
                             allowed: allowed, isAdmin: isAdmin)
    }

    /// DNs compared as directories spell them: case aside, and spaces after commas aside.
    static func sameDN(_ lhs: String, _ rhs: String) -> Bool {
        func folded(_ dn: String) -> String {
            dn.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ",").lowercased()
        }
        return folded(lhs) == folded(rhs)
    }
}
