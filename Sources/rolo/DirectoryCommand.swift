import ArgumentParser
import CardIndexing
import Foundation
import LDAPClient
import RoloServer
import Synchronization
import RoloStore

/// `rolo directory sync`: rebuilds the organisation's directory (issue 32) from the users'
/// accounts and entries, with the `directory` setting `serve` would use (flag, variable,
/// config file), and prints what changed. The server does the same every hour.
struct DirectoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "directory", abstract: "Rebuild the organisation's directory book.",
        subcommands: [Sync.self])

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rebuild the directory now, touching only what changed; prints one line per change.")
        @Option(help: "TOML file with serve's settings (env ROLO_CONFIG).") var config: String?
        @OptionGroup(title: "Directory") var directory: DirectoryOptions
        @Option(name: .customLong("auth-source"),
                help: "Where logins come from: with ldap, the LDAP directory's people fill the directory; repeatable (env ROLO_AUTH_SOURCES, default local).")
        var authSources: [String] = []
        @OptionGroup var database: DatabaseOptions
        @OptionGroup(title: "LDAP source") var ldap: LDAPOptions

        func run() async throws {
            let path = config ?? Environment.value("ROLO_CONFIG")
            let settings = LayeredSettings(file: try path.map(ConfigFile.init(path:)) ?? ConfigFile())
            let chosen = try directory.read(settings)
            let names = settings.list(authSources, env: "ROLO_AUTH_SOURCES", key: "auth_sources")
            for name in names where AuthenticationSourceKind(rawValue: name) == nil {
                throw settings.invalid("auth_sources", flagGiven: !authSources.isEmpty, env: "ROLO_AUTH_SOURCES",
                                       flag: "--auth-source", "names an unknown source \"\(name)\".")
            }
            let fromLDAP = names.contains(AuthenticationSourceKind.ldap.rawValue)
            let ldapSettings = fromLDAP ? try ldap.settings(settings, needed: true) : nil
            try directory.checkSource(chosen, fromLDAP: fromLDAP, settings: settings)
            var options = database
            options.database = database.resolvedPath(configured: settings.file.string("database"))
            try options.requireDatabase()
            try await options.withStore { store in
                guard let directoryStore = store as? any RoloStore & DirectoryStore else {
                    throw CLIError("This database keeps no directory.")
                }
                // Under serve's lease: two rebuilds at once would write the same cards.
                let result = Mutex<DirectorySyncReport?>(nil)
                do {
                    // A rebuild `serve` runs (at start, then hourly) takes seconds: wait for it.
                    let deadline = ContinuousClock.now + .seconds(60)
                    var ran = false
                    while !ran {
                        ran = try await store.withMaintenanceLease("directory") {
                            let rebuild = DirectoryRebuild(store: directoryStore, mode: chosen.mode, ldap: ldapSettings,
                                                           groups: chosen.groups, excludedGroups: chosen.excludedGroups,
                                                           fields: chosen.fields)
                            let report = try await rebuild.run { note in
                                FileHandle.standardError.write(Data("skipped \(note)\n".utf8))
                            }
                            result.withLock { $0 = report }
                        }
                        if ran || ContinuousClock.now > deadline { break }
                        try await Task.sleep(for: .milliseconds(200))
                    }
                    guard ran else {
                        throw CLIError("Directory not rebuilt: another process is rebuilding it now; run it again in a minute.")
                    }
                } catch StoreError.invalid(let reason) {
                    throw CLIError("Directory not rebuilt: \(reason).")
                } catch let error as LDAPError {
                    throw CLIError("Directory not rebuilt: the LDAP directory could not be read: \(error).")
                }
                guard let report = result.withLock({ $0 }) else { throw CLIError("Directory not rebuilt.") }
                for line in report.lines { print(line) }
                print(report.isEmpty ? "Directory unchanged."
                      : "Directory rebuilt: \(report.added.count) added, \(report.changed.count) changed, "
                        + "\(report.removed.count) removed; mounted for \(report.mounted.count), "
                        + "unmounted for \(report.unmounted.count).")
            }
        }
    }
}

/// The directory's settings `serve` and `rolo directory sync` share (the same flags, variables
/// and keys, read one way), so a rebuild by hand builds what the server's would.
struct DirectoryOptions: ParsableArguments {
    @Option(help: "off, all, groups or gateway (searched only): who sees the organisation's directory, rebuilt hourly (env ROLO_DIRECTORY, default off).")
    var directory: String?
    @Option(name: .customLong("directory-group"),
            help: "With directory = groups, a group that gets a directory; repeatable (env ROLO_DIRECTORY_GROUPS, comma-separated).")
    var directoryGroups: [String] = []
    @Option(name: .customLong("directory-exclude-group"),
            help: "An LDAP group whose members have no card in the directory (service accounts, external staff); repeatable (env ROLO_DIRECTORY_EXCLUDE_GROUPS, comma-separated).")
    var directoryExcludeGroups: [String] = []
    @Option(name: .customLong("directory-field"),
            help: "A field the directory's cards carry and My card offers, of name, email, phone, title, department, organisation, photo; repeatable (env ROLO_DIRECTORY_FIELDS, comma-separated, default all).")
    var directoryFields: [String] = []

