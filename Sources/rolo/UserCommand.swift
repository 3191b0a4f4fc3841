import ArgumentParser
import Foundation
import RoloStore

/// `rolo user add|passwd|list|delete`: account administration straight on the database.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Add, list, delete users and change passwords.",
        subcommands: [Add.self, Passwd.self, List.self, Delete.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a user with an address book `default`.")
        @Argument(help: "User name.") var name: String
        @Flag(help: "Read the password from the first line of stdin instead of prompting.")
        var passwordStdin = false
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            let password = try PasswordInput.read(fromStdin: passwordStdin)
            let store = try options.openStore()
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

    struct Passwd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a user's password.")
        @Argument(help: "User name.") var name: String
        @Flag(help: "Read the password from the first line of stdin instead of prompting.")
        var passwordStdin = false
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            let password = try PasswordInput.read(fromStdin: passwordStdin, prompt: "New password: ")
            let store = try options.openStore()
            do {
                try await store.setPassword(user: name, password: password)
            } catch StoreError.noSuchUser, StoreError.notFound {
                throw CLIError("No user \(name).")
            }
            print("Password of \(name) changed (running servers accept the old one until their cache expires, at most 5 minutes).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users, one per line.")
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            for user in try await options.openStore().listUsers() { print(user) }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user with all their address books and contacts.")
        @Argument(help: "User name.") var name: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            do {
                try await options.openStore().deleteUser(name: name)
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
