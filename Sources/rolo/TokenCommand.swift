import ArgumentParser
import Authorization
import Foundation
import RoloStore

/// `rolo token add|list|revoke`: app passwords, one per device.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Create, list and revoke a user's app passwords (one per device).",
        subcommands: [Add.self, List.self, Revoke.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an app password; prints the secret alone on the last line, shown once.",
            discussion: """
                The device logs in with the user's name and this secret as its password. Without \
                --book it reaches every book the user has, books made later included; with --book \
                only the books named (own books such as `default`, or shared ones as they appear \
                in the user's home, such as `family~alice`).
                """)
        @Argument(help: "User name.") var user: String
        @Argument(help: "A name for the device or app, unique among the user's live app passwords.") var name: String
        @Flag(help: "Read only: the device can read cards but not change them.") var readOnly = false
        @Option(name: .customLong("book"), help: "Limit it to this book (repeat for several).") var books: [String] = []
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageAppPasswords(of: user))
            try await options.withStore { store in
                try await store.requireUser(user)
                let created: NewAppPassword
                do {
                    created = try await store.createAppPassword(user: user, name: name, readOnly: readOnly,
                                                                books: books.isEmpty ? nil : books)
                } catch {
                    throw CLIError.from(error, notFound: "No user \(user).", noSuchUser: "No user \(user).",
                                        refused: "Cannot create app password \"\(name)\"")
                }
                let password = created.appPassword
                print("Created app password \"\(password.name)\" for \(user): \(TokenText.scope(password)).")
                if try await store.account(name: user)?.appPasswordsOnly == false {
                    print("The account password still opens DAV too (rolo user set \(user) --app-passwords-only true to stop that).")
                }
                print("Log in as \(user) with this password. It is shown once: Rolo keeps only a keyed hash of it.")
                print(created.secret)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a user's app passwords: name, scope, created, last used, revoked (times in UTC).")
        @Argument(help: "User name.") var user: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageAppPasswords(of: user))
            try await options.withStore { store in
                try await store.requireUser(user)
                let passwords = try await store.appPasswords(user: user)
                guard !passwords.isEmpty else {
                    print("\(user) has no app passwords.")
                    return
                }
                var table = TextTable([("NAME", .left), ("SCOPE", .left), ("CREATED", .left), ("LAST USED", .left),
                                       ("REVOKED", .left)])
                for password in passwords {
                    var lastUsed = "never"
                    if let date = password.lastUsed {
                        lastUsed = CLIDate.minute(date)
                        if let address = password.lastAddress { lastUsed += " from \(address)" }
                    }
                    table.add([password.name, TokenText.scope(password), CLIDate.minute(password.created), lastUsed,
                               password.revoked.map(CLIDate.minute) ?? "-"])
                }
                table.lines().forEach { print($0) }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke an app password: its next request is refused.",
            discussion: "Cards the device already synced stay on it: revoking stops future access only.")
        @Argument(help: "User name.") var user: String
        @Argument(help: "The app password's name, as `rolo token list` shows it.") var name: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageAppPasswords(of: user))
            try await options.withStore { store in
                try await store.requireUser(user)
                do {
                    try await store.revokeAppPassword(user: user, name: name)
                } catch {
                    throw CLIError.from(error, notFound: "\(user) has no live app password named \"\(name)\".",
                                        noSuchUser: "No user \(user).")
                }
                print("Revoked app password \"\(name)\" of \(user): its next request is refused.")
            }
        }
    }
}

enum TokenText {
    /// "read-write, all books" or "read-only: default, family~alice".
    static func scope(_ password: AppPassword) -> String {
        let access = password.scope.readOnly ? "read-only" : "read-write"
        guard password.scope.books != nil else { return "\(access), all books" }
        return password.bookNames.isEmpty ? "\(access), no books left" : "\(access): \(password.bookNames.joined(separator: ", "))"
    }
}
