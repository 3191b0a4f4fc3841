import ArgumentParser
import Foundation
import RoloStore

/// `rolo book list|create|delete`: address books of a user.
struct BookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "book", abstract: "List, create and delete a user's address books.",
        subcommands: [List.self, Create.self, Delete.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a user's address books: name, display name, number of cards.")
        @Argument(help: "User name.") var user: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try await options.withStore { store in
                guard try await store.listUsers().contains(user) else { throw CLIError("No user \(user).") }
                for book in try await store.childCollections(owner: user, parentPath: [])
                where book.kind == .addressBook {
                    let count = try await store.listResources(collectionID: book.id).count
                    print([book.path.joined(separator: "/"), book.displayName ?? "", "\(count) cards"]
                        .joined(separator: "\t"))
                }
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an address book.")
        @Argument(help: "User name.") var user: String
        @Argument(help: "Book name (URL segment).") var book: String
        @Option(help: "Display name shown by clients.") var displayName: String?
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try await options.withStore { store in
                guard try await store.listUsers().contains(user) else { throw CLIError("No user \(user).") }
                do {
                    try await store.createCollection(owner: user, path: [book], kind: .addressBook,
                                                     displayName: displayName, description: nil)
                } catch StoreError.alreadyExists {
                    throw CLIError("\(user) already has a collection \(book).")
                } catch StoreError.invalidName(let reason) {
                    throw CLIError("Invalid book name: \(reason)")
                }
                print("Created address book \(user)/\(book).")
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an address book and its cards.")
        @Argument(help: "User name.") var user: String
        @Argument(help: "Book name.") var book: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try await options.withStore { store in
                guard let collection = try await store.collection(owner: user, path: [book]) else {
                    throw CLIError("No address book \(user)/\(book).")
                }
                try await store.deleteCollection(id: collection.id)
                print("Deleted address book \(user)/\(book).")
            }
        }
    }
}
