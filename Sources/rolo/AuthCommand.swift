import ArgumentParser
import Foundation
import RoloServer
import RoloStore

/// `rolo auth test USER --password-stdin`: a login checked against the sources the server
/// would use (`auth_sources` and their settings, from the same flags, variables and config
/// file as `serve`), printing what each found; never the password.
struct AuthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth", abstract: "Check logins against the configured authentication sources.",
        subcommands: [Test.self])

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check USER's password against each source in auth_sources order; exit 0 when one accepts it.")
        @Argument(help: "User name, as a client sends it (alice%40example.org is alice@example.org).") var user: String
        @Flag(help: "Read the password from the first line of stdin instead of prompting.") var passwordStdin = false
        @Option(help: "TOML file with serve's settings (env ROLO_CONFIG).") var config: String?
        @Option(name: .customLong("auth-source"),
                help: "Where logins come from, tried in order: local, ldap or proxy; repeatable (env ROLO_AUTH_SOURCES, default local).")
        var authSources: [String] = []
        @OptionGroup var database: DatabaseOptions
        @OptionGroup(title: "LDAP source") var ldap: LDAPOptions

        func run() async throws {
            let path = config ?? Environment.value("ROLO_CONFIG")
            let settings = LayeredSettings(file: try path.map(ConfigFile.init(path:)) ?? ConfigFile())
            let names = settings.list(authSources, env: "ROLO_AUTH_SOURCES", key: "auth_sources")
            var sources: [AuthenticationSourceKind] = []
            for name in names.isEmpty ? ["local"] : names {
                guard let source = AuthenticationSourceKind(rawValue: name) else {
                    throw settings.invalid("auth_sources", flagGiven: !authSources.isEmpty, env: "ROLO_AUTH_SOURCES",
                                           flag: "--auth-source", "names an unknown source \"\(name)\".")
                }
                if !sources.contains(source) { sources.append(source) }
            }
            let ldapSettings = try ldap.settings(settings, needed: sources.contains(.ldap))
            let password = try PasswordInput.read(fromStdin: passwordStdin)
            let name = LoginName.normalized(user)
            if name != user { print("User name \(user) is \(name).") }
            for source in sources {
                switch source {
                case .proxy:
                    print("proxy: skipped (the proxy names the user in a header; no password to check).")
                case .oidc:
                    print("oidc: skipped (the provider signs users in through the browser; phones use app passwords).")
                case .local:
                    let location = database.resolvedPath(configured: settings.file.string("database"))
                    var databaseOptions = database
                    databaseOptions.database = location
                    do {
                        try DatabaseOptions.requireDatabase(location, creating: false)
                    } catch {
                        print("local: not checked: no database at \(DatabaseOptions.displayed(location)).")
                        continue
                    }
                    let accepted = try await databaseOptions.withStore { store -> Bool in
                        guard let account = try await store.account(name: name) else {
                            print("local: no user \(name).")
                            return false
                        }
                        guard account.source == AuthenticationSourceKind.local.rawValue else {
                            print("local: user \(name) comes from \(account.source), not checked here.")
                            return false
                        }
                        let valid = try await store.verifyPassword(user: name, password: password)
                        print("local: user \(name)\(account.admin ? " (admin)" : "")\(account.disabled ? " (disabled)" : ""): "
                              + (valid ? "password accepted." : "password refused."))
                        return valid && !account.disabled
                    }
                    if accepted { return }
                case .ldap:
                    guard let ldapSettings else { continue }
                    switch await LDAPSource(settings: ldapSettings).check(user: name, password: password) {
                    case .noEntry:
                        print("ldap: no entry matches \(ldapSettings.userFilter) for \(name) below \(ldapSettings.baseDN).")
                    case .unavailable(let reason):
                        print("ldap: the directory is unavailable (\(reason)); the server would answer 503 and try no other source.")
                        throw ExitCode(1)
                    case .entry(let entry, let accepted):
                        print("ldap: entry \(entry.dn)")
                        print("  name in Rolo: \(entry.name)")
                        print("  display name: \(entry.displayName ?? "-")")
                        print("  e-mail: \(entry.email ?? "-")")
                        print("  groups: \(entry.groups.isEmpty ? "-" : entry.groups.joined(separator: "; "))")
                        if let required = ldapSettings.requiredGroup {
                            print("  required group \(required): \(entry.allowed ? "member" : "NOT a member")")
                        }
                        print("  admin: \(entry.isAdmin ? "yes" : "no")\(ldapSettings.adminGroup == nil ? " (no ldap_admin_group)" : "")")
                        print("  password: \(accepted ? "accepted" : "refused")")
                        if accepted && entry.allowed {
                            print("Accepted by ldap as \(entry.name).")
                            return
                        }
                    }
                }
            }
            print("No source accepted the login.")
            throw ExitCode(1)
        }
    }
}
