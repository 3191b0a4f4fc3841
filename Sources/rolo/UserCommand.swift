import ArgumentParser
import Authorization
import Foundation
import RoloServer
import RoloStore

/// `rolo user add|passwd|set|show|list|delete`: account administration straight on the database.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Add, show, list, delete users, change passwords and account settings.",
        subcommands: [Add.self, Passwd.self, SetSettings.self, Show.self, List.self, Delete.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a user with an address book `default`.")
        @Argument(help: "User name.") var name: String
        @Flag(help: "Read the password from the first line of stdin instead of prompting.")
        var passwordStdin = false
        @Flag(help: "Create the SQLite database (0600, in a 0700 folder) if it does not exist yet: the first set-up.")
        var createDatabase = false
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageUsers)
            try options.requireDatabase(creating: createDatabase)
            let password = try PasswordInput.read(fromStdin: passwordStdin)
            try checkNewPassword(password)
            try await options.withStore(creating: createDatabase) { store in
                do {
                    try await store.createUser(name: name, password: password)
                } catch StoreError.userExists {
                    throw CLIError("User \(name) already exists.")
                } catch StoreError.invalidName(let reason) {
                    throw CLIError("Invalid user name: \(reason)")
                }
                print("Created user \(name).")
            }
        }
    }

    struct Passwd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a user's password.")
        @Argument(help: "User name.") var name: String
        @Flag(help: "Read the password from the first line of stdin instead of prompting.")
        var passwordStdin = false
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageUsers)
            try options.requireDatabase()
            let password = try PasswordInput.read(fromStdin: passwordStdin, prompt: "New password: ")
            try checkNewPassword(password)
            try await options.withStore { store in
                do {
                    try await store.setPassword(user: name, password: password)
                } catch StoreError.noSuchUser, StoreError.notFound {
                    throw CLIError("No user \(name).")
                }
                print("Password of \(name) changed.")
            }
        }
    }

    struct SetSettings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Change a user's account settings; prints the account as it is then.")
        @Argument(help: "User name.") var name: String
        @Option(help: ArgumentHelp("true: only app passwords open DAV, the account password no longer does.",
                                   valueName: "true|false"))
        var appPasswordsOnly: Bool?
        @Option(help: ArgumentHelp("Whether the user administers the server.", valueName: "true|false"))
        var admin: Bool?
        @Option(help: "The name other users see when sharing (empty clears it).") var displayName: String?
        @Option(help: "E-mail address (empty clears it).") var email: String?
        @Option(help: ArgumentHelp("Where the user signs in with a password: local, or ldap to hand a local user to the directory.",
                                   valueName: "local|ldap|proxy|oidc"))
        var source: String?
        @Option(help: ArgumentHelp("true: the user has no card in the organisation's directory (from its next rebuild).",
                                   valueName: "true|false"))
        var directoryHidden: Bool?
        @OptionGroup var options: DatabaseOptions

        func validate() throws {
            guard appPasswordsOnly != nil || admin != nil || displayName != nil || email != nil || source != nil
                    || directoryHidden != nil else {
                throw ValidationError("Nothing to change: give --app-passwords-only, --admin, --display-name, --email, --source "
                                      + "or --directory-hidden.")
            }
            if let source, AuthenticationSourceKind(rawValue: source) == nil {
                throw ValidationError("--source must be local, ldap, proxy or oidc (got \(source)).")
            }
        }

        func run() async throws {
            try authorize(.manageUsers)
            try await options.withStore { store in
                try await store.requireUser(name)
                let update = UserAccountUpdate(
                    displayName: displayName.map { $0.isEmpty ? String?.none : $0 },
                    email: email.map { $0.isEmpty ? String?.none : $0 },
                    appPasswordsOnly: appPasswordsOnly, admin: admin, source: source)
                do {
                    try await store.updateAccount(name: name, update)
                } catch {
                    throw CLIError.from(error, notFound: "No user \(name).", noSuchUser: "No user \(name).")
                }
                if let directoryHidden {
                    guard let directory = store as? any DirectoryStore else { throw CLIError("This database keeps no directory.") }
                    var entry = try await directory.directoryEntry(user: name)
                    entry.hidden = directoryHidden
                    try await directory.setDirectoryEntry(user: name, entry)
                }
                guard let account = try await store.account(name: name) else { throw CLIError("No user \(name).") }
                print("Updated \(name).")
                print("display name: \(account.displayName ?? "-")")
                print("email: \(account.email ?? "-")")
                print("app passwords only: \(account.appPasswordsOnly)"
                      + (account.appPasswordsOnly ? " (the account password no longer opens DAV)" : ""))
                print("admin: \(account.admin)")
                print("source: \(account.source)")
                if directoryHidden != nil, let directory = store as? any DirectoryStore {
                    print("directory hidden: \(try await directory.directoryEntry(user: name).hidden)")
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List users, one per line: the name, a tab, and where the user comes from (local, ldap, proxy, oidc).",
            discussion: "--long adds columns in a fixed order: USER ADMIN DISABLED APP-PASSWORDS-ONLY BOOKS CREATED SOURCE. "
                + "The plain list's first tab-separated field is the name (cut -f1).")
        @Flag(name: [.short, .long], help: "One line per user with the account's settings, under a header.") var long = false
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageUsers)
            try await options.withStore { store in
                let users = try await store.listUsers()
                guard long else {
                    // Where each user comes from is the one thing an admin of a directory or
                    // SSO set-up needs beside the name (issue 30), so the plain list shows it.
                    for user in users { print("\(user)\t\(try await store.account(name: user)?.source ?? "unknown")") }
                    return
                }
                var table = TextTable([("USER", .left), ("ADMIN", .left), ("DISABLED", .left), ("APP-PASSWORDS-ONLY", .left),
                                       ("BOOKS", .right), ("CREATED", .left), ("SOURCE", .left)])
                for user in users {
                    guard let account = try await store.account(name: user) else { continue }
                    let books = try await store.childCollections(owner: user, parentPath: []).filter { $0.kind == .addressBook }
                    table.add([user, "\(account.admin)", "\(account.disabled)",
                               "\(account.appPasswordsOnly)", "\(books.count)",
                               account.created.map(CLIDate.minute) ?? "unknown", account.source])
                }
                table.lines().forEach { print($0) }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user with all their address books and contacts.")
        @Argument(help: "User name.") var name: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageUsers)
            do {
                try await options.withStore { try await $0.deleteUser(name: name) }
            } catch StoreError.noSuchUser, StoreError.notFound {
                throw CLIError("No user \(name).")
            }
            print("Deleted user \(name).")
        }
    }
}

/// A failure explained in one line on stderr, exit status 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