    /// What the settings ask for.
    struct Chosen {
        var mode: DirectoryMode
        /// With `groups`, the group DNs that get a book each; empty otherwise.
        var groups: [String]
        var excludedGroups: [String]
        var fields: Set<DirectoryField>
    }

    func read(_ settings: LayeredSettings) throws -> Chosen {
        let (mode, groups) = try modeAndGroups(settings)
        return Chosen(mode: mode, groups: groups, excludedGroups: try excludedGroups(settings), fields: try fields(settings))
    }

    /// The mode and, with `groups`, the group DNs (each naming a book of its own, no two the same).
    private func modeAndGroups(_ settings: LayeredSettings) throws -> (DirectoryMode, [String]) {
        let text = settings.string(directory, env: "ROLO_DIRECTORY", key: "directory") ?? "off"
        guard let mode = DirectoryMode(rawValue: text) else {
            throw settings.invalid("directory", flagGiven: directory != nil, env: "ROLO_DIRECTORY", "must be off, all, groups or gateway (got \(text)).")
        }
        let groups = settings.list(directoryGroups, env: "ROLO_DIRECTORY_GROUPS", key: "directory_groups")
        if mode == .groups {
            guard !groups.isEmpty else {
                throw settings.invalid("directory", flagGiven: directory != nil, env: "ROLO_DIRECTORY",
                                       "is groups, which needs directory_groups.")
            }
            var books: [String: String] = [:]
            for group in groups {
                guard let book = DirectoryRules.groupBook(group) else {
                    throw settings.invalid("directory_groups", flagGiven: !directoryGroups.isEmpty, env: "ROLO_DIRECTORY_GROUPS",
                                           flag: "--directory-group", "must list group DNs such as cn=sales,ou=groups,dc=example,dc=org (got \(group)).")
                }
                if let other = books[book] {
                    throw settings.invalid("directory_groups", flagGiven: !directoryGroups.isEmpty, env: "ROLO_DIRECTORY_GROUPS",
                                           flag: "--directory-group", "names \(other) and \(group), which would share the book \(book).")
                }
                books[book] = group
            }
        }
        return (mode, mode == .groups ? groups : [])
    }

    /// `directory_fields`: the fields the cards carry and "My card" offers (every one unless
    /// set; the name always). An unknown field stops the start, naming the key.
    private func fields(_ settings: LayeredSettings) throws -> Set<DirectoryField> {
        let names = settings.list(directoryFields, env: "ROLO_DIRECTORY_FIELDS", key: "directory_fields")
        guard !names.isEmpty else { return Set(DirectoryField.allCases) }
        var fields: Set<DirectoryField> = [.name]
        for name in names {
            guard let field = DirectoryField(rawValue: name) else {
                throw settings.invalid("directory_fields", flagGiven: !directoryFields.isEmpty, env: "ROLO_DIRECTORY_FIELDS",
                                       flag: "--directory-field", "names an unknown field \"\(name)\" (fields: "
                                       + DirectoryField.allCases.map(\.rawValue).joined(separator: ", ") + ").")
            }
            fields.insert(field)
        }
        return fields
    }

    /// `directory_exclude_groups`: group DNs (each checked as `directory_groups` are).
    private func excludedGroups(_ settings: LayeredSettings) throws -> [String] {
        let groups = settings.list(directoryExcludeGroups, env: "ROLO_DIRECTORY_EXCLUDE_GROUPS", key: "directory_exclude_groups")
        for group in groups where DirectoryRules.groupBook(group) == nil {
            throw settings.invalid("directory_exclude_groups", flagGiven: !directoryExcludeGroups.isEmpty, env: "ROLO_DIRECTORY_EXCLUDE_GROUPS",
                                   flag: "--directory-exclude-group",
                                   "must list group DNs such as cn=service,ou=groups,dc=example,dc=org (got \(group)).")
        }
        return groups
    }

    /// `groups` and `directory_exclude_groups` take the users' groups from LDAP: they need the
    /// ldap source (an exclusion that could never apply would leave everyone listed, silently).
    func checkSource(_ chosen: Chosen, fromLDAP: Bool, settings: LayeredSettings) throws {
        guard !fromLDAP else { return }
        if chosen.mode == .groups {
            throw settings.invalid("directory", flagGiven: directory != nil, env: "ROLO_DIRECTORY",
                                   "is groups, which takes the users' groups from LDAP: auth_sources must list ldap.")
        }
        if !chosen.excludedGroups.isEmpty, chosen.mode != .off {
            throw settings.invalid("directory_exclude_groups", flagGiven: !directoryExcludeGroups.isEmpty, env: "ROLO_DIRECTORY_EXCLUDE_GROUPS",
                                   flag: "--directory-exclude-group", "names LDAP groups: auth_sources must list ldap.")
        }
    }
}
